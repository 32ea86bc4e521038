package scheduler

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
)

func TestAgentRunsJobs(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	w0 := a.work(0, 0)
	if len(w0.Replicas) != 0 {
		t.Fatalf("fresh node has work: %+v", w0)
	}
	// A long-poll waiting on the current version wakes up on a submission.
	got := make(chan api.Work, 1)
	failed := make(chan error, 1)
	go func() {
		w, err := h.s.Work(context.Background(), "n1", w0.Version, 10*time.Second)
		if err != nil {
			failed <- err
			return
		}
		got <- w
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	j := h.submit(`{"command":["python","train.py"],"env":{"MASTER_PORT":"1","MINE":"x"},"gpus":2}`)
	var w api.Work
	select {
	case w = <-got:
	case err := <-failed:
		t.Fatalf("long-poll: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("long-poll did not wake up on the submission")
	}
	if time.Since(start) > 2*time.Second || w.Version <= w0.Version || len(w.Replicas) != 1 {
		t.Fatalf("work after submit (%s): %+v", time.Since(start), w)
	}
	// The job is recorded running before the agent learns of it.
	if rec, _ := h.stored(j.ID); rec.State != api.Running || len(rec.Replicas) != 1 {
		t.Fatalf("store when the work arrived: %+v", rec)
	}
	r := w.Replicas[0]
	checkReplica(t, r, "j1.1.0", map[string]string{"MASTER_ADDR": "n1.example", "WORLD_SIZE": "2", "NNODES": "1",
		"NODE_RANK": "0", "LOCAL_WORLD_SIZE": "2", "CUDA_VISIBLE_DEVICES": "0,1", "GPUSCHED_JOB_ID": "j1",
		"GPUSCHED_GENERATION": "1", "GPUSCHED_RESTART_COUNT": "0", "MINE": "x"})
	if r.HostFile != "n1:2\n" || r.GracePeriodS != 30 || strings.Join(r.Command, " ") != "python train.py" {
		t.Errorf("replica: %+v", r)
	}
	running := h.job(j.ID)
	if running.State != api.Running || strings.Join(running.Alloc, ",") != "n1/0,n1/1" || running.Attempt != 1 || running.StartedAt == nil {
		t.Errorf("running job: %+v", running)
	}
	a.applied = w.Version
	if w := a.status(runningStatus(r)); len(w.Replicas) != 1 || len(w.Acked) != 0 {
		t.Errorf("status while running: %+v", w)
	}
	w = a.status(agenttest.Exited(r, 0))
	if len(w.Acked) != 1 || w.Acked[0] != r.ID || len(w.Replicas) != 0 {
		t.Fatalf("status after the exit: %+v", w)
	}
	done := h.waitState(j.ID, api.Succeeded)
	if done.ExitCode == nil || *done.ExitCode != 0 || done.FinishedAt == nil || len(done.Alloc) != 0 {
		t.Errorf("succeeded job: %+v", done)
	}
	// A second report of the same exit is acknowledged and changes nothing.
	if w := a.status(agenttest.Exited(r, 1)); len(w.Acked) != 1 {
		t.Errorf("repeated exit not acknowledged: %+v", w)
	}
	if again := h.job(j.ID); again.State != api.Succeeded || len(again.Events) != len(done.Events) {
		t.Errorf("repeated exit changed the job: %+v", again)
	}
}

func runningStatus(r api.Replica) api.ReplicaStatus { return agenttest.Running(r) }

func checkReplica(t *testing.T, r api.Replica, id string, env map[string]string) {
	t.Helper()
	if r.ID != id {
		t.Errorf("replica ID %s, want %s", r.ID, id)
	}
	for k, v := range env {
		if r.Env[k] != v {
			t.Errorf("replica %s: %s=%q, want %q", r.ID, k, r.Env[k], v)
		}
	}
	if p, err := strconv.Atoi(r.Env["MASTER_PORT"]); err != nil || p < settings.DefaultPortBase || p >= settings.DefaultPortBase+settings.DefaultPortRange {
		t.Errorf("replica %s: MASTER_PORT %q outside the range", r.ID, r.Env["MASTER_PORT"])
	}
}

func TestJobFailsWithExitCode(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["false"],"gpus":1}`)
	w := a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	w = a.status(agenttest.Exited(*agenttest.FindReplica(w, j.ID), 3))
	if len(w.Acked) != 1 {
		t.Fatalf("exit not acknowledged: %+v", w)
	}
	f := h.waitState(j.ID, api.Failed)
	if f.ExitCode == nil || *f.ExitCode != 3 || !strings.Contains(f.Reason, "code 3") {
		t.Errorf("failed job: %+v", f)
	}
	// A replica that cannot start fails the job with its error.
	j2 := h.submit(`{"command":["/nonexistent"],"gpus":1}`)
	w = a.waitWork("with "+j2.ID, agenttest.HasReplica(j2.ID))
	st := agenttest.Exited(*agenttest.FindReplica(w, j2.ID), -1)
	st.Error = "exec: no such file"
	a.status(st)
	f2 := h.waitState(j2.ID, api.Failed)
	if f2.ExitCode == nil || *f2.ExitCode != -1 || !strings.Contains(f2.Reason, "no such file") {
		t.Errorf("job whose replica could not start: %+v", f2)
	}
}

func TestMultiNodeJob(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.agent("a", "v100", 2), h.agent("b", "v100", 2)
	a.register()
	b.register()
	j := h.submit(`{"command":["torchrun","train.py"],"gpus":4}`)
	wa := a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	wb := b.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	ra, rb := *agenttest.FindReplica(wa, j.ID), *agenttest.FindReplica(wb, j.ID)
	master := ra
	if ra.Env["NODE_RANK"] != "0" {
		master = rb
	}
	for _, r := range []api.Replica{ra, rb} {
		if r.Env["WORLD_SIZE"] != "4" || r.Env["NNODES"] != "2" || r.Env["MASTER_ADDR"] != master.Env["MASTER_ADDR"] ||
			r.Env["MASTER_PORT"] != master.Env["MASTER_PORT"] || r.HostFile != master.HostFile {
			t.Errorf("replica %s env: %v", r.ID, r.Env)
		}
	}
	if master.ID != "j1.1.0" || strings.Count(master.HostFile, "\n") != 2 {
		t.Errorf("master replica %s, host file %q", master.ID, master.HostFile)
	}
	// Rank 1 fails: the job stops its other replica, then fails with code 7.
	other, failing, otherAgent, failingAgent := ra, rb, a, b
	if rb.ID == master.ID {
		other, failing, otherAgent, failingAgent = rb, ra, b, a
	}
	failingAgent.status(agenttest.Exited(failing, 7))
	otherAgent.waitWork("without "+j.ID, agenttest.NoReplica(j.ID))
	if mid := h.job(j.ID); mid.State != api.Running || !strings.Contains(mid.Reason, "code 7") {
		t.Fatalf("job while its other replica stops: %+v", mid)
	}
	st := agenttest.Exited(other, 143)
	st.Signal = "SIGTERM"
	otherAgent.status(st)
	f := h.waitState(j.ID, api.Failed)
	if f.ExitCode == nil || *f.ExitCode != 7 {
		t.Errorf("failed job: %+v", f)
	}
}

func TestCancelRunningJob(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["sleep","1000"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	a.status(agenttest.Running(r))
	c := h.cancel(j.ID)
	if c.State != api.Running || !strings.Contains(c.Reason, "cancel") {
		t.Fatalf("cancel of a running job: %+v", c)
	}
	a.waitWork("without "+j.ID, agenttest.NoReplica(j.ID))
	// The GPUs stay held until the replica is gone.
	j2 := h.submit(`{"command":["true"],"gpus":1}`)
	time.Sleep(100 * time.Millisecond)
	if q := h.job(j2.ID); q.State != api.Queued {
		t.Fatalf("a job started on GPUs still held by a cancelled replica: %+v", q)
	}
	h.cancel(j.ID)
	a.status(agenttest.Running(r)) // still stopping
	if q := h.job(j.ID); q.State != api.Running {
		t.Fatalf("job cancelled while its replica still runs: %+v", q)
	}
	st := agenttest.Exited(r, -1)
	st.Signal = "SIGTERM"
	a.status(st)
	if c := h.waitState(j.ID, api.Cancelled); c.FinishedAt == nil || c.Reason != "cancelled by the user" {
		t.Errorf("cancelled job: %+v", c)
	}
	h.waitState(j2.ID, api.Running)
}

func TestCancelBeforeTheReplicaStarted(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["sleep","1000"],"gpus":1}`)
	a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	h.cancel(j.ID)
	// The agent applies the work without the replica and never ran it: a
	// report of that version that does not list it ends the job.
	a.waitWork("without "+j.ID, agenttest.NoReplica(j.ID))
	a.status()
	h.waitState(j.ID, api.Cancelled)
}

