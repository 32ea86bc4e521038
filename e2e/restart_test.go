package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

func jsonBody(t testing.TB, r *http.Response, v any) {
	t.Helper()
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("decode %s answer: %v", r.Request.URL, err)
	}
}

// TestServerKill9 kills the server while jobs run and one is queued, lets a
// job finish while the server is away, and restarts it on the same data:
// every acknowledged job is still there and each runs exactly once.
func TestServerKill9(t *testing.T) {
	addr := freeAddr(t)
	url := "http://" + addr
	data := t.TempDir()
	gates := t.TempDir()
	serverArgs := []string{"server", "--auth=false", "--listen", addr, "--data", filepath.Join(data, "server")}
	srv := start(t, "server", serverArgs...)
	waitHealthy(t, url)
	start(t, "agent", "agent", "--server", url, "--name", "node1", "--gpus", "v100=4", "--data", filepath.Join(data, "agent"))
	eventually(t, 20*time.Second, "a ready node", func() bool {
		return strings.Contains(mustCLI(t, url, "nodes"), "ready")
	})
	var ids []string
	for i, g := range []string{"a", "b", "c"} {
		script := "echo started; " + gate(filepath.Join(gates, g)) + "; echo done"
		ids = append(ids, submit(t, url, "job-"+g, 2, script))
		if i < 2 {
			waitState(t, url, ids[i], 20*time.Second, api.Running)
		}
	}
	srv.kill9(t)
	touch(t, filepath.Join(gates, "a")) // finishes while the server is away
	time.Sleep(300 * time.Millisecond)

	start(t, "server (restarted)", serverArgs...)
	waitHealthy(t, url)
	if js := jobs(t, url); len(js) != 3 {
		t.Fatalf("after the restart the server has %d jobs, want the 3 acknowledged ones", len(js))
	}
	waitState(t, url, ids[0], 30*time.Second, api.Succeeded)
	waitState(t, url, ids[2], 30*time.Second, api.Running)
	touch(t, filepath.Join(gates, "b"))
	touch(t, filepath.Join(gates, "c"))
	for _, id := range ids {
		j := waitState(t, url, id, 30*time.Second, api.Succeeded, api.Failed, api.Cancelled)
		if j.State != api.Succeeded || j.Attempt != 1 {
			t.Fatalf("job %s ended %s after %d attempts, want succeeded after 1", id, j.State, j.Attempt)
		}
		var log string
		eventually(t, 10*time.Second, "the whole log of "+id, func() bool {
			log = mustCLI(t, url, "logs", id)
			return strings.Contains(log, "done")
		})
		if strings.Count(log, "started") != 1 || strings.Count(log, "done") != 1 {
			t.Fatalf("job %s log %q, want it to have run once", id, log)
		}
	}
}
