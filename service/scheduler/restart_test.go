package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
)

func TestRestartKeepsJobs(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	run := h.submit(`{"command":["train"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+run.ID, agenttest.HasReplica(run.ID)), run.ID)
	a.status(agenttest.Running(r))
	queued := h.submit(`{"command":["next"],"gpus":2}`)
	done := h.submit(`{"command":["x"],"gpus":1}`)
	h.cancel(done.ID)
	before := h.job(run.ID)

	h.restart()
	for id, st := range map[string]api.State{run.ID: api.Running, queued.ID: api.Queued, done.ID: api.Cancelled} {
		if got := h.job(id); got.State != st {
			t.Errorf("after restart %s is %s, want %s", id, got.State, st)
		}
	}
	after := h.job(run.ID)
	if strings.Join(after.Alloc, ",") != strings.Join(before.Alloc, ",") || after.Attempt != 1 {
		t.Errorf("running job after restart: %+v, before %+v", after, before)
	}
	if j := h.submit(`{"command":["y"],"gpus":1}`); j.ID != "j4" {
		t.Errorf("id after restart %s, want j4", j.ID)
	}
	// The agent registers again with the replica it runs: same ID in its
	// work, nothing started twice.
	a.register(agenttest.Running(r))
	w := a.waitWork("with "+run.ID, agenttest.HasReplica(run.ID))
	if got := agenttest.FindReplica(w, run.ID); got.ID != r.ID || got.Env["MASTER_PORT"] != r.Env["MASTER_PORT"] {
		t.Errorf("replica after restart %+v, before %+v", got, r)
	}
	// The queued job waits for the held GPUs; the exit is recorded once.
	if q := h.job(queued.ID); q.State != api.Queued {
		t.Errorf("queued job: %+v", q)
	}
	a.status(agenttest.Exited(r, 0))
	a.status(agenttest.Exited(r, 0))
	s := h.waitState(run.ID, api.Succeeded)
	n := 0
	for _, e := range s.Events {
		if e.Event == "succeeded" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d succeeded events: %+v", n, s.Events)
	}
	h.waitState(queued.ID, api.Running)
}

func TestRestartExitWhileDown(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	h.restart()
	// The replica exited while the server was down: the agent reports it
	// when it registers again; the result is recorded and acknowledged.
	a.register(agenttest.Exited(r, 5))
	f := h.waitState(j.ID, api.Failed)
	if f.ExitCode == nil || *f.ExitCode != 5 {
		t.Errorf("job: %+v", f)
	}
	if w := a.work(0, 0); len(w.Acked) != 1 || w.Acked[0] != r.ID {
		t.Errorf("work after the exit: %+v", w)
	}
}

func TestRestartNodeNeverReturns(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) {
		c.HeartbeatInterval, c.HeartbeatTimeout = 100*time.Millisecond, time.Second
	})
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	h.restart()
	if got := h.job(j.ID); got.State != api.Running {
		t.Fatalf("job right after restart: %+v", got)
	}
	f := h.waitState(j.ID, api.Preempted)
	if !strings.Contains(f.Reason, "node n1 lost") || !strings.Contains(f.Reason, "did not register again") {
		t.Errorf("reason %q", f.Reason)
	}
}

// TestPreemptRequeues applies a plan that preempts a running job: its
// replica is stopped, the job is preempted once it is gone and starts
// again as attempt 2.
func TestPreemptRequeues(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	s := h.s
	s.mu.Lock()
	s.apply(engine.Plan{Preempt: []*model.Job{s.tab.Active[j.ID].Model}, Wake: -1}, s.now())
	s.mu.Unlock()
	a.waitWork("without "+j.ID, agenttest.NoReplica(j.ID))
	if got := h.job(j.ID); got.State != api.Running || !strings.Contains(got.Reason, "preempted") {
		t.Fatalf("job being preempted: %+v", got)
	}
	a.status(agenttest.Exited(r, 0)) // a graceful stop: still a preemption
	w := a.waitWork("attempt 2", func(w api.Work) bool {
		x := agenttest.FindReplica(w, j.ID)
		return x != nil && x.ID == "j1.2.0"
	})
	if x := agenttest.FindReplica(w, j.ID); x.Env["GPUSCHED_RESTART_COUNT"] != "1" || x.Env["GPUSCHED_GENERATION"] != "2" {
		t.Errorf("second attempt env: %v", x.Env)
	}
	got := h.job(j.ID)
	kinds := []string{}
	for _, e := range got.Events {
		kinds = append(kinds, e.Event)
	}
	if got.Attempt != 2 || !strings.Contains(strings.Join(kinds, ","), "preempted,started") {
		t.Errorf("job after the restart: attempt %d, events %v", got.Attempt, kinds)
	}
}

// TestRestartWhileCancelling restarts a server while a cancelled job's
// replica is being stopped: the new server waits for the agent to report
// the replica gone.
func TestRestartWhileCancelling(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.agent("a", "v100", 1), h.agent("b", "v100", 1)
	a.register()
	b.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	ra := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	b.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	h.cancel(j.ID)
	h.restart()
	// a still runs its replica; b never started its own.
	a.register(agenttest.Running(ra))
	b.register()
	time.Sleep(100 * time.Millisecond)
	if got := h.job(j.ID); got.State != api.Running {
		t.Fatalf("job after the registrations: %+v", got)
	}
	if w := a.waitWork("without "+j.ID, agenttest.NoReplica(j.ID)); len(w.Replicas) != 0 {
		t.Fatalf("work of a: %+v", w)
	}
	b.waitWork("without "+j.ID, agenttest.NoReplica(j.ID))
	b.status()
	a.status(agenttest.Exited(ra, 143))
	h.waitState(j.ID, api.Cancelled)
}