// TestRegisterRejects refuses invalid registrations, naming the field, and
// requests of nodes that are not registered (package server's test of the
// same checks the HTTP answers).
func TestRegisterRejects(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		name string
		reg  api.Register
		want string
	}{
		{"two types", api.Register{Name: "n", GPUs: []api.GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "k80"}}}, "gpus"},
		{"no GPUs", api.Register{Name: "n"}, "gpus"},
		{"same index twice", api.Register{Name: "n", GPUs: []api.GPU{{Index: 0, Type: "v100"}, {Index: 0, Type: "v100"}}}, "gpus"},
		{"bad name", api.Register{Name: "a:b", GPUs: []api.GPU{{Index: 0, Type: "v100"}}}, "name"},
		{"empty name", api.Register{GPUs: []api.GPU{{Index: 0, Type: "v100"}}}, "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.s.Register(tc.reg)
			fe, ok := errors.AsType[*api.FieldError](err)
			if !ok || fe.Field != tc.want {
				t.Errorf("error %v, want an *api.FieldError naming %q", err, tc.want)
			}
		})
	}
	if nodes := h.s.Nodes(); len(nodes) != 0 {
		t.Errorf("rejected registrations left nodes: %+v", nodes)
	}
	_, err := h.s.Status("ghost", api.Status{})
	wantKind(t, "status of an unknown node", err, ErrNotRegistered)
	_, err = h.s.Logs().Append("ghost", api.LogChunk{Replica: "j1.1.0", Job: "j1"})
	wantKind(t, "log of an unknown node", err, ErrNotRegistered)
	_, err = h.s.Work(context.Background(), "ghost", 0, 0)
	wantKind(t, "work of an unknown node", err, ErrNotRegistered)
	wantKind(t, "work of an unknown node", err, ErrNotFound)
}

