package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/servicetest"
	"github.com/gpusched/gpusched/service/api"
)

// binary is the gpusched executable built once for the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gpusched-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gpusched")
	build := exec.Command("go", "build", "-o", binary, "../cmd/gpusched")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build gpusched:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a long-running gpusched process (dev, server or agent).
type proc struct {
	cmd  *exec.Cmd
	out  *servicetest.SyncBuffer
	done chan struct{}
}

// start runs the binary with args in the background; the test's cleanup
// stops it (SIGTERM, then SIGKILL) and prints its output if the test failed.
func start(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	args = asAgentAccount(t, args)
	p := &proc{cmd: exec.Command(binary, args...), out: &servicetest.SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		tidyCgroups(p.out.String())
		if t.Failed() {
			t.Logf("--- output of %s (%s):\n%s", name, strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

// asAgentAccount returns args, plus, for an agent started as root without
// --user-map, a user map that runs every job as root (`default: {account:
// root}`): tests not about identity run jobs of owners without Unix
// accounts, as the agent's own account, which an agent running as root
// does only when an admin's map says so.
func asAgentAccount(t testing.TB, args []string) []string {
	if len(args) == 0 || args[0] != "agent" || os.Geteuid() != 0 || slices.Contains(args, "--user-map") {
		return args
	}
	path := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(path, []byte("default: {account: root}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(args), "--user-map", path)
}

// stop ends the process politely, then by force.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// kill9 ends the process (only it, not its process group's other members)
// with SIGKILL, as a crash would.
func (p *proc) kill9(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// freeAddr returns a loopback address with a port that was free just now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitHealthy waits until url/healthz answers 200.
func waitHealthy(t testing.TB, url string) {
	t.Helper()
	eventually(t, 20*time.Second, "server healthy at "+url, func() bool {
		r, err := http.Get(url + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cli runs a client command of the binary against server and returns its
// exit status, stdout and stderr.
func cli(t testing.TB, server string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "GPUSCHED_SERVER="+server)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatalf("gpusched %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errb.String()
}

// mustCLI is cli that fails the test on a non-zero exit.
func mustCLI(t testing.TB, server string, args ...string) string {
	t.Helper()
	code, out, errs := cli(t, server, args...)
	if code != 0 {
		t.Fatalf("gpusched %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// submit submits a shell command as a job of gpus GPUs and returns its id.
func submit(t testing.TB, server, name string, gpus int, script string) string {
	t.Helper()
	out := mustCLI(t, server, "submit", "--name", name, "--gpus", fmt.Sprint(gpus), "--", "sh", "-c", script)
	return strings.TrimSpace(out)
}

// job fetches one job through the CLI's JSON output.
func job(t testing.TB, server, id string) api.Job {
	t.Helper()
	var j api.Job
	if err := json.Unmarshal([]byte(mustCLI(t, server, "job", id, "-o", "json")), &j); err != nil {
		t.Fatalf("job %s -o json: %v", id, err)
	}
	return j
}

// jobs lists every job through the CLI's JSON output.
func jobs(t testing.TB, server string) []api.Job {
	t.Helper()
	var js []api.Job
	if err := json.Unmarshal([]byte(mustCLI(t, server, "jobs", "-o", "json")), &js); err != nil {
		t.Fatalf("jobs -o json: %v", err)
	}
	return js
}

// waitState waits until job id is in one of states and returns it.
func waitState(t testing.TB, server, id string, timeout time.Duration, states ...api.State) api.Job {
	t.Helper()
	var j api.Job
	eventually(t, timeout, fmt.Sprintf("job %s in %v", id, states), func() bool {
		j = job(t, server, id)
		for _, s := range states {
			if j.State == s {
				return true
			}
		}
		return false
	})
	return j
}

// groupAlive reports whether any process of process group pgid exists.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// clusters counts the test clusters that asked for MASTER_PORTs.
var clusters atomic.Int32

// masterPorts returns a --master-ports range of 50 ports of its own for a
// test cluster: the agents of every cluster share 127.0.0.1, and the jobs
// of two servers (each with its job j1) would otherwise get the same
// MASTER_PORT — two torchrun rendezvous on one port.
func masterPorts() string {
	base := 31000 + 50*int(clusters.Add(1)%600)
	return fmt.Sprintf("%d-%d", base, base+49)
}
