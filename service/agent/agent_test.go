package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

func TestReplicaEnvironmentAndHostFiles(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	ta := startAgent(t, f.srv.URL, "")
	r1 := replica("j1.1.0", `echo "CVD=$CUDA_VISIBLE_DEVICES FOO=$FOO WS=$WORLD_SIZE NODE=$GPUSCHED_NODE ID=$GPUSCHED_REPLICA_ID"
echo "PWD=$(pwd -P)"
echo "HOSTS=$GPUSCHED_HOSTS"
cat "$GPUSCHED_MPI_HOSTFILE"
cat "$GPUSCHED_HOSTFILE"`)
	r1.Env = map[string]string{"CUDA_VISIBLE_DEVICES": "1,3", "FOO": "bar baz", "WORLD_SIZE": "4"}
	r1.GPUs = []int{1, 3}
	r1.HostFile = "n1:2\nn2:2\n"
	r2 := replica("j2.1.0", `echo "CVD=$CUDA_VISIBLE_DEVICES HOSTS=$GPUSCHED_HOSTS"; cat "$GPUSCHED_MPI_HOSTFILE"; "$GPUSCHED_HOST_DISCOVERY_SCRIPT"`)
	r2.Job, r2.GPUs, r2.HostFile = "j2", []int{2}, "n1:1\n"
	f.setWork(nil, r1, r2)

	if s := f.waitExited(t, r1.ID); s.ExitCode != 0 || s.Error != "" || s.Job != "j1" {
		t.Errorf("status = %+v, want exit 0 of job j1", s)
	}
	dir, err := filepath.EvalSymlinks(ta.replicaDir(r1.ID))
	if err != nil {
		t.Fatal(err)
	}
	f.waitLog(t, r1.ID,
		"CVD=1,3 FOO=bar baz WS=4 NODE=n1 ID=j1.1.0\n",
		"PWD="+dir+"\n",
		"HOSTS=n1:2,n2:2\n",
		"n1 slots=2\nn2 slots=2\n",
		"n1:2\nn2:2\n")
	f.waitExited(t, r2.ID)
	f.waitLog(t, r2.ID, "CVD=2 HOSTS=localhost:1\nlocalhost slots=1\nn1:1\n")
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	startAgent(t, f.srv.URL, "")
	badDir := replica("bad-dir", "exit 0")
	badDir.Workdir = "/nonexistent/gpusched"
	f.setWork(nil,
		replica("ok", "exit 0"),
		replica("three", "echo failing >&2; exit 3"),
		replica("term", "kill -TERM $$; sleep 5"),
		api.Replica{ID: "no-binary", Job: "j1", Command: []string{"gpusched-no-such-binary"}},
		badDir,
	)
	tests := []struct {
		id     string
		code   int
		signal string
		err    string
	}{
		{"ok", 0, "", ""},
		{"three", 3, "", ""},
		{"term", 143, "SIGTERM", ""},
		{"no-binary", -1, "", "executable file not found"},
		{"bad-dir", -1, "", "/nonexistent/gpusched"},
	}
	for _, tt := range tests {
		s := f.waitExited(t, tt.id)
		if s.ExitCode != tt.code || s.Signal != tt.signal || !strings.Contains(s.Error, tt.err) || (tt.err == "") != (s.Error == "") {
			t.Errorf("%s: exit %d signal %q error %q; want %d %q %q", tt.id, s.ExitCode, s.Signal, s.Error, tt.code, tt.signal, tt.err)
		}
		if s.FinishedAt == nil || s.StartedAt.IsZero() {
			t.Errorf("%s: started %v finished %v, want both", tt.id, s.StartedAt, s.FinishedAt)
		}
	}
	f.waitLog(t, "three", "failing\n")
	f.waitLog(t, "no-binary", "did not start")
}

func TestStopAfterGracePeriod(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	startAgent(t, f.srv.URL, "")
	stubborn := replica("stubborn", `trap "" TERM; echo ready; sleep 30`)
	stubborn.GracePeriodS = 1
	polite := replica("polite", `sleep 30 & sleep 30 & echo ready; wait`)
	polite.GracePeriodS = 30
	f.setWork(nil, stubborn, polite)
	s1, s2 := f.waitRunning(t, stubborn.ID), f.waitRunning(t, polite.ID)
	f.waitLog(t, stubborn.ID, "ready")
	f.waitLog(t, polite.ID, "ready")

	removed := time.Now()
	f.setWork(nil)
	s := f.waitExited(t, polite.ID)
	if s.ExitCode != 143 || s.Signal != "SIGTERM" {
		t.Errorf("polite: exit %d signal %q, want 143 SIGTERM", s.ExitCode, s.Signal)
	}
	if groupAlive(s2.PID) {
		t.Errorf("polite: process group %d still alive after its exit was reported", s2.PID)
	}
	s = f.waitExited(t, stubborn.ID)
	if s.ExitCode != 137 || s.Signal != "SIGKILL" {
		t.Errorf("stubborn: exit %d signal %q, want 137 SIGKILL", s.ExitCode, s.Signal)
	}
	if took := time.Since(removed); took < time.Second {
		t.Errorf("stubborn was killed after %v, before its 1 s grace period", took)
	}
	if groupAlive(s1.PID) {
		t.Errorf("stubborn: process group %d still alive after its exit was reported", s1.PID)
	}
}

