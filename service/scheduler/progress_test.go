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

// TestProgress records progress and checkpoints of a job: unknown jobs are
// refused, checkpoints are durable at once (and reach the model), plain
// progress once flushed, and an ended job is a conflict. (package server's
// TestProgressEndpoint checks the same over HTTP, with the bodies it
// refuses.)
func TestProgress(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	_, err := h.s.Progress("j99", api.Progress{Steps: 1})
	wantKind(t, "progress of an unknown job", err, ErrNotFound)
	got, err := h.s.Progress(j.ID, api.Progress{Steps: 40, Checkpoint: true})
	if err != nil || got.Steps != 40 || got.CheckpointSteps != 40 || got.ProgressAt == nil || got.LastCheckpointAt == nil {
		t.Fatalf("job after a checkpoint: %+v %v", got, err)
	}
	if rec, _ := h.stored(j.ID); rec.CheckpointSteps != 40 || rec.LastCheckpointAt == nil {
		t.Errorf("checkpoint not in the store: %+v", rec.Job)
	}
	h.s.mu.Lock()
	ckpt := h.s.tab.Active[j.ID].Model.Checkpoint
	h.s.mu.Unlock()
	if ckpt != model.Time(got.LastCheckpointAt.UnixMilli()) {
		t.Errorf("model checkpoint %d, want %d", ckpt, got.LastCheckpointAt.UnixMilli())
	}
	got, err = h.s.Progress(j.ID, api.Progress{Steps: 55})
	if err != nil || got.Steps != 55 || got.CheckpointSteps != 40 {
		t.Errorf("job after plain progress: %+v %v", got, err)
	}
	if rec, _ := h.stored(j.ID); rec.Steps != 40 {
		t.Errorf("plain progress written at once (steps %d in the store): want it held for %s", rec.Steps, progressPersist)
	}
	h.s.mu.Lock()
	h.s.tab.Active[j.ID].ProgressSaved = time.Now().Add(-progressPersist)
	h.s.mu.Unlock()
	h.s.flushProgress()
	if rec, _ := h.stored(j.ID); rec.Steps != 55 || rec.CheckpointSteps != 40 {
		t.Errorf("after the flush the store has steps %d, checkpoint %d", rec.Steps, rec.CheckpointSteps)
	}
	a.status(agenttest.Exited(r, 0))
	h.waitState(j.ID, api.Succeeded)
	_, err = h.s.Progress(j.ID, api.Progress{Steps: 60})
	wantKind(t, "progress of an ended job", err, ErrConflict)
}

// TestProgressFromAgentAndResume sends progress in status reports, then
// preempts the job: the next attempt gets the checkpoint's steps.
func TestProgressFromAgentAndResume(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	if r.Env["GPUSCHED_CHECKPOINT_STEPS"] != "0" {
		t.Errorf("first attempt: GPUSCHED_CHECKPOINT_STEPS=%q, want 0", r.Env["GPUSCHED_CHECKPOINT_STEPS"])
	}
	t0 := time.Now().Add(-time.Second)
	rs := agenttest.Running(r)
	rs.Progress = &api.ReplicaProgress{Steps: 12, At: t0, CheckpointSteps: 10, CheckpointAt: &t0}
	a.status(rs)
	got := h.job(j.ID)
	if got.Steps != 12 || got.CheckpointSteps != 10 || !got.LastCheckpointAt.Equal(t0.UTC()) {
		t.Fatalf("job after the report: %+v", got)
	}
	older := t0.Add(-time.Minute)
	rs.Progress = &api.ReplicaProgress{Steps: 3, At: older, CheckpointSteps: 2, CheckpointAt: &older}
	a.status(rs) // an old report changes nothing
	if again := h.job(j.ID); again.Steps != 12 || again.CheckpointSteps != 10 {
		t.Errorf("an older report changed the job: %+v", again)
	}
	future := time.Now().Add(time.Hour)
	rs.Progress = &api.ReplicaProgress{Steps: 20, At: future, CheckpointSteps: 20, CheckpointAt: &future}
	a.status(rs)
	if got = h.job(j.ID); got.CheckpointSteps != 20 || got.LastCheckpointAt.After(time.Now()) {
		t.Errorf("a report from a clock ahead: %+v", got)
	}
	s := h.s
	s.mu.Lock()
	s.apply(engine.Plan{Migrate: []engine.Assignment{{Job: s.tab.Active[j.ID].Model}}, Wake: -1}, s.now())
	s.mu.Unlock()
	a.waitWork("without "+j.ID, agenttest.NoReplica(j.ID))
	if got := h.job(j.ID); !strings.Contains(got.Reason, "moved") {
		t.Errorf("job being moved: %+v", got)
	}
	a.status(agenttest.Exited(r, 0))
	w := a.waitWork("attempt 2", func(w api.Work) bool {
		x := agenttest.FindReplica(w, j.ID)
		return x != nil && x.ID == "j1.2.0"
	})
	if x := agenttest.FindReplica(w, j.ID); x.Env["GPUSCHED_CHECKPOINT_STEPS"] != "20" || x.Env["GPUSCHED_RESTART_COUNT"] != "1" {
		t.Errorf("second attempt env: %v", x.Env)
	}
	events := eventText(h.job(j.ID))
	if !strings.Contains(events, "resumes from the checkpoint at step 20") {
		t.Errorf("events: %s", events)
	}
}

