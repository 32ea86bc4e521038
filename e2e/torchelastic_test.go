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
// one node beside a rigid job; grows to both when that job ends; then
// (-torch.cycles times) shrinks for an arriving rigid job and grows back
// when it ends. After each change torchrun re-forms the group and the
// workers resume from the job's own checkpoint with the new world size.
// The job finishes as one attempt, on both nodes, with every step in its
// final state once (its weights are the reference's) and no step done
// twice: every stop saved the step in flight.
func TestTorchElastic(t *testing.T) {
	python := torchPython(t)
	t.Parallel()
	began := time.Now()
	steps := 200 + 100**torchCycles
	if *torchDefaults {
		steps *= 2 // slower resizes: more steps at the old size while they happen
	}
	ref := torchReference(t, python, steps)
	c, dir, logf, res := newTorchElastic(t)
	blocker := submit(t, c.url, "blocker", 1, gate(filepath.Join(dir, "blocker-go")))
	waitState(t, c.url, blocker, 20*time.Second, api.Running)
	id := submitTorchElastic(t, c.url, dir, logf, res, steps)
	if j := waitState(t, c.url, id, 20*time.Second, api.Running); len(j.Alloc) != 1 {
		t.Fatalf("the elastic job started on %v, want the 1 GPU the blocker leaves", j.Alloc)
	}
	tr := &torchResizes{t: t, url: c.url, id: id, logf: logf, gen: 1}
	tr.training(1)
	touch(t, filepath.Join(dir, "blocker-go"))
	tr.resize(2, "grown when the blocker ended")
	for i := range *torchCycles {
		gateFile := filepath.Join(dir, fmt.Sprintf("rigid-%d-go", i))
		rigid := submit(t, c.url, "rigid", 1, gate(gateFile))
		tr.resize(1, "shrunk for an arriving rigid job")
		waitState(t, c.url, rigid, 20*time.Second, api.Running)
		touch(t, gateFile)
		tr.resize(2, "grown when the rigid job ended")
	}
	t.Logf("%d of %d steps done at the last resize", lastTorchStep(t, logf)+1, steps)
	tr.finish(res, ref, 0)
	p50, most := durationStats(tr.costs)
	t.Logf("%d resizes: p50 %v, max %v; the test took %v", len(tr.costs), p50.Round(time.Millisecond),
		most.Round(time.Millisecond), time.Since(began).Round(time.Second))
}

// TestTorchNodeLoss runs examples/pytorch/elastic.yaml on two 1-GPU
// agents, where it starts on both, and kills (-9) the agent of node rank
// 1 and its replica's processes, as a machine dies: after the heartbeat
// timeout the server lets the job continue on node rank 0 alone; there
// torchrun restarts its worker, which resumes from the last checkpoint
// with world size 1 (the step in flight when the node died is done
// again), and the job finishes as one attempt with the reference's
// weights.
func TestTorchNodeLoss(t *testing.T) {
	const steps = 150
	k := startTorchOnTwo(t, steps)
	c, id, tr := k.c, k.id, k.tr
	victim := k.hosts[1]
	killed := c.killNode(t, victim, c.replicaPID(t, victim, id))
	again := tr.resize(1, "continues without the killed node "+victim)
	t.Logf("training again at world size 1 %v after the kill", again.Sub(killed).Round(time.Millisecond))
	t.Logf("%d of %d steps done when training resumed", lastTorchStep(t, k.logf)+1, steps)
	tr.finish(k.res, k.ref, 1)
}