func TestLeftoverProcessesEndWithTheReplica(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	startAgent(t, f.srv.URL, "")
	r := replica("leaves-child", `sleep 30 & echo "child=$!"; exit 0`)
	f.setWork(nil, r)
	s := f.waitExited(t, r.ID)
	if s.ExitCode != 0 || s.Signal != "" {
		t.Errorf("exit %d signal %q, want the leader's 0", s.ExitCode, s.Signal)
	}
	if groupAlive(s.PID) {
		t.Errorf("process group %d still alive after the exit was reported", s.PID)
	}
}

func TestLogsAreRetried(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	f.with(func(f *fakeServer) { f.failLogs = 3 })
	startAgent(t, f.srv.URL, "")
	r := replica("chatty", `i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done`)
	f.setWork(nil, r)
	f.waitExited(t, r.ID)
	var want strings.Builder
	for i := range 3000 {
		want.WriteString("line " + itoa(i) + "\n")
	}
	waitFor(t, "all output on the server", func() bool { return len(f.logOf(r.ID)) >= want.Len() })
	if got := f.logOf(r.ID); got != want.String() {
		t.Errorf("server log: %d bytes, want %d (exactly the output, once)", len(got), want.Len())
	}
}

func TestAcksAndNoDoubleStart(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", false)
	ta := startAgent(t, f.srv.URL, "")
	r := replica("once", `echo started`)
	f.setWork(nil, r)
	f.waitExited(t, r.ID)
	// Unacknowledged, the exit is reported again and again.
	var reports int
	f.with(func(f *fakeServer) { reports = f.reports })
	waitFor(t, "repeated reports", func() bool {
		var n int
		f.with(func(f *fakeServer) { n = f.reports })
		return n >= reports+3
	})
	// The same work again, then acknowledged, then (wrongly) listed again.
	waitPolled := func(v int64) {
		waitFor(t, "the agent to apply work "+itoa(int(v)), func() bool {
			var after, applied int64
			f.with(func(f *fakeServer) { after, applied = f.lastAfter, f.applied })
			return after >= v && applied >= v
		})
	}
	waitPolled(f.setWork(nil, r))
	waitPolled(f.setWork([]string{r.ID}))
	f.with(func(f *fakeServer) { delete(f.status, r.ID) })
	waitPolled(f.setWork(nil, r))
	f.with(func(f *fakeServer) { reports = f.reports })
	waitFor(t, "two more reports", func() bool {
		var n int
		f.with(func(f *fakeServer) { n = f.reports })
		return n >= reports+2
	})
	if s, ok := f.statusOf(r.ID); ok {
		t.Errorf("replica reported after its ack: %+v", s)
	}
	if got := ta.localLog(t, r.ID); got != "started\n" {
		t.Errorf("local log %q, want one start", got)
	}
}

func TestServerRestartKeepsResults(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "127.0.0.1:0", true)
	addr := f.srv.Listener.Addr().String()
	ta := startAgent(t, f.srv.URL, "")
	gate := filepath.Join(t.TempDir(), "go")
	r := replica("survivor", `echo started; while [ ! -e "`+gate+`" ]; do sleep 0.01; done; exit 3`)
	f.setWork(nil, r)
	f.waitRunning(t, r.ID)

	f.close()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replica to exit while the server is down", func() bool {
		ta.reps.mu.Lock()
		defer ta.reps.mu.Unlock()
		return ta.reps.procs[r.ID].status.Phase == api.ReplicaExited
	})
	f2 := newFakeServer(t, addr, true)
	f2.setWork(nil, r) // restored from its store, the server still lists it
	s := f2.waitExited(t, r.ID)
	if s.ExitCode != 3 {
		t.Errorf("exit %d, want 3", s.ExitCode)
	}
	f2.waitLog(t, r.ID, "started\n")
	waitFor(t, "the agent to forget the acknowledged replica", func() bool {
		ta.reps.mu.Lock()
		defer ta.reps.mu.Unlock()
		return ta.reps.procs[r.ID] == nil
	})
	f2.with(func(f *fakeServer) {
		if f.exits[r.ID] != 1 {
			t.Errorf("exit recorded %d times, want once", f.exits[r.ID])
		}
	})
	if got := ta.localLog(t, r.ID); got != "started\n" {
		t.Errorf("local log %q, want one start", got)
	}
}

