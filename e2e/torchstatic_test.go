package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestTorchStaticPreempted runs examples/pytorch/static.yaml, a rigid
// 2-GPU job whose `torchrun train.py` has no flags (the PET_* variables
// of its membership set up the static rendezvous), on two 1-GPU agents
// under tiresias. A newcomer outranks it (tiresias's first queue: less
// attained service) and preempts it: every process gets SIGTERM, the
// workers finish their step, rank 0 saves the checkpoint and reports it
// through $GPUSCHED_PROGRESS_FILE, all within the grace period. When the
// newcomer ends, the job starts again as attempt 2, resumes at exactly
// the reported step (GPUSCHED_CHECKPOINT_STEPS) with world size 2, and
// finishes with the reference's weights.
func TestTorchStaticPreempted(t *testing.T) {
	python := torchPython(t)
	t.Parallel()
	const steps = 120
	ref := torchReference(t, python, steps)
	cfg := policyConfig(t, "policy: tiresias\ntiresias:\n  thresholds_gpu_s: [1]\n")
	c := newClusterWith(t, []string{"--config", cfg}, torchAgent, "alpha", "beta")
	dir := t.TempDir()
	logf, res := filepath.Join(dir, "log"), filepath.Join(dir, "result.json")
	id := strings.TrimSpace(mustCLI(t, c.url, "submit", torchSpec(t, "static", dir, nil,
		"--steps", strconv.Itoa(steps), "--step-ms", "20", "--ckpt-every", "10", "--events", logf, "--result", res)))
	t.Cleanup(func() { logTorchJob(t, c.url, id, logf) })
	if j := waitState(t, c.url, id, 20*time.Second, api.Running); len(j.Alloc) != 2 {
		t.Fatalf("the static job runs on %v, want 2 GPUs", j.Alloc)
	}
	eventually(t, 90*time.Second, "a checkpoint reported at step 20", func() bool {
		return job(t, c.url, id).CheckpointSteps >= 20
	})
	next := filepath.Join(dir, "newcomer-go")
	newcomer := submit(t, c.url, "newcomer", 1, gate(next))
	waitState(t, c.url, newcomer, 60*time.Second, api.Running)
	j := waitState(t, c.url, id, 10*time.Second, api.Preempted)
	stop := torchStop(t, torchLog(t, logf))
	if j.CheckpointSteps != int64(stop.Step) {
		t.Errorf("checkpoint reported at step %d, want the step rank 0 stopped at, %d", j.CheckpointSteps, stop.Step)
	}
	stopping, _ := event(t, j, "stopping", 0)
	if took := stop.time().Sub(stopping.Time); took > time.Duration(j.GracePeriodS)*time.Second {
		t.Errorf("rank 0 saved %v after the preemption, beyond the grace period of %d s", took, j.GracePeriodS)
	}
	if strings.Contains(mustCLI(t, c.url, "job", id), "SIGKILL") {
		t.Errorf("a replica was killed after the grace period")
	}
	touch(t, next)
	done := waitState(t, c.url, id, 120*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 2 {
		t.Fatalf("the static job ended %s after %d attempts: %s", done.State, done.Attempt, done.Reason)
	}
	resumed := 0
	for _, e := range torchLog(t, logf) {
		if e.Event == "start" && e.time().After(stop.time()) {
			resumed++
			if e.Step != stop.Step || e.CheckpointSteps != stop.Step || e.World != 2 {
				t.Errorf("attempt 2's rank %d started at step %d (GPUSCHED_CHECKPOINT_STEPS %d), world size %d; "+
					"want step %d, world size 2", e.Rank, e.Step, e.CheckpointSteps, e.World, stop.Step)
			}
		}
	}
	if resumed != 2 {
		t.Errorf("%d workers started after the preemption, want 2", resumed)
	}
	checkTorchResult(t, readTorchResult(t, res), ref, 2)
	t.Logf("preempted at step %d (checkpoint saved %v after the decision); resumed there as attempt 2",
		stop.Step, stop.time().Sub(stopping.Time).Round(time.Millisecond))
}

// torchStop returns rank 0's one stop on SIGTERM in log.
func torchStop(t testing.TB, log []torchEvent) torchEvent {
	t.Helper()
	var stops []torchEvent
	for _, e := range log {
		if e.Event == "stop" && e.Rank == 0 {
			stops = append(stops, e)
		}
	}
	if len(stops) != 1 || !stops[0].Signalled {
		t.Fatalf("rank 0's stops: %+v, want one, on SIGTERM", stops)
	}
	return stops[0]
}
