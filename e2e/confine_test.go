package e2e

import (
	"fmt"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/internal/testbed/servicetest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/confine"
	"golang.org/x/sys/unix"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileJob is one entry of the hostile-job corpus (issue 27): a command
// a job runs to escape its account or its cgroup. The script exits 0 only
// if the escape worked; it prints MISSING when what it attacks is not
// there, which would make its failure prove nothing.
type hostileJob struct {
	name, script string
}

// escapeTargets are what the hostile jobs attack.
type escapeTargets struct {
	adminToken, nodeToken string // the server's admin token, the agent's credential
	bobDir                string // bob's replica directory
	bobPID                int    // bob's replica's main process
	bobBox                confine.Box
	devDir                string // the node's (fake) device nodes, nvidia0..3
}

// hostileJobs is the corpus of job commands that try each escape of issue
// 27: read the admin token, the node credential or another user's job
// directory or environment; signal, freeze or kill another user's replica;
// leave the job's cgroup or raise its limits; open a GPU the job was not
// given. (Exceeding memory and forking beyond the task limit kill or
// starve the job: they run as jobs of their own, TestJobsStayInTheirBoxes.)
func hostileJobs(e escapeTargets) []hostileJob {
	bobCG := e.bobBox.Paths[""]
	freeze := "echo 1 > " + bobCG + "/cgroup.freeze"
	if e.bobBox.Version == confine.V1 {
		bobCG = e.bobBox.Paths["freezer"]
		freeze = "echo FROZEN > " + bobCG + "/freezer.state"
	}
	pid := strconv.Itoa(e.bobPID)
	return []hostileJob{
		{"read-admin-token", "cat " + e.adminToken},
		{"read-node-credential", "cat " + e.nodeToken},
		{"list-bob-dir", "ls " + e.bobDir},
		{"read-bob-notes", "cat " + e.bobDir + "/work/notes"},
		{"read-bob-env-file", "cat " + e.bobDir + "/env"},
		{"read-bob-environ", "[ -e /proc/" + pid + " ] || echo MISSING; tr '\\0' '\\n' < /proc/" + pid + "/environ | grep -q GPUSCHED_TOKEN"},
		{"kill-bob", "kill " + pid},
		{"kill-bob-group", "kill -KILL -- -" + pid},
		{"freeze-bob", "[ -d " + bobCG + " ] || echo MISSING; " + freeze},
		{"kill-bob-cgroup", "[ -d " + bobCG + " ] || echo MISSING; for p in $(cat " + bobCG + "/cgroup.procs); do kill -9 $p || exit 1; done; " +
			"[ -n \"$(cat " + bobCG + "/cgroup.procs)\" ] || exit 1"},
		{"leave-cgroup", "for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do " +
			"[ -e $f ] && echo $$ 2>/dev/null > $f && exit 0; done; exit 1"},
		{"raise-memory-limit", "p=$(awk -F: '$2==\"memory\" || $1==\"0\" {print $3; exit}' /proc/self/cgroup); " +
			"for f in /sys/fs/cgroup/memory$p/memory.limit_in_bytes /sys/fs/cgroup$p/memory.max; do " +
			"[ -e $f ] && { echo -1 > $f || echo max > $f; } 2>/dev/null && exit 0; [ -e $f ] && exit 1; done; echo MISSING; exit 1"},
		{"open-other-gpu", "n=0; for i in 0 1 2 3; do [ \"$i\" = \"$CUDA_VISIBLE_DEVICES\" ] && continue; " +
			"msg=$( (exec 3<" + e.devDir + "/nvidia$i) 2>&1 ); case $msg in *ermitted*) ;; *) n=$((n+1));; esac; done; [ $n -gt 0 ]"},
	}
}

// hostileScript runs every job of the corpus in a subshell and prints
// LEAK-NAME or DENIED-NAME for each; then it checks that its own GPU is
// usable (OWN-GPU-OK: the cgroup lets it through to the driver, which the
// fake node lacks: ENXIO).
func hostileScript(jobs []hostileJob, devDir string) string {
	var s strings.Builder
	for _, j := range jobs {
		fmt.Fprintf(&s, "if ( %s ) >/dev/null 2>%s.err; then echo LEAK-%s; else echo DENIED-%s; fi; "+
			"grep -q MISSING %s.err && echo MISSING-%s; true\n", j.script, j.name, j.name, j.name, j.name, j.name)
	}
	s.WriteString("msg=$( (exec 3<" + devDir + "/nvidia$CUDA_VISIBLE_DEVICES) 2>&1 ); case $msg in *'No such device'*) echo OWN-GPU-OK;; " +
		"*) echo OWN-GPU: $msg;; esac\n")
	return s.String()
}

// fakeGPUs makes device nodes nvidia0..n-1 and nvidiactl (major 195, as
// the NVIDIA driver's, mode 0666 as the driver makes them) in a new
// directory that every account can read. Opening one fails with ENXIO (no
// driver behind it) where the cgroup lets it through, EPERM where not.
func fakeGPUs(t *testing.T, n int) string {
	t.Helper()
	dir := sharedDir(t, "gpusched-dev-", 0o755)
	if err := agenttest.FakeGPUs(dir, n); err != nil {
		t.Skipf("fake GPUs: %v (the test needs root)", err)
	}
	return dir
}

// tidyCgroups removes, when empty, the parent cgroup that an agent's log
// names (`replicas run in cgroups of their own … parent=P`): an agent that
// exits removes it itself, one killed with SIGKILL leaves it.
func tidyCgroups(log string) {
	_, rest, ok := strings.Cut(log, "replicas run in cgroups of their own")
	if !ok {
		return
	}
	_, rest, ok = strings.Cut(rest, " parent=")
	if !ok {
		return
	}
	parent, _, _ := strings.Cut(rest, " ")
	if h, err := confine.Detect(parent); err == nil {
		h.Tidy()
	}
}

// needCgroups skips the test unless this machine lets root make cgroups.
func needCgroups(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: the agent confines replicas in cgroups only as root, and the test needs useradd and mknod")
	}
	h, err := confine.Detect("gpusched-e2e-probe")
	if err != nil {
		t.Skipf("no cgroups on this machine: %v", err)
	}
	h.Tidy()
}

