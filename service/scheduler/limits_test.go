package scheduler

import (
	"maps"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

func TestReplicaLimits(t *testing.T) {
	for _, tt := range []struct {
		name string
		reqs model.Resources
		gpus int
		want map[string]string
	}{
		{"asks nothing", nil, 2, nil},
		{"CPU and memory per GPU, times the replica's GPUs", model.Resources{model.ResourceCPU: 1500, model.ResourceMemory: 1 << 30},
			2, map[string]string{"cpu": "3", "memory": "2Gi"}},
		{"named resources are no cgroup limits", model.Resources{"rdma/hca": 1, model.ResourceMemory: 256 << 20}, 1,
			map[string]string{"memory": "256Mi"}},
		{"only named resources", model.Resources{"rdma/hca": 1}, 4, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := ledger.NewRecord("j1", api.JobSpec{Command: []string{"true"}, GPUs: tt.gpus}, tt.reqs, time.Unix(0, 0))
			got := (&Scheduler{}).replicaLimits(&rec, tt.gpus)
			if !maps.Equal(got, tt.want) {
				t.Errorf("replicaLimits = %v, want %v", got, tt.want)
			}
		})
	}
}