// TestNodeLostElasticContinues loses one node of a two-node elastic job
// that keeps its minimum without it: the job continues on the other node
// with a new generation and host list, and succeeds when that replica
// exits 0.
func TestNodeLostElasticContinues(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) {
		c.HeartbeatInterval, c.HeartbeatTimeout = 100*time.Millisecond, time.Second
	})
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 2)
	a.register()
	b.register()
	j := h.submit(`{"command":["x"],"gpus":4,"min_gpus":2,"max_gpus":4}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	if r.HostFile != "n1:2\nn2:2\n" {
		t.Fatalf("host file %q", r.HostFile)
	}
	stop := heartbeats(t, h, "n1", time.Now().Add(8*time.Second))
	defer stop()
	got := h.waitJob(j.ID, "resized", func(j api.Job) bool { return j.Generation == 2 })
	if got.State != api.Running || strings.Join(got.Alloc, ",") != "n1/0,n1/1" || got.Attempt != 1 {
		t.Fatalf("job after losing n2: %+v", got)
	}
	w := a.waitWork("new host list", func(w api.Work) bool {
		x := agenttest.FindReplica(w, j.ID)
		return x != nil && x.HostFile == "n1:2\n"
	})
	if x := agenttest.FindReplica(w, j.ID); x.ID != r.ID {
		t.Errorf("replica %s replaced by %s: want the same replica kept", r.ID, x.ID)
	}
	if ev := eventText(got); !strings.Contains(ev, "replica-lost") || !strings.Contains(ev, "continues on 2 GPUs") {
		t.Errorf("events: %s", ev)
	}
	stop()
	a.status(agenttest.Exited(r, 0))
	if done := h.waitState(j.ID, api.Succeeded); *done.ExitCode != 0 {
		t.Errorf("job: %+v", done)
	}
}

// heartbeats reports node name alive (an empty status) every 50 ms until
// until or until stop is called.
func heartbeats(t *testing.T, h *harness, name string, until time.Time) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	ended := make(chan struct{})
	s := h.s
	go func() {
		defer close(ended)
		for time.Now().Before(until) {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			_, _ = s.Status(name, api.Status{Replicas: []api.ReplicaStatus{}})
		}
	}()
	var once bool
	return func() {
		if !once {
			once = true
			close(done)
			<-ended
		}
	}
}

// eventText joins a job's events as "event: message" lines.
func eventText(j api.Job) string {
	var b strings.Builder
	for _, e := range j.Events {
		b.WriteString(e.Event + ": " + e.Message + "\n")
	}
	return b.String()
}
