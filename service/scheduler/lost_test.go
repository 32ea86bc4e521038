package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// lostStatus is how an agent reports a replica whose exit status is
// unknown (its shim died).
func lostStatus(r api.Replica) api.ReplicaStatus {
	st := agenttest.Exited(r, -1)
	st.Lost, st.Error = true, "lost: its shim is gone and recorded no exit status"
	return st
}

// TestReplicaLostRequeued: a rigid job's replica reported lost by its
// agent (a live node) is handled like a node loss: the job is queued again
// — preempted, not failed — and starts as attempt 2, on the same node,
// from its checkpoint.
func TestReplicaLostRequeued(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	rs := agenttest.Running(r)
	rs.Progress = &api.ReplicaProgress{Steps: 30, CheckpointSteps: 20, CheckpointAt: ptr(time.Now())}
	a.status(rs)
	if w := a.status(lostStatus(r)); !strings.Contains(strings.Join(w.Acked, ","), r.ID) {
		t.Errorf("the lost replica is not acknowledged: %+v", w)
	}
	w := a.waitWork("attempt 2", func(w api.Work) bool {
		x := agenttest.FindReplica(w, j.ID)
		return x != nil && x.ID == j.ID+".2.0"
	})
	x := agenttest.FindReplica(w, j.ID)
	if x.Env["GPUSCHED_RESTART_COUNT"] != "1" || x.Env["GPUSCHED_CHECKPOINT_STEPS"] != "20" {
		t.Errorf("attempt 2 env: %v", x.Env)
	}
	got := h.job(j.ID)
	if got.State != api.Running || got.Attempt != 2 || got.ExitCode != nil {
		t.Errorf("job after the loss: %+v", got)
	}
	ev := eventText(got)
	for _, want := range []string{"replica-lost", "replica " + r.ID + " on node n1 lost (its shim is gone",
		"queued again to restart as a new attempt from its last checkpoint at step 20", "preempted"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, ev)
		}
	}
	if n := h.node("n1"); n.State != api.NodeReady {
		t.Errorf("node %+v, want it ready: only a replica was lost", n)
	}
}

// TestReplicaLostElasticShrinks: an elastic job that keeps its minimum
// without a lost replica continues on the other node, and the lost
// replica's GPUs, on a node that stays, are free for another job at once.
func TestReplicaLostElasticShrinks(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 2)
	a.register()
	b.register()
	j := h.submit(`{"command":["x"],"gpus":4,"min_gpus":2,"max_gpus":4}`)
	a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	r2 := *agenttest.FindReplica(b.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	b.status(lostStatus(r2))
	got := h.waitJob(j.ID, "resized", func(j api.Job) bool { return j.Generation == 2 })
	if got.State != api.Running || strings.Join(got.Alloc, ",") != "n1/0,n1/1" || got.Attempt != 1 {
		t.Fatalf("job after losing its replica on n2: %+v", got)
	}
	if ev := eventText(got); !strings.Contains(ev, "replica "+r2.ID+" on node n2 lost") || !strings.Contains(ev, "continues on 2 GPUs") {
		t.Errorf("events: %s", ev)
	}
	k := h.submit(`{"command":["y"],"gpus":2}`)
	if run := h.waitState(k.ID, api.Running); strings.Join(run.Alloc, ",") != "n2/0,n2/1" {
		t.Errorf("new job on %v, want the lost replica's GPUs n2/0,n2/1", run.Alloc)
	}
}
