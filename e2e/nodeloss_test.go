package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// heartbeatTimeout is the server's --heartbeat-timeout in the node-loss
// tests: agents then report every 2 s (the default interval, below the
// timeout) and a silent node is marked down after 3 s.
const heartbeatTimeout = 3 * time.Second

// rankPID returns the PID (also the process group) of the first attempt's
// replica of node rank rank, from the ckpt program's log in state.
func rankPID(t testing.TB, state, rank string) int {
	t.Helper()
	for _, s := range ckptLog(t, state, "start") {
		if s["rank"] == rank && s["attempt"] == "0" {
			pid, err := strconv.Atoi(s["pid"])
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("%s: no start of rank %s", state, rank)
	return 0
}

// killNode kills node name's agent with SIGKILL, as a crash would; with
// pgid > 0 also that process group (a replica: the machine died with it).
// It returns the time of the kill.
func (c *testCluster) killNode(t testing.TB, name string, pgid int) time.Time {
	t.Helper()
	at := time.Now()
	c.agents[name].kill9(t)
	if pgid > 0 {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill replica group %d: %v", pgid, err)
		}
	}
	return at
}

// detection checks the time from killing a node's agent to the server's
// "replica-lost" event against the heartbeat timeout + 2 s and logs it.
func detection(t testing.TB, j api.Job, killed time.Time) time.Duration {
	t.Helper()
	lost, _ := event(t, j, "replica-lost", 0)
	d := lost.Time.Sub(killed)
	t.Logf("dead agent detected after %v (heartbeat timeout %v)", d, heartbeatTimeout)
	if d > heartbeatTimeout+2*time.Second {
		t.Errorf("dead agent detected after %v, want at most the heartbeat timeout %v + 2 s", d, heartbeatTimeout)
	}
	return d
}

// TestNodeLossElasticJobContinues kills (-9) the agent of one node of a
// two-node elastic job (4 GPUs, min 2): the server marks the node down
// after the heartbeat timeout and the job continues, as the same attempt,
// on the other node — new allocation, membership generation and host
// file. The killed node's replica still runs (the machine is alive); when
// its agent comes back it stops that stale replica. The job then
// finishes once, with the surviving replica's total steps.
func TestNodeLossElasticJobContinues(t *testing.T) {
	root := t.TempDir()
	c := newCluster(t, []string{"--heartbeat-timeout", heartbeatTimeout.String()}, "alpha", "beta")
	st := stateDir(t, root, "elastic")
	id := submitCkpt(t, c.url, ckptJob{name: "elastic", gpus: 4, min: 2, max: 4, grace: "5s", state: st,
		steps: 200, stepMS: 50, ckptEvery: 10})
	j := waitState(t, c.url, id, 20*time.Second, api.Running)
	if strings.Join(j.Alloc, ",") != "alpha/0,alpha/1,beta/0,beta/1" {
		t.Fatalf("elastic job on %v, want both nodes", j.Alloc)
	}
	eventually(t, 10*time.Second, "both replicas started", func() bool { return len(ckptLog(t, st, "start")) == 2 })
	stale := rankPID(t, st, "1") // node rank 1 is beta (alpha/0 comes first)
	killed := c.killNode(t, "beta", 0)
	eventually(t, 15*time.Second, "the job continuing on alpha", func() bool {
		j = job(t, c.url, id)
		return j.Generation == 2
	})
	if j.State != api.Running || strings.Join(j.Alloc, ",") != "alpha/0,alpha/1" || j.Attempt != 1 {
		t.Fatalf("after losing beta: %s on %v, attempt %d", j.State, j.Alloc, j.Attempt)
	}
	if d := time.Since(killed); d > 15*time.Second {
		t.Errorf("the job continued %v after the kill, want within 15 s", d)
	}
	detection(t, j, killed)
	hosts := filepath.Join(c.agentData("alpha"), "replicas", id+".1.0", "hosts")
	eventually(t, 5*time.Second, "alpha's host file without beta", func() bool {
		b, _ := os.ReadFile(hosts)
		return string(b) == "alpha:2\n"
	})
	if !groupAlive(stale) {
		t.Fatalf("beta's replica (group %d) died with its agent; it should run on until the agent returns", stale)
	}
	c.startAgent(t, "beta")
	eventually(t, 10*time.Second, "beta's stale replica stopped by its returning agent", func() bool { return !groupAlive(stale) })
	done := waitState(t, c.url, id, 20*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 1 {
		t.Fatalf("elastic job ended %s after %d attempts", done.State, done.Attempt)
	}
	if starts := ckptLog(t, st, "start"); len(starts) != 2 {
		t.Errorf("%d replica starts, want the first attempt's 2: %v", len(starts), starts)
	}
	if got := readInt(t, filepath.Join(st, "done.0")); got != 200 {
		t.Errorf("the surviving replica finished with %d steps, want 200", got)
	}
	out := mustCLI(t, c.url, "job", id)
	for _, want := range []string{"replica-lost", "node beta lost", "resized", "continues on 2 GPUs", "succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("gpusched job %s lacks %q:\n%s", id, want, out)
		}
	}
}

// TestNodeLossRigidJobRequeued kills a node (its agent with -9 and the
// replica's processes) that runs a rigid job: the job is queued again as
// preempted and restarts, as attempt 2, from its checkpoint on the other
// node, and finishes once with the right total steps.
func TestNodeLossRigidJobRequeued(t *testing.T) {
	root := t.TempDir()
	c := newCluster(t, []string{"--heartbeat-timeout", heartbeatTimeout.String()}, "alpha", "beta")
	st := stateDir(t, root, "rigid")
	id := submitCkpt(t, c.url, ckptJob{name: "rigid", gpus: 2, grace: "5s", state: st,
		steps: 100, stepMS: 50, ckptEvery: 10})
	var j api.Job
	eventually(t, 20*time.Second, "a checkpoint of the rigid job", func() bool {
		j = job(t, c.url, id)
		return j.State == api.Running && j.CheckpointSteps >= 10
	})
	node, _, _ := strings.Cut(j.Alloc[0], "/")
	other := map[string]string{"alpha": "beta", "beta": "alpha"}[node]
	killed := c.killNode(t, node, rankPID(t, st, "0"))
	eventually(t, 15*time.Second, "the job running again on "+other, func() bool {
		j = job(t, c.url, id)
		return j.State == api.Running && j.Attempt == 2
	})
	if !strings.HasPrefix(j.Alloc[0], other+"/") {
		t.Fatalf("attempt 2 on %v, want %s", j.Alloc, other)
	}
	if d := time.Since(killed); d > 15*time.Second {
		t.Errorf("the job ran again %v after the kill, want within 15 s", d)
	}
	detection(t, j, killed)
	done := waitState(t, c.url, id, 20*time.Second, api.Succeeded, api.Failed, api.Cancelled)
	if done.State != api.Succeeded || done.Attempt != 2 {
		t.Fatalf("rigid job ended %s after %d attempts", done.State, done.Attempt)
	}
	starts := checkRanOnceEach(t, st, 2, 100)
	from, _ := strconv.Atoi(starts[1]["from"])
	env, _ := strconv.Atoi(starts[1]["env"])
	if from < 10 || from%10 != 0 || env < 10 || env > from {
		t.Errorf("attempt 2 resumed from step %d (GPUSCHED_CHECKPOINT_STEPS %d), want its last checkpoint", from, env)
	}
	out := mustCLI(t, c.url, "job", id)
	for _, want := range []string{"replica-lost", "node " + node + " lost", "preempted", "attempt 2 on " + other,
		"resumes from the checkpoint at step"} {
		if !strings.Contains(out, want) {
			t.Errorf("gpusched job %s lacks %q:\n%s", id, want, out)
		}
	}
}
