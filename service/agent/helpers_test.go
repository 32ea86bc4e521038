package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/shim"
)

// fastTiming shortens the agent's intervals for tests.
func fastTiming() timing {
	return timing{
		logEvery:    20 * time.Millisecond,
		backoffMin:  10 * time.Millisecond,
		backoffMax:  100 * time.Millisecond,
		pollTimeout: 2 * time.Second,
		callTimeout: time.Second,
		groupPoll:   10 * time.Millisecond,
		sweepEvery:  100 * time.Millisecond,
		progEvery:   20 * time.Millisecond,
		shimStart:   time.Second,
	}
}

// testAgent is an agent running in the background of a test.
type testAgent struct {
	*Agent
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startAgent runs an agent for node n1 (4 v100) against url, on dataDir
// ("" for a fresh one), its Config changed by mods. The test's cleanup stops it, SIGKILLs whatever
// replicas still run and waits until their shims have recorded the exits (so that nothing writes
// into the data directory any more).
func startAgent(t *testing.T, url, dataDir string, mods ...func(*Config)) *testAgent {
	t.Helper()
	gpus, err := machine.ParseGPUs("v100=4")
	if err != nil {
		t.Fatal(err)
	}
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	cfg := Config{Server: url, Name: "n1", DataDir: dataDir, GPUs: gpus}
	for _, mod := range mods {
		mod(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a.t = fastTiming()
	ctx, cancel := context.WithCancel(context.Background())
	ta := &testAgent{Agent: a, cancel: cancel, done: make(chan error, 1)}
	go func() { ta.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		ta.stop(t)
		running := a.reps.running()
		for _, p := range running {
			shim.SignalGroup(p.status.PID, syscall.SIGKILL)
		}
		for _, p := range running {
			waitShim(t, p.dir)
		}
	})
	return ta
}

// stop ends the agent's Run (its replicas keep running) and checks that it
// returned nil.
func (ta *testAgent) stop(t *testing.T) {
	t.Helper()
	ta.once.Do(func() {
		ta.cancel()
		select {
		case err := <-ta.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5 s of its context's end")
		}
	})
}

// waitFor polls cond until it holds, failing the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// statusOf returns the latest status the server has of replica id.
func (f *fakeServer) statusOf(id string) (s api.ReplicaStatus, ok bool) {
	f.with(func(f *fakeServer) { s, ok = f.status[id] })
	return s, ok
}

// waitExited waits until the server has replica id's exit.
func (f *fakeServer) waitExited(t *testing.T, id string) api.ReplicaStatus {
	t.Helper()
	var s api.ReplicaStatus
	waitFor(t, id+" exited", func() bool {
		var ok bool
		s, ok = f.statusOf(id)
		return ok && s.Phase == api.ReplicaExited
	})
	return s
}

// waitRunning waits until the server has replica id running with a PID.
func (f *fakeServer) waitRunning(t *testing.T, id string) api.ReplicaStatus {
	t.Helper()
	var s api.ReplicaStatus
	waitFor(t, id+" running", func() bool {
		var ok bool
		s, ok = f.statusOf(id)
		return ok && s.Phase == api.ReplicaRunning && s.PID > 0
	})
	return s
}

// logOf returns the output the server has of replica id.
func (f *fakeServer) logOf(id string) (out string) {
	f.with(func(f *fakeServer) { out = string(f.logs[id]) })
	return out
}

// waitLog waits until replica id's output on the server holds all parts.
func (f *fakeServer) waitLog(t *testing.T, id string, parts ...string) string {
	t.Helper()
	var out string
	waitFor(t, id+" output "+strings.Join(parts, ", "), func() bool {
		out = f.logOf(id)
		for _, p := range parts {
			if !strings.Contains(out, p) {
				return false
			}
		}
		return true
	})
	return out
}

// replica returns a replica of job j1 running sh -c script.
func replica(id, script string) api.Replica {
	return api.Replica{ID: id, Job: "j1", Command: []string{"sh", "-c", script}, GPUs: []int{0}, GracePeriodS: 5}
}

// groupAlive reports whether process group pgid still has a process.
func groupAlive(pgid int) bool {
	return pgid > 1 && !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// localLog returns the output the agent captured for replica id.
func (ta *testAgent) localLog(t *testing.T, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ta.replicaDir(id), shim.LogFile))
	if err != nil {
		t.Fatalf("read local log: %v", err)
	}
	return string(b)
}

// touch creates the empty file path (a gate a replica waits for).
func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitShim waits until the shim of the replica in dir, if it has one, has
// written its exit file or is gone.
func waitShim(t *testing.T, dir string) {
	t.Helper()
	var st shim.Started
	if ok, _ := shim.ReadFile(dir, shim.StartedFile, &st); !ok {
		return
	}
	waitFor(t, "the shim of "+filepath.Base(dir)+" to end", func() bool {
		_, err := os.Stat(filepath.Join(dir, shim.ExitFile))
		return err == nil || !shim.ProcessAlive(st.ShimPID, st.ShimStart)
	})
}
