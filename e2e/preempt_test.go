package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// The preemption tests run `gpusched server` with a preemptive policy and
// agents that stop their replicas when they exit (so no job outlives its
// test), and jobs that run testdata/ckpt: a program that trains for a
// number of steps, checkpoints, reports progress and resumes from its
// checkpoint.
//
// Which policy preempts? fifo never does. tiresias (2D-LAS) orders jobs by
// queue (attained GPU-seconds against its thresholds) and preempts: with a
// 1 GPU-second threshold, a running job is in the second queue after half
// a second on 2 GPUs and any new job, in the first queue, preempts it —
// deterministic, whatever the timing after that. But tiresias decides its
// victims by its own order (a preemptive order keeps running jobs that fit
// in the cluster's capacity, in queue order), so it never has a choice
// between two victims. hlas has one: it demotes (marks for stopping) every
// running job whose attained service exceeds the running jobs' average
// times priority_threshold_ratio; with the ratio at 0.5, every running job
// of similar attained service is a candidate, and a new job takes the GPUs
// of the candidate that loses the least work (the most recent checkpoint).

var (
	ckptOnce sync.Once
	ckptPath string
	ckptErr  error
)

// ckptBinary builds testdata/ckpt once, next to the gpusched binary.
func ckptBinary(t testing.TB) string {
	t.Helper()
	ckptOnce.Do(func() {
		ckptPath = filepath.Join(filepath.Dir(binary), "ckpt")
		out, err := exec.Command("go", "build", "-o", ckptPath, "./testdata/ckpt").CombinedOutput()
		if err != nil {
			ckptErr = fmt.Errorf("build testdata/ckpt: %v\n%s", err, out)
		}
	})
	if ckptErr != nil {
		t.Fatal(ckptErr)
	}
	return ckptPath
}

// testCluster is a server and its agents on loopback.
type testCluster struct {
	url, data  string
	serverArgs []string
	agentArgs  []string
	agents     map[string]*proc
}

// newCluster starts a server with extra flags and one agent per name (2
// v100 each), and waits until every node is ready.
func newCluster(t testing.TB, extra []string, names ...string) *testCluster {
	t.Helper()
	return newClusterWith(t, extra, []string{"--gpus", "v100=2"}, names...)
}

// newClusterWith is newCluster with the agents' flags besides --server,
// --name, --data and --stop-replicas-on-exit.
func newClusterWith(t testing.TB, extra, agentArgs []string, names ...string) *testCluster {
	t.Helper()
	addr := freeAddr(t)
	c := &testCluster{url: "http://" + addr, data: t.TempDir(), agentArgs: agentArgs, agents: map[string]*proc{}}
	c.serverArgs = append([]string{"server", "--auth=false", "--listen", addr, "--data", filepath.Join(c.data, "server"),
		"--master-ports", masterPorts()}, extra...)
	start(t, "server", c.serverArgs...)
	waitHealthy(t, c.url)
	for _, n := range names {
		c.startAgent(t, n)
	}
	eventually(t, 20*time.Second, "ready nodes", func() bool {
		return strings.Count(mustCLI(t, c.url, "nodes"), "ready") == len(names)
	})
	return c
}

// startAgent starts (or restarts, on the same data) the agent of node name.
func (c *testCluster) startAgent(t testing.TB, name string) *proc {
	t.Helper()
	args := append([]string{"agent", "--server", c.url, "--name", name, "--data", c.agentData(name),
		"--stop-replicas-on-exit"}, c.agentArgs...)
	p := start(t, "agent "+name, args...)
	c.agents[name] = p
	return p
}

// agentData is the data directory of node name's agent.
func (c *testCluster) agentData(name string) string { return filepath.Join(c.data, "agent-"+name) }

