package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// TestShimFiles checks the files a replica's shim leaves: shim.json names
// the shim and the main process, exit.json how the main process ended.
func TestShimFiles(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	ta := startAgent(t, f.srv.URL, "")
	f.setWork(nil, replica("killed", `echo $$ > pid; kill -KILL $$`))
	s := f.waitExited(t, "killed")
	if s.ExitCode != 137 || s.Signal != "SIGKILL" || s.Lost {
		t.Errorf("status %+v, want 137 SIGKILL", s)
	}
	dir := ta.replicaDir("killed")
	var st shim.Started
	var ex shim.Exit
	if ok, err := shim.ReadFile(dir, shim.StartedFile, &st); !ok {
		t.Fatalf("no %s: %v", shim.StartedFile, err)
	}
	if ok, err := shim.ReadFile(dir, shim.ExitFile, &ex); !ok {
		t.Fatalf("no %s: %v", shim.ExitFile, err)
	}
	pid, _ := os.ReadFile(filepath.Join(dir, "pid"))
	if st.PID != s.PID || strings.TrimSpace(string(pid)) != itoa(s.PID) || st.ShimPID <= 1 || st.ShimPID == st.PID ||
		st.BootID != shim.BootID() || st.StartedAt.IsZero() {
		t.Errorf("%s: %+v; replica PID %d (it says %s)", shim.StartedFile, st, s.PID, pid)
	}
	if ex.PID != s.PID || ex.ExitCode != 137 || ex.Signal != "SIGKILL" || ex.FinishedAt.Before(st.StartedAt) ||
		ex.BootID != shim.BootID() {
		t.Errorf("%s: %+v", shim.ExitFile, ex)
	}
}

// shimOf returns the started file of replica id in the agent's data.
func shimOf(t *testing.T, ta *testAgent, id string) shim.Started {
	t.Helper()
	var st shim.Started
	if ok, err := shim.ReadFile(ta.replicaDir(id), shim.StartedFile, &st); !ok {
		t.Fatalf("%s: no %s: %v", id, shim.StartedFile, err)
	}
	return st
}