func TestReregistersWhenForgotten(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	startAgent(t, f.srv.URL, "")
	waitFor(t, "registration", func() bool {
		var n int
		f.with(func(f *fakeServer) { n = f.registers })
		return n == 1
	})
	f.with(func(f *fakeServer) { f.known = false })
	waitFor(t, "registration again", func() bool {
		var n int
		f.with(func(f *fakeServer) { n = f.registers })
		return n == 2
	})
}

// TestRestartedAgentAdoptsItsReplicas stops an agent while three
// replicas run: one exits 3 while no agent runs, one exits 0 once a new
// agent on the same data directory has adopted it, one is stopped by the
// new agent. Each is reported with its real exit status — the shims
// recorded them — and none started twice.
func TestRestartedAgentAdoptsItsReplicas(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	data := t.TempDir()
	ta := startAgent(t, f.srv.URL, data)
	gates := t.TempDir()
	gate := func(name string) string {
		return `while [ ! -e "` + filepath.Join(gates, name) + `" ]; do sleep 0.01; done`
	}
	long := replica("long", `echo started; sleep 30`)
	long.GracePeriodS = 0
	ends := replica("ends", `echo started; `+gate("ends")+`; exit 3`)
	later := replica("later", `echo started; `+gate("later")+`; exit 0`)
	f.setWork(nil, long, ends, later)
	s := f.waitRunning(t, long.ID)
	sEnds := f.waitRunning(t, ends.ID)
	f.waitRunning(t, later.ID)
	ta.stop(t)
	if !groupAlive(s.PID) {
		t.Fatal("the replica died with its agent")
	}
	touch(t, filepath.Join(gates, "ends"))
	waitFor(t, "the unsupervised replica to end", func() bool { return !groupAlive(sEnds.PID) })

	startAgent(t, f.srv.URL, data)
	if got := f.waitExited(t, ends.ID); got.ExitCode != 3 || got.Error != "" || got.Lost {
		t.Errorf("replica that ended without an agent: %+v, want exit 3", got)
	}
	if again := f.waitRunning(t, long.ID); again.PID != s.PID {
		t.Errorf("adopted replica has PID %d, want %d", again.PID, s.PID)
	}
	touch(t, filepath.Join(gates, "later"))
	if got := f.waitExited(t, later.ID); got.ExitCode != 0 || got.Error != "" || got.Lost {
		t.Errorf("adopted replica that exited 0: %+v", got)
	}
	f.setWork(nil)
	if got := f.waitExited(t, long.ID); got.ExitCode != 143 || got.Signal != "SIGTERM" {
		t.Errorf("adopted replica stopped: exit %d signal %q, want 143 SIGTERM", got.ExitCode, got.Signal)
	}
	if groupAlive(s.PID) {
		t.Errorf("adopted replica's group %d still alive after the stop", s.PID)
	}
	for _, r := range []api.Replica{long, ends, later} {
		if got := f.waitLog(t, r.ID, "started"); got != "started\n" {
			t.Errorf("%s: log %q, want one start", r.ID, got)
		}
	}
}

// itoa formats i.
func itoa(i int) string { return strconv.Itoa(i) }

func TestOneAgentPerDataDir(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	ta := startAgent(t, f.srv.URL, "")
	waitFor(t, "registration", func() bool {
		var n int
		f.with(func(f *fakeServer) { n = f.registers })
		return n > 0
	})
	second, err := New(Config{Server: f.srv.URL, Name: "n1", DataDir: ta.DataDir(), GPUs: ta.cfg.GPUs})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "in use by another agent") {
		t.Errorf("second agent on the same data directory: Run = %v, want in use", err)
	}
}

func TestStopOnExit(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	ta := startAgent(t, f.srv.URL, "", func(c *Config) { c.StopOnExit = true })
	r := replica("stopped", `sleep 30 & wait`)
	r.GracePeriodS = 0
	f.setWork(nil, r)
	s := f.waitRunning(t, r.ID)
	ta.stop(t)
	if groupAlive(s.PID) {
		t.Errorf("process group %d alive after Run returned with StopOnExit", s.PID)
	}
	if s := f.waitExited(t, r.ID); s.Signal == "" || !strings.Contains(s.Error, "agent, which was exiting") {
		t.Errorf("final report: %+v, want killed by a signal, stopped by the agent", s)
	}
}

func TestRunEndsWhileServerUnreachable(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	url := f.srv.URL
	f.close()
	ta := startAgent(t, url, "")
	time.Sleep(50 * time.Millisecond) // let it fail a few registrations
	ta.stop(t)                        // fails the test if Run does not return
}
