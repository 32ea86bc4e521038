package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// torchResizeBound bounds one resize of the elastic PyTorch job, from the
// server's decision to training at the new size. With torchrun's own
// defaults (a 30 s last call, a 5 s monitor interval, and 15 s before its
// rendezvous drops a node that left) a shrink takes more than 45 s; with
// the settings gpusched gives elastic jobs, about 15 to 20 s.
const torchResizeBound = 40 * time.Second

// TestTorchElastic runs examples/pytorch/elastic.yaml (1 to 2 GPUs,
// `torchrun train.py` with no flags: gpusched's PET_* variables make it
// elastic) on two 1-GPU agents under the fulfillment scaler. It starts on
// one node beside a rigid job; grows to both when that job ends; shrinks
// for an arriving rigid job and grows back when it ends (-torch.cycles
// times); and continues on one node when the other node's agent and
// replica are killed. After each change torchrun re-forms the group and
// the workers resume from the job's own checkpoint (saved after every
// step) with the new world size. The job finishes as one attempt, with
// every step in its final state once (its weights are the reference's),
// and no step done twice except the one in flight when the node died.
func TestTorchElastic(t *testing.T) {
	python := torchPython(t)
	t.Parallel()
	began := time.Now()
	steps := 260 + 120**torchCycles
	ref := torchReference(t, python, steps)
	cfg := policyConfig(t, "scaler: fulfillment\nfulfillment: {max_load: 1}\n")
	c := newClusterWith(t, []string{"--config", cfg, "--heartbeat-timeout", heartbeatTimeout.String()}, torchAgent,
		"alpha", "beta")
	dir := t.TempDir()
	logf, res := filepath.Join(dir, "log"), filepath.Join(dir, "result.json")
	blocker := submit(t, c.url, "blocker", 1, gate(filepath.Join(dir, "blocker-go")))
	waitState(t, c.url, blocker, 20*time.Second, api.Running)
	id := strings.TrimSpace(mustCLI(t, c.url, "submit", torchSpec(t, "elastic", dir,
		"--steps", strconv.Itoa(steps), "--log", logf, "--result", res)))
	t.Cleanup(func() { logTorchJob(t, c.url, id, logf) })
	if j := waitState(t, c.url, id, 20*time.Second, api.Running); len(j.Alloc) != 1 {
		t.Fatalf("the elastic job started on %v, want the 1 GPU the blocker leaves", j.Alloc)
	}
	eventually(t, 60*time.Second, "training at world size 1", func() bool {
		return slices.ContainsFunc(torchLog(t, logf), func(e torchEvent) bool { return e.Event == "step" })
	})
	var costs []time.Duration
	gen := 1
	resize := func(size int, what string) {
		gen++
		d := torchResize(t, c.url, id, logf, gen, size)
		t.Logf("%s: generation %d, training at world size %d %v after the decision", what, gen, size, d.Round(time.Millisecond))
		costs = append(costs, d)
	}
	touch(t, filepath.Join(dir, "blocker-go"))
	resize(2, "grown when the blocker ended")
	for i := range *torchCycles {
		gateFile := filepath.Join(dir, fmt.Sprintf("rigid-%d-go", i))
		rigid := submit(t, c.url, "rigid", 1, gate(gateFile))
		resize(1, "shrunk for an arriving rigid job")
		waitState(t, c.url, rigid, 20*time.Second, api.Running)
		touch(t, gateFile)
		resize(2, "grown when the rigid job ended")
	}
	hosts := strings.Fields(mustCLI(t, c.url, "hostfile", "--job", id)) // node-rank order
	victim, _, _ := strings.Cut(hosts[1], ":")
	c.killNode(t, victim, c.replicaPID(t, victim, id))
	resize(1, "continues without the killed node "+victim)
	done := waitState(t, c.url, id, 120*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 1 {
		t.Fatalf("the elastic job ended %s after %d attempts: %s", done.State, done.Attempt, done.Reason)
	}
	checkTorchResult(t, readTorchResult(t, res), ref, 1, 2)
	checkTorchRestarts(t, torchLog(t, logf), 1)
	for _, d := range costs {
		if d > torchResizeBound {
			t.Errorf("a resize took %v from the decision to training at the new size, want under %v", d, torchResizeBound)
		}
	}
	p50, most := durationStats(costs)
	t.Logf("%d resizes: p50 %v, max %v; the test took %v", len(costs), p50.Round(time.Millisecond),
		most.Round(time.Millisecond), time.Since(began).Round(time.Second))
}

// checkTorchRestarts checks that rank 0's workers resumed where the last
// one stopped: every start (after the first) at the step after the last
// step done, except after a node loss (at most lost of them), where the
// step in flight is done again.
func checkTorchRestarts(t testing.TB, log []torchEvent, lost int) {
	t.Helper()
	done, starts, again := -1, 0, 0
	for _, e := range log {
		switch {
		case e.Event == "step" && e.Rank == 0:
			if e.Step <= done {
				again += done - e.Step + 1
			}
			done = max(done, e.Step)
		case e.Event == "start" && e.Rank == 0:
			starts++
		}
	}
	if again > lost {
		t.Errorf("%d steps done twice, want at most %d (the step in flight at each node loss)", again, lost)
	}
	if starts < 2 {
		t.Errorf("rank 0 started %d times: no restart at a new world size", starts)
	}
	t.Logf("%d worker starts of rank 0; %d steps done twice", starts, again)
}

// durationStats returns the median and the maximum of ds.
func durationStats(ds []time.Duration) (time.Duration, time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0, 0
	}
	return s[len(s)/2], s[len(s)-1]
}

// logTorchJob logs, when the test failed, the job's history, the end of
// its output and of train.py's log.
func logTorchJob(t *testing.T, url, id, logf string) {
	if !t.Failed() {
		return
	}
	_, hist, _ := cli(t, url, "job", id)
	_, out, _ := cli(t, url, "logs", id)
	t.Logf("--- gpusched job %s:\n%s\n--- its output (end):\n%s", id, hist, out[max(0, len(out)-6000):])
	var lines []string
	for _, e := range torchLog(t, logf) {
		if e.Event != "step" {
			lines = append(lines, fmt.Sprintf("%+v", e))
		}
	}
	t.Logf("--- train.py's events other than steps:\n%s", strings.Join(lines, "\n"))
}
