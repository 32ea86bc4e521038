package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// slowProxy is a TCP proxy to target that waits delay before it connects
// each accepted connection through: an endpoint behind an artificial delay.
func slowProxy(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				time.Sleep(delay)
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in) }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return l.Addr().String()
}

// TestLiveDistance runs `gpusched dev` with two declared nodes, far and
// near, of the same power curve, and a storage device whose endpoint is an
// HTTP server on loopback: near reaches it directly, far (by its link's
// endpoint) through a proxy that waits 40 ms. The agents' probes measure
// it: a job without data goes to far (the first node: equal scores), a job
// whose data is on the device goes to near; a job whose endpoint no node
// can reach waits and says why.
func TestLiveDistance(t *testing.T) {
	data := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }))
	t.Cleanup(data.Close)
	near := data.URL + "/"
	far := "http://" + slowProxy(t, strings.TrimPrefix(data.URL, "http://"), 40*time.Millisecond) + "/"
	dir := t.TempDir()
	cluster := filepath.Join(dir, "cluster.yaml")
	spec := fmt.Sprintf(`storage:
  - name: data
    interfaces: [{name: eth0, bandwidth_gbps: 10, latency_ms: 0.1, endpoint: %q}]
nodes:
  - {name: far, gpu_type: v100, gpus: 2, links: [{storage: data, endpoint: %q}]}
  - {name: near, gpu_type: v100, gpus: 2}
`, near, far)
	if err := os.WriteFile(cluster, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	start(t, "dev", "dev", "--listen", addr, "--data", filepath.Join(dir, "data"), "--cluster", cluster, "--placer", "energy",
		"--probe-interval", "100ms", "--heartbeat-timeout", "3s")
	url := "http://" + addr
	waitHealthy(t, url)
	c := apiClient{t, url}
	var rtt map[string]float64
	eventually(t, 20*time.Second, "three probes of the data endpoint from each node", func() bool {
		rtt = map[string]float64{}
		for name, n := range c.nodes() {
			if n.Energy != nil {
				for _, r := range n.Energy.RTTs {
					if r.Storage == "data" && r.Samples >= 3 {
						rtt[name] = r.RTTMs
					}
				}
			}
		}
		return len(rtt) == 2
	})
	t.Logf("measured RTT to the data endpoint (median): far %.2f ms, near %.2f ms", rtt["far"], rtt["near"])
	if rtt["far"] < 30 || rtt["near"] > 20 {
		t.Errorf("RTTs far %v ms, near %v ms: want far ≥ 30 (the proxy's 40 ms) and near below 20", rtt["far"], rtt["near"])
	}
	if out := mustCLI(t, url, "nodes", "-o", "wide"); !strings.Contains(out, "data=") {
		t.Errorf("nodes -o wide shows no distance:\n%s", out)
	}

	plain := c.submit("")
	if j := waitState(t, url, plain, 20*time.Second, api.Running); !strings.HasPrefix(j.Alloc[0], "far/") {
		t.Errorf("a job without data on %v, want far (equal scores: the first node)", j.Alloc)
	}
	c.cancel(plain)
	waitState(t, url, plain, 20*time.Second, api.Cancelled)
	heavy := strings.TrimSpace(mustCLI(t, url, "submit", "--gpus", "1", "--data-endpoint", near, "--", "sleep", "600"))
	if j := waitState(t, url, heavy, 20*time.Second, api.Running); !strings.HasPrefix(j.Alloc[0], "near/") {
		t.Errorf("the job with data at %s on %v, want near (%.2f ms against %.2f)", near, j.Alloc, rtt["near"], rtt["far"])
	}

	lost := c.submit("127.0.0.1:1")
	eventually(t, 20*time.Second, "the unreachable job's reason", func() bool {
		j := job(t, url, lost)
		return j.State == api.Queued && strings.Contains(j.Reason, "data endpoint 127.0.0.1:1 is unreachable from every node")
	})
	c.cancel(lost)
	c.cancel(heavy)
}
