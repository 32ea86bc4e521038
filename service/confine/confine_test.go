package confine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
)

// host returns a Host for the test's boxes, or skips saying why there is
// none.
func host(t testing.TB) Host {
	t.Helper()
	h, err := Detect("gpusched-test-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Skipf("no cgroups to test with: %v", err)
	}
	t.Cleanup(h.Tidy)
	return h
}

// run starts sh -c script in box b and waits for it; it returns the
// output and the wait status.
func run(t *testing.T, b Box, script string) (string, syscall.WaitStatus) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := b.Start(cmd); err != nil {
		t.Fatalf("start in box: %v", err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	return out.String(), cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// create makes box name under h with l, removed at the test's end.
func create(t *testing.T, h Host, name string, l Limits) Box {
	t.Helper()
	b, err := h.Create(name, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Kill()
		if err := removeSoon(b); err != nil {
			t.Errorf("remove box %s: %v", name, err)
		}
	})
	return b
}

// removeSoon removes b once its killed members are gone.
func removeSoon(b Box) error {
	var err error
	for range 100 {
		if err = b.Remove(); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

func TestBoxOutOfMemory(t *testing.T) {
	b := create(t, host(t), "oom", Limits{MemoryBytes: 32 << 20, Pids: 64})
	// 100 MB in a shell variable: more than the box's 32 MiB.
	out, ws := run(t, b, `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo survived ${#x}`)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("exit %v, want killed by SIGKILL; output %q", ws, out)
	}
	n, err := b.OOMKills()
	if err != nil || n == 0 {
		t.Errorf("OOMKills = %d, %v; want at least one", n, err)
	}
	small := create(t, host(t), "fits", Limits{MemoryBytes: 32 << 20, Pids: 64})
	if out, ws := run(t, small, `x=$(head -c 1000000 /dev/zero | tr '\0' a); echo ${#x}`); ws.ExitStatus() != 0 ||
		strings.TrimSpace(out) != "1000000" {
		t.Errorf("1 MB in a 32 MiB box: %v %q", ws, out)
	}
	if n, err := small.OOMKills(); err != nil || n != 0 {
		t.Errorf("OOMKills of the box that fits = %d, %v; want 0", n, err)
	}
}

func TestBoxPidsLimit(t *testing.T) {
	b := create(t, host(t), "pids", Limits{Pids: 8})
	out, _ := run(t, b, `for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 2 & done; wait; echo done`)
	if !strings.Contains(out, "fork") && !strings.Contains(out, "Resource temporarily unavailable") &&
		!strings.Contains(out, "Cannot") {
		t.Errorf("12 children in a box of 8 tasks: no fork failure in %q", out)
	}
}

func TestBoxCPUQuota(t *testing.T) {
	b := create(t, host(t), "cpu", Limits{CPUMillis: 250})
	start := time.Now()
	run(t, b, `end=$(($(date +%s) + 2)); while [ $(date +%s) -lt $end ]; do :; done`)
	wall := time.Since(start)
	s, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	share := s.CPU.Seconds() / wall.Seconds()
	t.Logf("busy loop in a 250m box: %v CPU in %v wall (%.2f CPUs), %d throttled periods", s.CPU, wall, share, s.Throttled)
	if s.CPULimit != 250 {
		t.Errorf("CPU limit read back = %dm, want 250m", s.CPULimit)
	}
	if share > 0.35 || s.Throttled == 0 {
		t.Errorf("busy loop used %.2f CPUs with %d throttled periods; want at most about 0.25 and some throttling", share, s.Throttled)
	}
}

func TestBoxKillReachesEscapedProcesses(t *testing.T) {
	b := create(t, host(t), "kill", Limits{Pids: 32})
	cmd := exec.Command("sh", "-c", "setsid sleep 300 & sleep 300 & sleep 300")
	if err := b.Start(cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor(t, "three members", func() bool { pids, _ := b.Pids(); return len(pids) >= 3 })
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	waitFor(t, "an empty box", b.Empty)
	if err := b.Remove(); err != nil {
		t.Errorf("remove the emptied box: %v", err)
	}
}

// waitFor waits up to 10 s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// fakeGPUs makes device nodes nvidia0..n-1 (major 195, as the NVIDIA
// driver's) and nvidiactl in a new directory. Opening one gives ENXIO (no
// driver behind it) where the cgroup allows it and EPERM where it does
// not.
func fakeGPUs(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := agenttest.FakeGPUs(dir, n); err != nil {
		t.Skipf("fake GPUs: %v (the test needs root)", err)
	}
	return dir
}

// openScript tries to open each of paths and prints NAME:ok, NAME:EPERM
// or NAME:ENXIO.
func openScript(paths ...string) string {
	var s strings.Builder
	for _, p := range paths {
		name := filepath.Base(p)
		fmt.Fprintf(&s, "if msg=$( (exec 3<%s) 2>&1); then echo %s:ok; else case $msg in *ermitted*) echo %s:EPERM;; "+
			"*'No such device'*) echo %s:ENXIO;; *) echo %s:other:$msg;; esac; fi\n", p, name, name, name, name)
	}
	return s.String()
}

// checkOpens checks the outcome of openScript for each name.
func checkOpens(t *testing.T, out string, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if !strings.Contains(out, name+":"+w+"\n") {
			t.Errorf("open %s: want %s; output:\n%s", name, w, out)
		}
	}
}

func TestBoxDevicesV1OrHost(t *testing.T) {
	h := host(t)
	dir := fakeGPUs(t, 4)
	rules, err := DeviceRules(dir, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	b := create(t, h, "devices", Limits{Devices: rules})
	out, _ := run(t, b, openScript(dir+"/nvidia0", dir+"/nvidia1", dir+"/nvidia3", dir+"/nvidiactl", "/dev/null"))
	checkOpens(t, out, map[string]string{"nvidia0": "EPERM", "nvidia3": "EPERM", "nvidia1": "ENXIO", "nvidiactl": "ENXIO", "null": "ok"})
	// Outside the box every node opens as far as the driver goes.
	cmd := exec.Command("sh", "-c", openScript(dir+"/nvidia0"))
	raw, _ := cmd.CombinedOutput()
	checkOpens(t, string(raw), map[string]string{"nvidia0": "ENXIO"})
}

// unifiedDir returns a new cgroup2 directory: under /sys/fs/cgroup on a
// v2 host, under the hybrid mount /sys/fs/cgroup/unified on a v1 host that
// has one (no controllers there, but BPF device programs work), or skips.
func unifiedDir(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: the test makes a cgroup")
	}
	var st unix.Statfs_t
	root := "/sys/fs/cgroup"
	if unix.Statfs(root, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		root = "/sys/fs/cgroup/unified"
		if unix.Statfs(root, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
			t.Skip("no cgroup2 hierarchy mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified")
		}
	}
	dir := filepath.Join(root, "gpusched-test-bpf-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cgroup2: %v", err)
	}
	t.Cleanup(func() { _ = removeSoon(Box{Version: V2, Paths: map[string]string{"": dir}}) })
	return dir
}

// TestBoxDevicesV2 proves the cgroup v2 path of device confinement on the
// kernel: the BPF device filter made from DeviceRules, attached to a
// cgroup2 directory, lets a replica given GPU 1 open /dev/nvidia1 (ENXIO:
// no driver) and not nvidia0 (EPERM); Start clones the command into the
// directory and Kill ends it through cgroup.kill.
func TestBoxDevicesV2(t *testing.T) {
	dir := unifiedDir(t)
	gpus := fakeGPUs(t, 2)
	rules, err := DeviceRules(gpus, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	b := Box{Version: V2, Paths: map[string]string{"": dir}}
	if _, err := b.Update(Limits{Devices: rules}); err != nil {
		t.Fatalf("BPF device filter: %v", err)
	}
	out, _ := run(t, b, openScript(gpus+"/nvidia0", gpus+"/nvidia1", gpus+"/nvidiactl", "/dev/null", "/dev/zero"))
	checkOpens(t, out, map[string]string{"nvidia0": "EPERM", "nvidia1": "ENXIO", "nvidiactl": "ENXIO", "null": "ok", "zero": "ok"})

	cmd := exec.Command("sh", "-c", "setsid sleep 300 & sleep 300")
	if err := b.Start(cmd); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	waitFor(t, "two members", func() bool { pids, _ := b.Pids(); return len(pids) >= 2 })
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "an empty cgroup2 directory", b.Empty)
}

func TestCreateRefusesABusyBox(t *testing.T) {
	h := host(t)
	b := create(t, h, "busy", Limits{Pids: 8})
	cmd := exec.Command("sleep", "30")
	if err := b.Start(cmd); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	if _, err := h.Create("busy", Limits{Pids: 8}); err == nil || !strings.Contains(err.Error(), "holds processes") {
		t.Errorf("Create over a box with a process: %v, want it refused", err)
	}
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "an empty box", b.Empty)
	again, err := h.Create("busy", Limits{Pids: 8})
	if err != nil || !again.Exists() {
		t.Errorf("Create over the emptied box: %v", err)
	}
}

func TestOOMMessage(t *testing.T) {
	for _, tt := range []struct {
		box  Box
		want string
	}{
		{Box{Version: V2, MemoryBytes: 256 << 20}, "out of memory (memory.max 256Mi)"},
		{Box{Version: V1, MemoryBytes: 16 << 30}, "out of memory (memory.limit_in_bytes 16Gi)"},
		{Box{Version: V2}, "out of memory"},
	} {
		if got := tt.box.OOMMessage(); got != tt.want {
			t.Errorf("OOMMessage of %+v = %q, want %q", tt.box, got, tt.want)
		}
	}
}