// policyConfig writes a scheduler configuration file and returns its path.
func policyConfig(t testing.TB, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sched.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ckptJob describes a job that runs testdata/ckpt.
type ckptJob struct {
	name             string
	gpus, min, max   int
	grace            string // --grace-period, e.g. "10s"
	state            string // the program's state directory
	steps, stepMS    int
	ckptEvery, until int
	server           string // report over HTTP to this server
	ignoreTerm       bool
	extra            []string
}

// submitCkpt submits job j and returns its id.
func submitCkpt(t testing.TB, url string, j ckptJob) string {
	t.Helper()
	args := []string{"submit", "--name", j.name, "--gpus", strconv.Itoa(j.gpus), "--grace-period", j.grace}
	if j.min > 0 {
		args = append(args, "--min-gpus", strconv.Itoa(j.min), "--max-gpus", strconv.Itoa(j.max))
	}
	args = append(args, j.extra...) // more submit flags
	args = append(args, "--", ckptBinary(t), "--state", j.state, "--steps", strconv.Itoa(j.steps),
		"--step-ms", strconv.Itoa(j.stepMS), "--ckpt-every", strconv.Itoa(j.ckptEvery),
		"--ckpt-until", strconv.Itoa(j.until))
	if j.server != "" {
		args = append(args, "--server", j.server)
	}
	if j.ignoreTerm {
		args = append(args, "--ignore-term")
	}
	return strings.TrimSpace(mustCLI(t, url, args...))
}

// stateDir returns a new directory for a ckpt program's state.
func stateDir(t testing.TB, root, name string) string {
	t.Helper()
	d := filepath.Join(root, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// ckptLog returns the lines of a ckpt program's log whose first word is
// kind, each as its key=value fields.
func ckptLog(t testing.TB, state, kind string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, line := range strings.Split(string(b), "\n") {
		words := strings.Fields(line)
		if len(words) == 0 || words[0] != kind {
			continue
		}
		m := map[string]string{}
		for _, w := range words[1:] {
			k, v, _ := strings.Cut(w, "=")
			m[k] = v
		}
		out = append(out, m)
	}
	return out
}

// readInt reads a file holding one integer, -1 when it does not exist.
func readInt(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// event returns the first event of kind in j's history after from, or
// fails the test.
func event(t testing.TB, j api.Job, kind string, from int) (api.JobEvent, int) {
	t.Helper()
	for i := from; i < len(j.Events); i++ {
		if j.Events[i].Event == kind {
			return j.Events[i], i
		}
	}
	t.Fatalf("job %s has no %q event after #%d: %+v", j.ID, kind, from, j.Events)
	return api.JobEvent{}, -1
}

// termLatency returns the time from the server's decision to stop job j's
// replicas (its first "stopping" event) to the replica's SIGTERM (the
// program's "term" log line).
func termLatency(t testing.TB, j api.Job, term map[string]string) time.Duration {
	t.Helper()
	ev, _ := event(t, j, "stopping", 0)
	ns, err := strconv.ParseInt(term["at"], 10, 64)
	if err != nil {
		t.Fatalf("term line %v: %v", term, err)
	}
	return time.Unix(0, ns).Sub(ev.Time)
}

// checkRanOnceEach checks that the program in state started exactly
// attempts times, once per attempt, each from the checkpoint the previous
// one left, and finished with steps in all.
func checkRanOnceEach(t testing.TB, state string, attempts, steps int) []map[string]string {
	t.Helper()
	starts := ckptLog(t, state, "start")
	if len(starts) != attempts {
		t.Fatalf("%s: %d starts, want %d: %v", state, len(starts), attempts, starts)
	}
	for i, s := range starts {
		if s["attempt"] != strconv.Itoa(i) {
			t.Errorf("%s: start #%d is attempt %s", state, i, s["attempt"])
		}
	}
	if got := readInt(t, filepath.Join(state, "done.0")); got != steps {
		t.Errorf("%s: finished with %d steps in all, want %d", state, got, steps)
	}
	if done := ckptLog(t, state, "done"); len(done) != 1 {
		t.Errorf("%s: finished %d times: %v", state, len(done), done)
	}
	return starts
}

// TestPreemptionResumesFromCheckpoint: under tiresias, a new job preempts
// a running one (which has more attained service); the victim gets
// SIGTERM, checkpoints within its grace period and exits; it waits as
// preempted, resumes as attempt 2 from its checkpoint once the new job
// has finished, and ends with the right total steps.
func TestPreemptionResumesFromCheckpoint(t *testing.T) {
	root := t.TempDir()
	cfg := policyConfig(t, "policy: tiresias\ntiresias:\n  thresholds_gpu_s: [1]\n")
	c := newCluster(t, []string{"--config", cfg}, "alpha")
	aState, bState := stateDir(t, root, "a"), stateDir(t, root, "b")
	a := submitCkpt(t, c.url, ckptJob{name: "victim", gpus: 2, grace: "10s", state: aState,
		steps: 60, stepMS: 50, ckptEvery: 10, server: c.url})
	eventually(t, 20*time.Second, "the victim's progress", func() bool { return job(t, c.url, a).Steps >= 15 })
	b := submitCkpt(t, c.url, ckptJob{name: "newcomer", gpus: 2, grace: "10s", state: bState, steps: 10, stepMS: 50})
	eventually(t, 10*time.Second, "SIGTERM to the victim", func() bool { return len(ckptLog(t, aState, "term")) == 1 })
	term := ckptLog(t, aState, "term")[0]
	p := waitState(t, c.url, a, 10*time.Second, api.Preempted, api.Running)
	nb := waitState(t, c.url, b, 20*time.Second, api.Succeeded, api.Failed)
	if nb.State != api.Succeeded || nb.Attempt != 1 {
		t.Fatalf("newcomer ended %s after %d attempts", nb.State, nb.Attempt)
	}
	na := waitState(t, c.url, a, 20*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if na.State != api.Succeeded || na.Attempt != 2 || na.CheckpointSteps != 60 {
		t.Fatalf("victim ended %s after %d attempts, checkpoint %d: %+v", na.State, na.Attempt, na.CheckpointSteps, na)
	}
	starts := checkRanOnceEach(t, aState, 2, 60)
	if starts[1]["from"] != term["step"] || starts[1]["env"] != term["step"] || term["step"] == "0" {
		t.Errorf("SIGTERM at step %s; the second attempt resumed from %s (GPUSCHED_CHECKPOINT_STEPS %s)",
			term["step"], starts[1]["from"], starts[1]["env"])
	}
	stopping, i := event(t, na, "stopping", 0)
	if !strings.Contains(stopping.Message, "preempted by the tiresias policy") {
		t.Errorf("stopping event: %+v", stopping)
	}
	pre, _ := event(t, na, "preempted", i)
	started, _ := event(t, na, "started", i)
	if !strings.Contains(started.Message, "resumes from the checkpoint at step "+term["step"]) ||
		nb.StartedAt.Before(pre.Time) {
		t.Errorf("preempted at %v, newcomer started at %v; restart: %q", pre.Time, nb.StartedAt, started.Message)
	}
	if p.State == api.Preempted && !strings.Contains(p.Reason, "preempted by the tiresias policy") {
		t.Errorf("preempted job's reason %q", p.Reason)
	}
	lat := termLatency(t, na, term)
	t.Logf("preemption decision to SIGTERM received: %v", lat)
	if lat < 0 || lat > time.Second {
		t.Errorf("preemption decision to SIGTERM: %v, want well under a second (target 100 ms)", lat)
	}
	out := mustCLI(t, c.url, "job", a)
	for _, want := range []string{"Checkpoint:", "step 60", "preempted", "attempt 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("gpusched job %s lacks %q:\n%s", a, want, out)
		}
	}
}

// TestIgnoredSIGTERMKilledAfterGrace: a victim that ignores SIGTERM is
// killed with SIGKILL once its 1 s grace period is over, and restarts from
// its last periodic checkpoint.
func TestIgnoredSIGTERMKilledAfterGrace(t *testing.T) {
	root := t.TempDir()
	cfg := policyConfig(t, "policy: tiresias\ntiresias:\n  thresholds_gpu_s: [1]\n")
	c := newCluster(t, []string{"--config", cfg}, "alpha")
	aState, bState := stateDir(t, root, "a"), stateDir(t, root, "b")
	a := submitCkpt(t, c.url, ckptJob{name: "stubborn", gpus: 2, grace: "1s", state: aState,
		steps: 50, stepMS: 50, ckptEvery: 10, ignoreTerm: true})
	eventually(t, 20*time.Second, "a checkpoint of the stubborn job", func() bool {
		return job(t, c.url, a).CheckpointSteps >= 10
	})
	b := submitCkpt(t, c.url, ckptJob{name: "newcomer", gpus: 2, grace: "1s", state: bState, steps: 5, stepMS: 50})
	eventually(t, 10*time.Second, "SIGTERM to the stubborn job", func() bool { return len(ckptLog(t, aState, "term")) > 0 })
	term := ckptLog(t, aState, "term")[0]
	waitState(t, c.url, b, 20*time.Second, api.Succeeded)
	na := waitState(t, c.url, a, 20*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if na.State != api.Succeeded || na.Attempt != 2 {
		t.Fatalf("stubborn job ended %s after %d attempts", na.State, na.Attempt)
	}
	starts := checkRanOnceEach(t, aState, 2, 50)
	// It trained on through its grace period, checkpointing every 10 steps,
	// and restarted from the last of those checkpoints.
	from, _ := strconv.Atoi(starts[1]["from"])
	at, _ := strconv.Atoi(term["step"])
	if from%10 != 0 || from < at/10*10 || from > at+30 {
		t.Errorf("SIGTERM at step %d; restarted from %d, want its last periodic checkpoint", at, from)
	}
	_, i := event(t, na, "stopping", 0)
	exit, _ := event(t, na, "replica-exited", i)
	if !strings.Contains(exit.Message, "killed by SIGKILL") {
		t.Errorf("exit of the stubborn replica: %q", exit.Message)
	}
	ns, _ := strconv.ParseInt(term["at"], 10, 64)
	if took := exit.Time.Sub(time.Unix(0, ns)); took < 900*time.Millisecond || took > 3*time.Second {
		t.Errorf("SIGTERM to exit: %v, want the 1 s grace period and a little", took)
	}
}

// TestVictimWithNewestCheckpoint: of two running jobs that hlas may stop
// for a newcomer, the one whose checkpoint is the most recent (it loses the
// least work) is stopped. Without checkpoints the other one would be: the
// engine then releases both candidates' GPUs and the pack placer takes
// GPU alpha/0, held by the job that started first.
func TestVictimWithNewestCheckpoint(t *testing.T) {
	root := t.TempDir()
	cfg := policyConfig(t, "policy: hlas\nhlas:\n  priority_threshold_ratio: 0.5\n")
	c := newCluster(t, []string{"--config", cfg}, "alpha")
	fresh, stale, nb := stateDir(t, root, "fresh"), stateDir(t, root, "stale"), stateDir(t, root, "newcomer")
	// stale starts first (on alpha/0) and checkpoints once, at step 2;
	// fresh checkpoints every 2 steps (100 ms).
	s := submitCkpt(t, c.url, ckptJob{name: "stale", gpus: 1, grace: "5s", state: stale,
		steps: 120, stepMS: 50, ckptEvery: 2, until: 2, server: c.url})
	if j := waitState(t, c.url, s, 20*time.Second, api.Running); j.Alloc[0] != "alpha/0" {
		t.Fatalf("the first job runs on %v, want alpha/0", j.Alloc)
	}
	f := submitCkpt(t, c.url, ckptJob{name: "fresh", gpus: 1, grace: "5s", state: fresh,
		steps: 120, stepMS: 50, ckptEvery: 2, server: c.url})
	eventually(t, 20*time.Second, "both jobs past their first second", func() bool {
		return job(t, c.url, f).Steps >= 25
	})
	js, jf := job(t, c.url, s), job(t, c.url, f)
	if js.LastCheckpointAt == nil || jf.LastCheckpointAt == nil || !jf.LastCheckpointAt.After(*js.LastCheckpointAt) {
		t.Fatalf("checkpoints: fresh %v, stale %v", jf.LastCheckpointAt, js.LastCheckpointAt)
	}
	n := submitCkpt(t, c.url, ckptJob{name: "newcomer", gpus: 1, grace: "5s", state: nb, steps: 5, stepMS: 50})
	waitState(t, c.url, n, 20*time.Second, api.Succeeded)
	termF, termS := ckptLog(t, fresh, "term"), ckptLog(t, stale, "term")
	if len(termF) != 1 || len(termS) != 0 {
		t.Fatalf("SIGTERMs: %d to the job with the newest checkpoint, %d to the other; want 1 and 0", len(termF), len(termS))
	}
	for _, id := range []string{f, s} {
		mustCLI(t, c.url, "cancel", id)
	}
	if j := job(t, c.url, s); j.Attempt != 1 {
		t.Errorf("the job with the old checkpoint was restarted: attempt %d", j.Attempt)
	}
}

// BenchmarkPreemptToSIGTERM measures, on a server and an agent over
// loopback, the time from the scheduling round that preempts a job (the
// time of its "stopping" event) to the job's process receiving SIGTERM:
// plan applied and stored, work long-poll answered, replica's process group
// signalled. Each iteration submits a one-step job that preempts a
// long-running one under tiresias (which then resumes); it reports the
// median and the maximum.
func BenchmarkPreemptToSIGTERM(b *testing.B) {
	root := b.TempDir()
	cfg := policyConfig(b, "policy: tiresias\ntiresias:\n  thresholds_gpu_s: [0.2]\n")
	c := newCluster(b, []string{"--config", cfg}, "alpha")
	vs := stateDir(b, root, "victim")
	v := submitCkpt(b, c.url, ckptJob{name: "victim", gpus: 2, grace: "10s", state: vs,
		steps: 1 << 30, stepMS: 20, server: c.url})
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		eventually(b, 20*time.Second, "the victim running past the threshold", func() bool {
			j := job(b, c.url, v)
			return j.State == api.Running && j.Attempt == i+1 && j.Steps >= 10
		})
		submitCkpt(b, c.url, ckptJob{name: "short", gpus: 2, grace: "1s", state: stateDir(b, root, strconv.Itoa(i)),
			steps: 1, stepMS: 1})
		eventually(b, 10*time.Second, "SIGTERM", func() bool { return len(ckptLog(b, vs, "term")) == i+1 })
		j := job(b, c.url, v)
		var stops []api.JobEvent
		for _, e := range j.Events {
			if e.Event == "stopping" {
				stops = append(stops, e)
			}
		}
		ns, _ := strconv.ParseInt(ckptLog(b, vs, "term")[i]["at"], 10, 64)
		lat = append(lat, time.Unix(0, ns).Sub(stops[len(stops)-1].Time))
	}
	b.StopTimer()
	mustCLI(b, c.url, "cancel", v)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
