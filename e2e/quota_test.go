package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestQuotaReclaim (issue 18): `gpusched dev` with 4 V100s and two queues
// of 2 guaranteed GPUs each. Queue a's two 2-GPU jobs borrow b's idle
// quota; when b submits a 2-GPU job, within one scheduling round plus the
// victim's grace period a is back at its quota — the victim is the job
// with the newest checkpoint (the least work lost) — and b's job runs.
func TestQuotaReclaim(t *testing.T) {
	root := t.TempDir()
	addr := freeAddr(t)
	url := "http://" + addr
	cfg := policyConfig(t, "queues:\n"+
		"  - name: a\n    quota: {v100: 2}\n"+
		"  - name: b\n    quota: {v100: 2}\n")
	start(t, "dev", "dev", "--listen", addr, "--data", filepath.Join(root, "dev"), "--gpus", "v100=4", "--config", cfg)
	waitHealthy(t, url)
	oldState, newState := stateDir(t, root, "old"), stateDir(t, root, "new")
	// old checkpoints at steps 5 and 10, then never again; fresh keeps
	// checkpointing every 5 steps: it loses the least work when stopped.
	old := submitCkpt(t, url, ckptJob{name: "old", gpus: 2, grace: "2s", state: oldState, steps: 100000, stepMS: 20,
		ckptEvery: 5, until: 10, extra: []string{"--queue", "a"}})
	fresh := submitCkpt(t, url, ckptJob{name: "fresh", gpus: 2, grace: "2s", state: newState, steps: 100000, stepMS: 20,
		ckptEvery: 5, extra: []string{"--queue", "a"}})
	waitState(t, url, old, 20*time.Second, api.Running)
	waitState(t, url, fresh, 20*time.Second, api.Running)
	eventually(t, 20*time.Second, "checkpoints: old's at step 10, fresh's newer", func() bool {
		o, f := job(t, url, old), job(t, url, fresh)
		return o.CheckpointSteps == 10 && f.CheckpointSteps >= 40 && f.LastCheckpointAt != nil && o.LastCheckpointAt != nil &&
			f.LastCheckpointAt.Sub(*o.LastCheckpointAt) > 500*time.Millisecond
	})
	if q := queue(t, url, "a"); q.Used["v100"] != 4 || q.Borrowed != 2 {
		t.Fatalf("queue a before b's job: %+v, want 4 V100s used, 2 borrowed", q)
	}
	submitted := time.Now()
	b := strings.TrimSpace(mustCLI(t, url, "submit", "--name", "b-job", "--gpus", "2", "--queue", "b", "--", "sleep", "30"))
	nb := waitState(t, url, b, 10*time.Second, api.Running)
	took := nb.StartedAt.Sub(submitted)
	t.Logf("b's job started %v after its submission (round 1 s + grace 2 s)", took)
	if took > 1*time.Second+2*time.Second+time.Second {
		t.Errorf("b's job started %v after its submission, want within a round (1 s) and the grace period (2 s)", took)
	}
	nf, no := job(t, url, fresh), job(t, url, old)
	if no.State != api.Running || (nf.State != api.Preempted && nf.State != api.Queued) {
		t.Fatalf("after the reclaim: old %s, fresh %s; want old running and fresh (newest checkpoint) preempted", no.State, nf.State)
	}
	stopping, _ := event(t, nf, "stopping", 0)
	if !strings.Contains(stopping.Message, "reclaimed") {
		t.Errorf("fresh's stopping event: %q", stopping.Message)
	}
	if len(ckptLog(t, newState, "term")) != 1 || len(ckptLog(t, oldState, "term")) != 0 {
		t.Errorf("SIGTERMs: fresh %d, old %d", len(ckptLog(t, newState, "term")), len(ckptLog(t, oldState, "term")))
	}
	if qa, qb := queue(t, url, "a"), queue(t, url, "b"); qa.Used["v100"] != 2 || qa.Borrowed != 0 || qb.Used["v100"] != 2 {
		t.Errorf("after the reclaim: queue a %+v, queue b %+v", qa, qb)
	}
	out := mustCLI(t, url, "queues")
	for _, want := range []string{"NAME", "a ", "b ", "v100=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("gpusched queues lacks %q:\n%s", want, out)
		}
	}
	mustCLI(t, url, "cancel", old)
	mustCLI(t, url, "cancel", fresh)
	mustCLI(t, url, "cancel", b)
}

// queue returns one queue of `gpusched queues -o json`.
func queue(t testing.TB, url, name string) api.QueueStatus {
	t.Helper()
	var l api.QueueList
	if err := json.Unmarshal([]byte(mustCLI(t, url, "queues", "-o", "json")), &l); err != nil {
		t.Fatal(err)
	}
	for _, q := range l.Queues {
		if q.Name == name {
			return q
		}
	}
	t.Fatalf("no queue %s in %+v", name, l)
	return api.QueueStatus{}
}
