package scheduler

import (
	"maps"
	"testing"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// TestTorchElasticEnv: an elastic job's replicas get torchrun's elastic
// settings (c10d rendezvous at node rank 0's address and the job's port,
// hosted by node rank 0's torchrun, 1 to max_gpus nodes), each
// overridable by the spec's env; a rigid job's replicas keep the static
// rendezvous of the membership.
func TestTorchElasticEnv(t *testing.T) {
	h := newHarness(t, fulfillment)
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 1)
	a.register()
	b.register()
	e := h.submit(`{"command":["torchrun","train.py"],"gpus":1,"min_gpus":1,"max_gpus":4,"env":{"PET_MAX_RESTARTS":"7"}}`)
	h.waitState(e.ID, api.Running)
	ra := *agenttest.FindReplica(a.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	rb := *agenttest.FindReplica(b.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	// The job starts with its minimum on n2 (the placer's best fit for 1
	// GPU), node rank 0, and grows onto n1.
	common := map[string]string{"PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": "n2.example:" + rb.Env["MASTER_PORT"],
		"PET_RDZV_ID": "j1", "PET_NNODES": "1:4", "PET_MAX_RESTARTS": "7", "PET_MONITOR_INTERVAL": "1", "NNODES": "2"}
	checkReplica(t, rb, "j1.1.0", with(common, "PET_RDZV_CONF", "last_call_timeout=3,is_host=1", "PET_NPROC_PER_NODE", "1"))
	checkReplica(t, ra, "j1.1.1", with(common, "PET_RDZV_CONF", "last_call_timeout=3,is_host=0", "PET_NPROC_PER_NODE", "2"))
	a.status(agenttest.Exited(ra, 0))
	b.status(agenttest.Exited(rb, 0))
	h.waitState(e.ID, api.Succeeded)

	rigid := h.submit(`{"command":["torchrun","train.py"],"gpus":2}`)
	h.waitState(rigid.ID, api.Running)
	r := *agenttest.FindReplica(a.waitWork("with "+rigid.ID, agenttest.HasReplica(rigid.ID)), rigid.ID)
	checkReplica(t, r, "j2.1.0", map[string]string{"PET_NNODES": "1", "PET_NODE_RANK": "0", "PET_MASTER_ADDR": "n1.example"})
	for _, k := range []string{"PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_MAX_RESTARTS", "PET_RDZV_CONF"} {
		if v, ok := r.Env[k]; ok {
			t.Errorf("rigid job's replica has %s=%q", k, v)
		}
	}
}

// with returns a copy of m with the key-value pairs kv added.
func with(m map[string]string, kv ...string) map[string]string {
	out := maps.Clone(m)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
