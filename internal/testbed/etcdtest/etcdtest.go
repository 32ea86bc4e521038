// Package etcdtest starts real etcd members on loopback for tests: a
// single member for the store's conformance suite, a three-member cluster
// for the tests of several servers (leader election, failover, losing the
// quorum). The etcd binary is Debian's etcd-server package, which `make
// test` installs when it is missing (`make etcd`); a test run without it
// skips, naming the package.
//
//	c := etcdtest.Start(t, 3)
//	st, _ := store.OpenEtcd(store.EtcdOptions{Endpoints: c.Endpoints()})
//	c.Kill(0)    // kill -9 one member
//	c.Restart(0) // and bring it back on its data
//
// Members run with a 50 ms heartbeat and a 500 ms election timeout, so that
// a lost leader is replaced quickly and leases as short as one second are
// allowed. Everything stops when the test ends.
package etcdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Binary returns the path of the etcd server binary, or "" when it is not
// installed ($GPUSCHED_ETCD names another one).
func Binary() string {
	if p := os.Getenv("GPUSCHED_ETCD"); p != "" {
		return p
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/etcd", "/usr/local/bin/etcd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Require skips the test when etcd is not installed.
func Require(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("etcd is not installed: the Debian package etcd-server is missing (`make etcd` installs it as root)")
	}
	return bin
}

// Cluster is a running etcd cluster on loopback.
type Cluster struct {
	t       testing.TB
	bin     string
	dir     string
	token   string
	members []*member
}

// member is one etcd process.
type member struct {
	name         string
	client, peer string // URLs
	dataDir      string
	mu           sync.Mutex
	cmd          *exec.Cmd
	done         chan struct{}
	out          bytes.Buffer
}

// Start starts an n-member cluster and waits until it answers; the test's
// cleanup kills it.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: Require(t), dir: t.TempDir(), token: fmt.Sprintf("gpusched-%d", time.Now().UnixNano())}
	ports := freePorts(t, 2*n)
	for i := range n {
		c.members = append(c.members, &member{
			name:    fmt.Sprintf("m%d", i),
			client:  fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			peer:    fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			dataDir: filepath.Join(c.dir, fmt.Sprintf("m%d", i)),
		})
	}
	t.Cleanup(c.stopAll)
	for i := range c.members {
		c.launch(i)
	}
	c.WaitReady(30 * time.Second)
	return c
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var (
		out []int
		lns []net.Listener
	)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// launch starts member i (on its existing data directory, if any).
func (c *Cluster) launch(i int) {
	m := c.members[i]
	var initial []string
	for _, o := range c.members {
		initial = append(initial, o.name+"="+o.peer)
	}
	state := "new"
	if _, err := os.Stat(m.dataDir); err == nil {
		state = "existing"
	}
	args := []string{
		"--name", m.name, "--data-dir", m.dataDir,
		"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
		"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
		"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", state,
		"--initial-cluster-token", c.token,
		"--heartbeat-interval", "50", "--election-timeout", "500",
		"--max-request-bytes", "2097152", "--logger", "zap", "--log-level", "error",
	}
	cmd := exec.Command(c.bin, args...)
	m.mu.Lock()
	m.out.Reset()
	cmd.Stdout, cmd.Stderr = &lockedWriter{m}, &lockedWriter{m}
	m.mu.Unlock()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start etcd %s: %v", m.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	m.mu.Lock()
	m.cmd, m.done = cmd, done
	m.mu.Unlock()
}

// lockedWriter appends a member's output under its lock.
type lockedWriter struct{ m *member }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	if w.m.out.Len() < 1<<20 {
		w.m.out.Write(p)
	}
	return len(p), nil
}

// Endpoints returns the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.client)
	}
	return out
}

// URL returns the cluster as a --store flag: etcd://127.0.0.1:P1,....
func (c *Cluster) URL() string {
	var hps []string
	for _, m := range c.members {
		hps = append(hps, strings.TrimPrefix(m.client, "http://"))
	}
	return "etcd://" + strings.Join(hps, ",")
}

// Kill kills member i with SIGKILL and waits for it to exit.
func (c *Cluster) Kill(i int) {
	m := c.members[i]
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts member i again on its data directory.
func (c *Cluster) Restart(i int) { c.launch(i) }

// WaitReady waits until a linearizable read succeeds through the members
// that run, failing the test after timeout.
func (c *Cluster) WaitReady(timeout time.Duration) {
	c.t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Get(ctx, "health")
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("etcd cluster not ready within %v: %v\n%s", timeout, err, c.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Output returns the members' recent output, for failure messages.
func (c *Cluster) Output() string {
	var b strings.Builder
	for _, m := range c.members {
		m.mu.Lock()
		fmt.Fprintf(&b, "--- etcd %s:\n%s\n", m.name, m.out.String())
		m.mu.Unlock()
	}
	return b.String()
}

// stopAll kills every member.
func (c *Cluster) stopAll() {
	for i := range c.members {
		c.Kill(i)
	}
	if c.t.Failed() {
		c.t.Logf("%s", c.Output())
	}
}