// TestShimKilledReplicaIsLost kills (-9) a replica's shim while no agent
// runs: the next agent stops the replica's processes, which run on
// unwatched (SIGTERM first), and reports the replica lost.
func TestShimKilledReplicaIsLost(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	data := t.TempDir()
	ta := startAgent(t, f.srv.URL, data)
	r := replica("orphan", `trap 'echo got TERM; exit 0' TERM; echo started; while :; do sleep 0.05; done`)
	f.setWork(nil, r)
	s := f.waitRunning(t, r.ID)
	f.waitLog(t, r.ID, "started")
	ta.stop(t)
	st := shimOf(t, ta, r.ID)
	if err := syscall.Kill(st.ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shim to die", func() bool { return !shim.ProcessAlive(st.ShimPID, st.ShimStart) })
	if !groupAlive(s.PID) {
		t.Fatal("the replica died with its shim")
	}

	ta2 := startAgent(t, f.srv.URL, data)
	got := f.waitExited(t, r.ID)
	if !got.Lost || got.ExitCode != -1 || !strings.Contains(got.Error, "lost") || got.Signal != "" {
		t.Errorf("status %+v, want lost, exit -1", got)
	}
	if !shim.GroupGone(s.PID) {
		t.Errorf("group %d still has live processes after the loss was reported", s.PID)
	}
	if log := ta2.localLog(t, r.ID); !strings.Contains(log, "got TERM") {
		t.Errorf("log %q: the orphaned replica was not stopped with SIGTERM", log)
	}
}

// writeRecord writes a replica record into data as an agent would.
func writeRecord(t *testing.T, data string, rec record) string {
	t.Helper()
	dir := filepath.Join(data, "replicas", rec.Replica.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, recordFile), rec); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRebootedNode starts an agent on records written in another boot of
// the machine: a replica whose shim recorded an exit is reported with it,
// one without an exit file is lost (with or without a shim file), and a
// replica of an old agent (no shim) is reported as before, exit -1.
func TestRebootedNode(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	data := t.TempDir()
	started := time.Now().Add(-time.Hour).UTC()
	rec := func(id string, shim bool) record {
		return record{Replica: replica(id, "true"), BootID: "an-earlier-boot", Shim: shim,
			Status: api.ReplicaStatus{ID: id, Job: "j1", Phase: api.ReplicaRunning, PID: 4242, StartedAt: started}}
	}
	dir := writeRecord(t, data, rec("finished", true))
	if err := shim.WriteDurable(filepath.Join(dir, shim.StartedFile), shim.Started{ShimPID: 4241, PID: 4242, BootID: "an-earlier-boot"}); err != nil {
		t.Fatal(err)
	}
	if err := shim.WriteDurable(filepath.Join(dir, shim.ExitFile), shim.Exit{PID: 4242, ExitCode: 0, FinishedAt: started}); err != nil {
		t.Fatal(err)
	}
	dir = writeRecord(t, data, rec("running", true))
	if err := shim.WriteDurable(filepath.Join(dir, shim.StartedFile), shim.Started{ShimPID: 4241, PID: 4242, BootID: "an-earlier-boot"}); err != nil {
		t.Fatal(err)
	}
	writeRecord(t, data, rec("starting", true))
	writeRecord(t, data, rec("old", false))
	startAgent(t, f.srv.URL, data)
	tests := []struct {
		id   string
		code int
		lost bool
		err  string
	}{
		{"finished", 0, false, ""},
		{"running", -1, true, "node restarted"},
		{"starting", -1, true, "node restarted"},
		{"old", -1, false, "exit status unknown"},
	}
	for _, tt := range tests {
		s := f.waitExited(t, tt.id)
		if s.ExitCode != tt.code || s.Lost != tt.lost || !strings.Contains(s.Error, tt.err) || (tt.err == "") != (s.Error == "") {
			t.Errorf("%s: %+v, want exit %d lost %v error %q", tt.id, s, tt.code, tt.lost, tt.err)
		}
	}
}

// TestOldRecordAdopted adopts a replica that an older agent started
// without a shim: it is watched by its process group, stopped on request,
// and reported with exit -1 (its status went to the older agent).
func TestOldRecordAdopted(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	data := t.TempDir()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() { shim.SignalGroup(cmd.Process.Pid, syscall.SIGKILL); <-waited })
	r := replica("old", "sleep 30")
	writeRecord(t, data, record{Replica: r, BootID: shim.BootID(),
		Status: api.ReplicaStatus{ID: r.ID, Job: r.Job, Phase: api.ReplicaRunning, PID: cmd.Process.Pid, StartedAt: time.Now()}})
	f.setWork(nil, r)
	startAgent(t, f.srv.URL, data)
	if s := f.waitRunning(t, r.ID); s.PID != cmd.Process.Pid {
		t.Fatalf("adopted %+v, want PID %d", s, cmd.Process.Pid)
	}
	f.setWork(nil)
	s := f.waitExited(t, r.ID)
	if s.ExitCode != -1 || s.Lost || !strings.Contains(s.Error, "unknown") {
		t.Errorf("status %+v, want exit -1, status unknown", s)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Error("the old replica's process was not stopped")
	}
}

// TestShimKilledWhileAgentRuns kills (-9) the shim of a replica that its
// agent started and watches: the agent stops the replica's processes and
// reports the replica lost.
func TestShimKilledWhileAgentRuns(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	ta := startAgent(t, f.srv.URL, "")
	r := replica("orphan", `trap 'echo got TERM; exit 0' TERM; echo started; while :; do sleep 0.05; done`)
	f.setWork(nil, r)
	s := f.waitRunning(t, r.ID)
	f.waitLog(t, r.ID, "started")
	if err := syscall.Kill(shimOf(t, ta, r.ID).ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := f.waitExited(t, r.ID)
	if !got.Lost || got.ExitCode != -1 || !strings.Contains(got.Error, "shim ended") {
		t.Errorf("status %+v, want lost: the shim ended", got)
	}
	if !shim.GroupGone(s.PID) {
		t.Errorf("group %d still has live processes after the loss was reported", s.PID)
	}
	if log := ta.localLog(t, r.ID); !strings.Contains(log, "got TERM") {
		t.Errorf("log %q: the orphaned replica was not stopped with SIGTERM", log)
	}
}
