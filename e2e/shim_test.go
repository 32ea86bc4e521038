package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// The shim tests kill (-9) the process that runs the agent while replicas
// run, and check that a replica's exit status survives: every replica runs
// under a shim (`gpusched shim`) that records it in the replica's
// directory, where the restarted agent reads it.

// gatedJob is a job that writes its PID (also its process group) to
// <dir>/<name>.pid, waits for the gate <dir>/<name> and exits with code.
type gatedJob struct {
	name  string
	code  int
	early bool // its gate opens while the agent is down
	id    string
	pgid  int
}

// submitGated submits j (1 GPU) and returns its id.
func submitGated(t *testing.T, url, dir string, j *gatedJob) {
	t.Helper()
	gateFile := filepath.Join(dir, j.name)
	j.id = submit(t, url, j.name, 1, fmt.Sprintf("echo started; echo $$ > %q; %s; exit %d", gateFile+".pid", gate(gateFile), j.code))
}

// waitPID waits until a gated job has started and returns its PID; the
// test's cleanup kills its process group, should it still run.
func waitPID(t *testing.T, dir, name string) int {
	t.Helper()
	path := filepath.Join(dir, name+".pid")
	pid := 0
	eventually(t, 20*time.Second, name+" to start", func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	return pid
}

// runGated starts the jobs, kills the agent's process with kill9 once all
// run, opens the early gates, waits until those replicas have ended,
// restarts the agent with restart, opens the other gates once the new
// agent has adopted them, and checks that every job ends as its exit code
// says, in its first attempt, having run once.
func runGated(t *testing.T, url string, kill9 func(), restart func() *proc, js []*gatedJob) {
	t.Helper()
	dir := t.TempDir()
	for _, j := range js {
		submitGated(t, url, dir, j)
	}
	for _, j := range js {
		j.pgid = waitPID(t, dir, j.name)
	}
	kill9()
	for _, j := range js {
		if j.early {
			touch(t, filepath.Join(dir, j.name))
		}
	}
	for _, j := range js {
		if j.early {
			eventually(t, 10*time.Second, j.name+" to end while no agent runs", func() bool { return !groupAlive(j.pgid) })
		} else if !groupAlive(j.pgid) {
			t.Fatalf("%s (group %d) died with its agent", j.name, j.pgid)
		}
	}
	p := restart()
	// The new agent adopts every replica its records list as running, the
	// ended ones included (their exit files say how they ended), before it
	// does anything else.
	eventually(t, 20*time.Second, "the new agent to adopt the replicas", func() bool {
		return strings.Count(p.out.String(), "adopting replica") >= len(js)
	})
	for _, j := range js {
		if !j.early {
			touch(t, filepath.Join(dir, j.name))
		}
	}
	for _, j := range js {
		got := waitState(t, url, j.id, 30*time.Second, api.Succeeded, api.Failed, api.Cancelled)
		want := map[bool]api.State{true: api.Succeeded, false: api.Failed}[j.code == 0]
		if got.State != want || got.ExitCode == nil || *got.ExitCode != j.code || got.Attempt != 1 {
			t.Errorf("%s (exits %d): %s, exit code %v, attempt %d; want %s with exit code %d in attempt 1\n%s",
				j.name, j.code, got.State, fmtCode(got.ExitCode), got.Attempt, want, j.code, mustCLI(t, url, "job", j.id))
		}
		var log string
		eventually(t, 10*time.Second, "the log of "+j.name, func() bool {
			log = mustCLI(t, url, "logs", j.id)
			return strings.Contains(log, "started")
		})
		if strings.Count(log, "started") != 1 {
			t.Errorf("%s: log %q, want one start", j.name, log)
		}
	}
}

// fmtCode prints an optional exit code.
func fmtCode(c *int) string {
	if c == nil {
		return "none"
	}
	return strconv.Itoa(*c)
}

// TestDevKill9KeepsExitStatus kills (-9) `gpusched dev` while four jobs
// run and starts it again on the same --data: the jobs that exit 0 and 3
// while dev is down, and those that exit 0 and 3 after the new dev adopted
// them, end succeeded (exit code 0) and failed (exit code 3).
func TestDevKill9KeepsExitStatus(t *testing.T) {
	addr := freeAddr(t)
	url := "http://" + addr
	args := []string{"dev", "--listen", addr, "--data", t.TempDir(), "--gpus", "v100=4"}
	dev := start(t, "dev", args...)
	waitHealthy(t, url)
	runGated(t, url, func() { dev.kill9(t) }, func() *proc {
		p := start(t, "dev (restarted)", args...)
		waitHealthy(t, url)
		return p
	}, []*gatedJob{
		{name: "ok-while-down", code: 0, early: true},
		{name: "fails-while-down", code: 3, early: true},
		{name: "ok-after", code: 0},
		{name: "fails-after", code: 3},
	})
}

// TestAgentKill9KeepsExitStatus kills (-9) a standalone `gpusched agent`
// while two jobs run, the server staying up, and starts it again on the
// same --data: the job that exits 0 while the agent is down succeeds, the
// one that exits 3 after the restart fails with exit code 3.
func TestAgentKill9KeepsExitStatus(t *testing.T) {
	c := newCluster(t, nil, "alpha")
	runGated(t, c.url, func() { c.agents["alpha"].kill9(t) }, func() *proc { return c.startAgent(t, "alpha") },
		[]*gatedJob{{name: "ok-while-down", code: 0, early: true}, {name: "fails-after", code: 3}})
}

// parentOf returns the parent PID of process pid.
func parentOf(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// TestShimKilledReplicaRequeued kills (-9) `gpusched dev` while a
// checkpointing job runs, then the replica's shim (its parent process),
// and starts dev again: the replica's exit status is lost, so the new
// agent stops the orphaned training process (SIGTERM: it checkpoints) and
// reports the replica lost; the server queues the job again, and it
// resumes from its checkpoint as attempt 2 (GPUSCHED_RESTART_COUNT 1) and
// succeeds — it does not fail.
func TestShimKilledReplicaRequeued(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	addr := freeAddr(t)
	url := "http://" + addr
	args := []string{"dev", "--listen", addr, "--data", t.TempDir(), "--gpus", "v100=2"}
	dev := start(t, "dev", args...)
	waitHealthy(t, url)
	st := stateDir(t, t.TempDir(), "ckpt")
	id := submitCkpt(t, url, ckptJob{name: "ckpt", gpus: 2, grace: "10s", state: st, steps: 100, stepMS: 50, ckptEvery: 10})
	eventually(t, 20*time.Second, "a checkpoint", func() bool { return job(t, url, id).CheckpointSteps >= 10 })
	pid := rankPID(t, st, "0")
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	shim := parentOf(t, pid)
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", shim)); strings.TrimSpace(string(comm)) != filepath.Base(binary) {
		t.Fatalf("the replica's parent %d is %q, want its shim (%s)", shim, comm, filepath.Base(binary))
	}
	dev.kill9(t)
	if err := syscall.Kill(shim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start(t, "dev (restarted)", args...)
	waitHealthy(t, url)
	done := waitState(t, url, id, 30*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 2 {
		t.Fatalf("job ended %s after %d attempts, want succeeded in attempt 2\n%s", done.State, done.Attempt, mustCLI(t, url, "job", id))
	}
	starts := checkRanOnceEach(t, st, 2, 100)
	if terms := ckptLog(t, st, "term"); len(terms) != 1 || terms[0]["attempt"] != "0" {
		t.Errorf("SIGTERMs %v, want one, to the orphaned first attempt", terms)
	}
	from, _ := strconv.Atoi(starts[1]["from"])
	env, _ := strconv.Atoi(starts[1]["env"])
	if from < 10 || env < 10 || env > from {
		t.Errorf("attempt 2 resumed from step %d (GPUSCHED_CHECKPOINT_STEPS %d), want its checkpoint", from, env)
	}
	out := mustCLI(t, url, "job", id)
	for _, want := range []string{"replica-lost", "lost (its shim is gone", "queued again to restart as a new attempt",
		"preempted", "attempt 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("gpusched job %s lacks %q:\n%s", id, want, out)
		}
	}
}