// TestJobsStayInTheirBoxes (issue 27, cgroups and devices): with an agent
// running as root that requires confinement, every command of the
// hostile-job corpus fails from inside alice's job while bob's job runs on;
// a job asking 256Mi that allocates 1 GiB is killed and reported out of
// memory; a job forking beyond --pids-max cannot; a 1-CPU job's busy loops
// use about one CPU (cpuacct / cpu.stat); a stopped job's cgroup is gone.
func TestJobsStayInTheirBoxes(t *testing.T) {
	needCgroups(t)
	addAccount(t, "alice")
	addAccount(t, "bob")
	dev := fakeGPUs(t, 4)
	c := startRootCluster(t, []string{"alice", "bob"}, "--gpus", "v100=4", "--device-dir", dev, "--confine", "require",
		"--pids-max", "64")
	eventually(t, 10*time.Second, "the agent says how it confines", func() bool {
		return strings.Contains(c.agent.out.String(), "replicas run in cgroups of their own")
	})
	bobJob, bobDir, bobPID := startSleeper(t, c, "bob")
	bobBox, found, err := confine.Load(filepath.Join(bobDir, "cgroup.json"))
	if err != nil || !found {
		t.Fatalf("bob's cgroup record: found %v, %v", found, err)
	}
	if pids, _ := bobBox.Pids(); !containsPID(pids, bobPID) {
		t.Fatalf("bob's replica %d is not in its cgroup %v (members %v)", bobPID, bobBox.Paths, pids)
	}
	if st, err := bobBox.Stats(); err == nil {
		t.Logf("bob's cgroup (sh, then sleep): %d KiB of memory charged, at most %d KiB", st.Memory>>10, st.MaxMemory>>10)
	}

	corpus := hostileJobs(escapeTargets{adminToken: c.tokenFile, nodeToken: c.nodeToken, bobDir: bobDir, bobPID: bobPID,
		bobBox: bobBox, devDir: dev})
	logs := runJob(t, c, "alice", api.Succeeded, "--gpus", "1", "--", "sh", "-c", hostileScript(corpus, dev))
	t.Logf("alice's hostile job:\n%s", logs)
	for _, h := range corpus {
		if !strings.Contains(logs, "DENIED-"+h.name) || strings.Contains(logs, "MISSING-"+h.name) {
			t.Errorf("hostile job %s (%s) was not denied:\n%s", h.name, h.script, logs)
		}
	}
	if !strings.Contains(logs, "OWN-GPU-OK") {
		t.Errorf("alice's job cannot open its own GPU:\n%s", logs)
	}
	if err := unix.Kill(bobPID, 0); err != nil {
		t.Errorf("bob's replica (pid %d) is gone: %v", bobPID, err)
	}
	if j := jobAs(t, c.url, c.admin, bobJob); j.State != api.Running {
		t.Errorf("bob's job: %s, want running", j.State)
	}
	checkLimits(t, c, bobBox.Version)
	checkEscapeKilled(t, c)
	mustSecure(t, c.url, c.admin, "", "cancel", bobJob)
	eventually(t, 30*time.Second, "bob's cgroup removed once his job is stopped", func() bool { return !bobBox.Exists() })
}

