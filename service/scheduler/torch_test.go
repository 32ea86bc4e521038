package scheduler

import (
	"testing"

	"github.com/gpusched/gpusched/internal/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// TestTorchElasticEnv: an elastic job's replicas get torchrun's elastic
// settings (c10d rendezvous at node rank 0's address and the job's port,
// 1 to max_gpus nodes), each overridable by the spec's env; a rigid job's
// replicas keep the static rendezvous of the membership.
func TestTorchElasticEnv(t *testing.T) {
	h := newHarness(t, fulfillment)
	a := h.agent("n1", "v100", 2)
	a.register()
	e := h.submit(`{"command":["torchrun","train.py"],"gpus":1,"min_gpus":1,"max_gpus":4,"env":{"PET_RDZV_CONF":"last_call_timeout=7"}}`)
	h.waitState(e.ID, api.Running)
	r := *agenttest.FindReplica(a.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	port := r.Env["MASTER_PORT"]
	checkReplica(t, r, "j1.1.0", map[string]string{"PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": "n1.example:" + port,
		"PET_RDZV_ID": "j1", "PET_NNODES": "1:4", "PET_MAX_RESTARTS": "100", "PET_MONITOR_INTERVAL": "1",
		"PET_RDZV_CONF": "last_call_timeout=7", "PET_NPROC_PER_NODE": "2", "NNODES": "1"})
	a.status(agenttest.Exited(r, 0))
	h.waitState(e.ID, api.Succeeded)

	rigid := h.submit(`{"command":["torchrun","train.py"],"gpus":2}`)
	h.waitState(rigid.ID, api.Running)
	r = *agenttest.FindReplica(a.waitWork("with "+rigid.ID, agenttest.HasReplica(rigid.ID)), rigid.ID)
	checkReplica(t, r, "j2.1.0", map[string]string{"PET_NNODES": "1", "PET_NODE_RANK": "0", "PET_MASTER_ADDR": "n1.example"})
	for _, k := range []string{"PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_MAX_RESTARTS", "PET_RDZV_CONF"} {
		if v, ok := r.Env[k]; ok {
			t.Errorf("rigid job's replica has %s=%q", k, v)
		}
	}
}