func TestNeverFitsStaysQueued(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("a", "v100", 4).register()
	j := h.submit(`{"command":["x"],"gpus":8}`)
	q := h.waitJob(j.ID, "a reason", func(j api.Job) bool { return strings.Contains(j.Reason, "does not fit") })
	if q.State != api.Queued {
		t.Fatalf("job that does not fit: %+v", q)
	}
	h.agent("b", "v100", 4).register()
	r := h.waitState(j.ID, api.Running)
	if len(r.Alloc) != 8 {
		t.Errorf("alloc %v", r.Alloc)
	}
	nodes := h.s.Nodes()
	if len(nodes) != 2 || nodes[0].GPUsUsed != 4 || nodes[0].State != api.NodeReady ||
		len(nodes[0].Replicas) != 1 {
		t.Errorf("nodes: %+v", nodes)
	}
}

// TestNodeLost: a rigid job whose node stops reporting is queued again as
// preempted; when the node registers again, still running the old replica,
// the job starts there as a new attempt and the stale replica is not in the
// work (so its agent stops it).
func TestNodeLost(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) {
		c.HeartbeatInterval, c.HeartbeatTimeout = 100*time.Millisecond, time.Second
	})
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	p := h.waitState(j.ID, api.Preempted)
	if !strings.Contains(p.Reason, "node n1 lost") || p.ExitCode != nil || p.FinishedAt != nil {
		t.Errorf("job of the lost node: %+v", p)
	}
	if st := h.node("n1").State; st != api.NodeDown {
		t.Errorf("node state %s", st)
	}
	_, err := h.s.Status("n1", api.Status{})
	wantKind(t, "status of a down node", err, ErrNotRegistered)
	// It registers again, still running the replica of the first attempt:
	// that replica is not in its work, so the agent stops it.
	a.register(agenttest.Running(api.Replica{ID: "j1.1.0", Job: j.ID}))
	w := a.waitWork("attempt 2", func(w api.Work) bool {
		r := agenttest.FindReplica(w, j.ID)
		return r != nil && r.ID == "j1.2.0"
	})
	if len(w.Replicas) != 1 || w.Replicas[0].Env["GPUSCHED_RESTART_COUNT"] != "1" {
		t.Errorf("work of the returning node: %+v", w)
	}
	if r := h.job(j.ID); r.State != api.Running || r.Attempt != 2 {
		t.Errorf("job after the node returned: %+v", r)
	}
}

// TestHeteroUsesTheMatrix places a job with a Gavel model name on the
// faster GPU type with the hetero placer.
func TestHeteroUsesTheMatrix(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) { c.Names.Placer = "hetero" })
	h.agent("k", "k80", 4).register()
	h.agent("v", "v100", 4).register()
	for _, m := range []string{"ResNet-50 (batch size 64)", "a model the matrix does not know"} {
		j := h.submit(`{"command":["x"],"gpus":2,"model":"` + m + `"}`)
		r := h.waitState(j.ID, api.Running)
		if !strings.HasPrefix(r.Alloc[0], "v/") {
			t.Errorf("%s on %v, want the v100 node", m, r.Alloc)
		}
	}
}