// TestTorchNodeRankZeroLoss kills node rank 0's agent and replica (-9):
// its torchrun hosted the job's c10d rendezvous, so the survivor's torchrun
// cannot go on. The job is not failed: it is queued again and restarts as
// attempt 2 on the node left, from its checkpoint, and ends with the
// weights of a run that lost nothing.
func TestTorchNodeRankZeroLoss(t *testing.T) {
	k := startTorchOnTwo(t, 150)
	c, id := k.c, k.id
	victim := k.hosts[0]
	killed := c.killNode(t, victim, c.replicaPID(t, victim, id))
	var again api.Job
	eventually(t, 60*time.Second, "attempt 2 running", func() bool {
		again = job(t, c.url, id)
		if again.State == api.Failed {
			t.Fatalf("the job failed when its node rank 0 was lost: %s", again.Reason)
		}
		return again.Attempt == 2 && again.State == api.Running
	})
	t.Logf("attempt 2 running %v after the kill, on %v", time.Since(killed).Round(time.Millisecond), again.Alloc)
	done := waitState(t, c.url, id, 120*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 2 {
		t.Fatalf("the job ended %s after %d attempts: %s", done.State, done.Attempt, done.Reason)
	}
	checkTorchResult(t, readTorchResult(t, k.res), k.ref, 1, 2)
}

// torchOnTwo is an elastic PyTorch job training on both nodes of a
// cluster of its own (startTorchOnTwo).
type torchOnTwo struct {
	c             *testCluster
	id, logf, res string
	ref           torchResult
	tr            *torchResizes
	hosts         []string // node names in node-rank order
}

// startTorchOnTwo skips without PyTorch, runs the test in parallel,
// submits an elastic job of steps steps to a new two-node cluster and
// waits until it trains at world size 2.
func startTorchOnTwo(t *testing.T, steps int) torchOnTwo {
	t.Helper()
	python := torchPython(t)
	t.Parallel()
	k := torchOnTwo{ref: torchReference(t, python, steps)}
	var dir string
	k.c, dir, k.logf, k.res = newTorchElastic(t)
	k.id = submitTorchElastic(t, k.c.url, dir, k.logf, k.res, steps)
	if j := waitState(t, k.c.url, k.id, 20*time.Second, api.Running); len(j.Alloc) != 2 {
		t.Fatalf("the elastic job started on %v, want both nodes", j.Alloc)
	}
	k.tr = &torchResizes{t: t, url: k.c.url, id: k.id, logf: k.logf, gen: 1}
	k.tr.training(2)
	for _, h := range strings.Fields(mustCLI(t, k.c.url, "hostfile", "--job", k.id)) {
		name, _, _ := strings.Cut(h, ":")
		k.hosts = append(k.hosts, name)
	}
	return k
}

// newTorchElastic starts a server with the fulfillment scaler allowed to
// fill the cluster (max_load 1) and a 3 s heartbeat timeout, and two
// 1-GPU agents; it returns the cluster, a directory for the job, and the
// paths of train.py's log and result there.
func newTorchElastic(t *testing.T) (*testCluster, string, string, string) {
	t.Helper()
	cfg := policyConfig(t, "scaler: fulfillment\nfulfillment: {max_load: 1}\n")
	c := newClusterWith(t, []string{"--config", cfg, "--heartbeat-timeout", heartbeatTimeout.String()}, torchAgent,
		"alpha", "beta")
	dir := t.TempDir()
	return c, dir, filepath.Join(dir, "log"), filepath.Join(dir, "result.json")
}

// submitTorchElastic submits examples/pytorch/elastic.yaml for steps
// steps in dir and returns its id; the test's cleanup logs the job when
// the test failed.
func submitTorchElastic(t *testing.T, url, dir, logf, res string, steps int) string {
	t.Helper()
	var env map[string]string
	if *torchDefaults {
		env = map[string]string{"PET_RDZV_CONF": "last_call_timeout=30", "PET_MONITOR_INTERVAL": "5"}
	}
	id := strings.TrimSpace(mustCLI(t, url, "submit", torchSpec(t, "elastic", dir, env,
		"--steps", strconv.Itoa(steps), "--events", logf, "--result", res)))
	t.Cleanup(func() { logTorchJob(t, url, id, logf) })
	return id
}

// torchResizes follows an elastic PyTorch job through its resizes.
type torchResizes struct {
	t             *testing.T
	url, id, logf string
	gen           int
	costs         []time.Duration
}

// training waits until the job trains at world size size.
func (r *torchResizes) training(size int) {
	r.t.Helper()
	eventually(r.t, 90*time.Second, fmt.Sprintf("training at world size %d", size), func() bool {
		return slices.ContainsFunc(torchLog(r.t, r.logf), func(e torchEvent) bool { return e.Event == "step" && e.World == size })
	})
}

// resize waits for the job's next generation on size GPUs and training at
// that size, records the resize's cost and returns the time of the first
// step at the new size.
func (r *torchResizes) resize(size int, what string) time.Time {
	r.t.Helper()
	r.gen++
	decided, first := torchResize(r.t, r.url, r.id, r.logf, r.gen, size)
	d := first.Sub(decided)
	r.t.Logf("%s: generation %d, training at world size %d %v after the decision", what, r.gen, size, d.Round(time.Millisecond))
	r.costs = append(r.costs, d)
	return first
}

// finish waits for the job to succeed as one attempt and checks its
// result against ref (at most lost steps done twice: one per node loss)
// and every resize's cost against torchResizeBound.
func (r *torchResizes) finish(res string, ref torchResult, lost int) {
	r.t.Helper()
	done := waitState(r.t, r.url, r.id, 120*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 1 {
		r.t.Fatalf("the elastic job ended %s after %d attempts: %s", done.State, done.Attempt, done.Reason)
	}
	checkTorchResult(r.t, readTorchResult(r.t, res), ref, 1, 2)
	checkTorchRestarts(r.t, torchLog(r.t, r.logf), lost)
	for _, d := range r.costs {
		if d > torchResizeBound && !*torchDefaults {
			r.t.Errorf("a resize took %v from the decision to training at the new size, want under %v", d, torchResizeBound)
		}
	}
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

// lastTorchStep returns the highest step train.py's log shows done, -1
// for none.
func lastTorchStep(t testing.TB, logf string) int {
	t.Helper()
	last := -1
	for _, e := range torchLog(t, logf) {
		if e.Event == "step" {
			last = max(last, e.Step)
		}
	}
	return last
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
