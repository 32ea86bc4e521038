package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
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

// TestReplicaLostElasticRankZeroRequeued: an elastic job that would keep its
// minimum without a lost replica is still queued again, not shrunk, when
// that replica was its node rank 0 — the one that hosts its coordination
// (torchrun's rendezvous): the survivor is stopped, and the job starts
// again as attempt 2.
func TestReplicaLostElasticRankZeroRequeued(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 2)
	a.register()
	b.register()
	j := h.submit(`{"command":["x"],"gpus":4,"min_gpus":2,"max_gpus":4}`)
	r1 := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	r2 := *agenttest.FindReplica(b.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	if r1.Env["NODE_RANK"] != "0" {
		t.Fatalf("replica on n1 has NODE_RANK %q, want 0", r1.Env["NODE_RANK"])
	}
	a.status(lostStatus(r1))
	b.waitWork("the survivor stopped", func(w api.Work) bool { return agenttest.FindReplica(w, j.ID) == nil })
	b.status(agenttest.Exited(r2, 143))
	got := h.waitJob(j.ID, "attempt 2", func(j api.Job) bool { return j.Attempt == 2 && j.State == api.Running })
	if got.ExitCode != nil {
		t.Errorf("job after the loss: %+v", got)
	}
	ev := eventText(got)
	for _, want := range []string{"replica " + r1.ID + " on node n1 lost", "with node rank 0, which coordinates the job: queued again to restart as a new attempt"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, ev)
		}
	}
	if strings.Contains(ev, "continues on") {
		t.Errorf("the job shrank without its node rank 0:\n%s", ev)
	}
}

// TestFailureAfterSilentNodeRequeued: a two-node job's replica on n2 fails
// after n1 went silent (torchrun or NCCL on n2 losing its peer when n1
// died); when n1 is declared lost, the failure is put down to the loss and
// the job is queued again, not failed.
func TestFailureAfterSilentNodeRequeued(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) {
		c.HeartbeatInterval, c.HeartbeatTimeout = 100*time.Millisecond, time.Second
	})
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 2)
	a.register()
	b.register()
	j := h.submit(`{"command":["x"],"gpus":4}`)
	a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	r2 := *agenttest.FindReplica(b.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	stop := heartbeats(t, h, "n2", time.Now().Add(8*time.Second)) // n1 falls silent
	defer stop()
	time.Sleep(300 * time.Millisecond)
	b.status(agenttest.Exited(r2, 1))
	got := h.waitJob(j.ID, "queued again", func(j api.Job) bool { return j.State == api.Queued || j.State == api.Preempted })
	if got.ExitCode != nil || got.Attempt != 1 {
		t.Errorf("job after n1's loss: %+v", got)
	}
	ev := eventText(got)
	for _, want := range []string{"replica-exited: " + r2.ID + " on n2 exited with code 1", "node n1 lost (no heartbeat", "after its last heartbeat followed from it: queued again to restart as a new attempt"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, ev)
		}
	}
}