// checkEscapeKilled cancels alice's job whose child left its session and
// process group and ignores SIGTERM: the stop kills it through the cgroup
// after the grace period, and the cgroup goes.
func checkEscapeKilled(t *testing.T, c *rootCluster) {
	id := strings.TrimSpace(mustSecure(t, c.url, c.tokens["alice"], "", "submit", "--gpus", "1", "--grace-period", "1", "--",
		"sh", "-c", "setsid sh -c 'trap \"\" TERM; echo $$ > escaped; while :; do sleep 1; done' & exec sleep 300"))
	dir := replicaDir(t, c.agentData, id)
	var pid int
	eventually(t, 20*time.Second, "the escaped child writes its PID", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "work", "escaped"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	box, found, err := confine.Load(filepath.Join(dir, "cgroup.json"))
	if err != nil || !found {
		t.Fatalf("the job's cgroup record: %v, %v", found, err)
	}
	if pgid, _ := unix.Getpgid(pid); pgid != pid {
		t.Fatalf("the escaped child %d is in process group %d, want its own", pid, pgid)
	}
	mustSecure(t, c.url, c.admin, "", "cancel", id)
	eventually(t, 20*time.Second, "the escaped child killed through the cgroup", func() bool {
		return unix.Kill(pid, 0) == unix.ESRCH && !box.Exists()
	})
}

// checkLimits runs alice's jobs that exceed their memory, task and CPU
// limits, side by side, on an agent whose cgroups are of version.
func checkLimits(t *testing.T, c *rootCluster, version confine.Version) {
	done := make(chan func(), 2)
	go func() { // a 256Mi job that allocates 1 GiB in a shell variable
		j, logs := runJobQuiet(t, c, "alice", "--gpus", "1", "--memory", "256Mi", "--",
			"sh", "-c", "x=$(head -c 1073741824 /dev/zero | tr '\\0' a); echo survived ${#x}")
		done <- func() {
			want := "out of memory (memory.max 256Mi)"
			if version == confine.V1 {
				want = "out of memory (memory.limit_in_bytes 256Mi)"
			}
			if j.State != api.Failed || !strings.Contains(j.Reason, want) || strings.Contains(j.Reason, "exit code 137") {
				t.Errorf("the 256Mi job that allocates 1 GiB: %s (%s), want failed with %q, not exit code 137\n%s", j.State, j.Reason, want, logs)
			}
		}
	}()
	go func() { // 100 children under --pids-max 64
		j, logs := runJobQuiet(t, c, "alice", "--gpus", "1", "--", "sh", "-c",
			"i=0; while [ $i -lt 100 ]; do sleep 3 & i=$((i+1)); done; echo forked-all $i; kill $(jobs -p) 2>/dev/null; exit 0")
		done <- func() {
			if strings.Contains(logs, "forked-all 100") {
				t.Errorf("a job forked 100 children beyond --pids-max 64: %s\n%s", j.State, logs)
			}
		}
	}()
	checkCPU(t, c)
	(<-done)()
	(<-done)()
}

// checkCPU runs alice's 1-CPU job of four busy loops and measures its
// cgroup's CPU time over two seconds: its quota is one CPU, it uses at
// most about one, and when the machine gave it nearly a whole CPU it was
// throttled (on a busy shared machine it may get less, and then the
// quota cannot show; the unit test TestBoxCPUQuota, with a quarter CPU,
// always can).
func checkCPU(t *testing.T, c *rootCluster) {
	id := strings.TrimSpace(mustSecure(t, c.url, c.tokens["alice"], "", "submit", "--gpus", "1", "--cpus", "1", "--", "sh", "-c",
		"for i in 1 2 3 4; do (while :; do :; done) & done; sleep 8; kill $(jobs -p)"))
	dir := replicaDir(t, c.agentData, id)
	var box confine.Box
	eventually(t, 20*time.Second, "the CPU job's cgroup", func() bool {
		b, found, _ := confine.Load(filepath.Join(dir, "cgroup.json"))
		box = b
		return found && !box.Empty()
	})
	time.Sleep(time.Second) // the loops are running
	s0, err := box.Stats()
	start := time.Now()
	time.Sleep(2 * time.Second)
	s1, err1 := box.Stats()
	wall := time.Since(start)
	if err != nil || err1 != nil {
		t.Fatalf("the CPU job's cgroup stats: %v, %v", err, err1)
	}
	cpus := (s1.CPU - s0.CPU).Seconds() / wall.Seconds()
	t.Logf("a 1-CPU job of four busy loops used %.2f CPUs over %v, throttled in %d periods; quota %dm", cpus,
		wall.Round(time.Millisecond), s1.Throttled-s0.Throttled, s1.CPULimit)
	if s1.CPULimit != 1000 {
		t.Errorf("the 1-CPU job's cgroup has a CPU quota of %dm, want 1000m", s1.CPULimit)
	}
	if cpus > 1.15 || cpus >= 0.9 && s1.Throttled == s0.Throttled {
		t.Errorf("the 1-CPU job used %.2f CPUs, throttled in %d periods; want at most about 1, and throttled when near 1",
			cpus, s1.Throttled-s0.Throttled)
	}
	mustSecure(t, c.url, c.admin, "", "cancel", id)
}

// runJob submits user's job with args, waits for it to end in state want
// and returns its output.
func runJob(t *testing.T, c *rootCluster, user string, want api.State, args ...string) string {
	t.Helper()
	j, logs := runJobQuiet(t, c, user, args...)
	if j.State != want {
		t.Fatalf("%s's job: %s (%s), want %s\n%s", user, j.State, j.Reason, want, logs)
	}
	return logs
}

// runJobQuiet submits user's job with args and returns it once ended,
// with its output.
func runJobQuiet(t *testing.T, c *rootCluster, user string, args ...string) (api.Job, string) {
	id := strings.TrimSpace(mustSecure(t, c.url, c.tokens[user], "", append([]string{"submit"}, args...)...))
	var j api.Job
	eventually(t, 90*time.Second, user+"'s job "+id+" ends", func() bool {
		j = jobAs(t, c.url, c.admin, id)
		return j.State == api.Succeeded || j.State == api.Failed || j.State == api.Cancelled
	})
	time.Sleep(500 * time.Millisecond) // the last output, shipped every 250 ms
	return j, mustSecure(t, c.url, c.admin, "", "logs", id)
}

// containsPID reports whether pids holds pid.
func containsPID(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// TestAgentWithoutCgroups: an agent that cannot make cgroups — here
// because it runs as nobody, not root — says so at start and runs
// replicas unconfined; with --confine require it refuses to start, saying
// why.
func TestAgentWithoutCgroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: the test runs the agent as the account nobody")
	}
	dir := sharedDir(t, "gpusched-nobody-", 0o755)
	bin, data := filepath.Join(dir, "gpusched"), filepath.Join(dir, "data")
	raw, err := os.ReadFile(binary)
	if err == nil {
		err = os.WriteFile(bin, raw, 0o755)
	}
	if err == nil {
		err = os.Mkdir(data, 0o700)
	}
	if err == nil {
		err = os.Chown(data, 65534, 65534)
	}
	if err != nil {
		t.Fatal(err)
	}
	agent := func(mode string) *exec.Cmd {
		cmd := exec.Command(bin, "agent", "--server", "http://127.0.0.1:9", "--name", "n1", "--data", data, "--gpus", "v100=1",
			"--confine", mode)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd
	}
	out, err := agent("require").CombinedOutput()
	want := "confinement required (--confine require), but replicas cannot be confined: the agent runs as uid 65534, not root"
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("--confine require as nobody: %v, output %q; want a refusal saying %q", err, out, want)
	}

	cmd := agent("auto")
	var buf servicetest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	eventually(t, 20*time.Second, "the agent says it runs replicas unconfined", func() bool {
		return strings.Contains(buf.String(), "replicas run unconfined: no cgroups for them") &&
			strings.Contains(buf.String(), "not root")
	})
}
