package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// startDev runs `gpusched dev` with gpus on a fresh data directory and
// returns its URL.
func startDev(t testing.TB, gpus string) string {
	t.Helper()
	addr := freeAddr(t)
	start(t, "dev", "dev", "--listen", addr, "--data", t.TempDir(), "--gpus", gpus)
	url := "http://" + addr
	waitHealthy(t, url)
	return url
}

// gate returns a shell snippet that waits until file exists.
func gate(file string) string {
	return fmt.Sprintf("while [ ! -e %q ]; do sleep 0.05; done", file)
}

func touch(t testing.TB, file string) {
	t.Helper()
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// visible parses "CVD=a,b" out of a job's log.
func visible(t *testing.T, log string) []string {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if _, v, ok := strings.Cut(line, "CVD="); ok {
			return strings.Split(strings.TrimSpace(v), ",")
		}
	}
	t.Fatalf("no CVD= line in log %q", log)
	return nil
}

func TestTwoAtATimeOnFourGPUs(t *testing.T) {
	url := startDev(t, "v100=4")
	dir := t.TempDir()
	var ids []string
	for i := range 3 {
		script := fmt.Sprintf("echo CVD=$CUDA_VISIBLE_DEVICES; %s", gate(filepath.Join(dir, fmt.Sprint("go", i))))
		ids = append(ids, submit(t, url, fmt.Sprint("job", i), 2, script))
	}
	waitState(t, url, ids[0], 20*time.Second, api.Running)
	waitState(t, url, ids[1], 20*time.Second, api.Running)
	if j := job(t, url, ids[2]); j.State != api.Queued {
		t.Fatalf("third job is %s while the first two hold all four GPUs, want queued", j.State)
	}
	var cvd [][]string
	for _, id := range ids[:2] {
		eventually(t, 10*time.Second, "CVD line in the log of "+id, func() bool {
			return strings.Contains(mustCLI(t, url, "logs", id), "CVD=")
		})
		cvd = append(cvd, visible(t, mustCLI(t, url, "logs", id)))
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(cvd[0]), cvd[1]...)))
	if len(cvd[0]) != 2 || len(cvd[1]) != 2 || !slices.Equal(all, []string{"0", "1", "2", "3"}) {
		t.Fatalf("CUDA_VISIBLE_DEVICES of the two running jobs: %v and %v, want two disjoint pairs of 0..3", cvd[0], cvd[1])
	}
	touch(t, filepath.Join(dir, "go0"))
	done := waitState(t, url, ids[0], 20*time.Second, api.Succeeded)
	third := waitState(t, url, ids[2], 20*time.Second, api.Running)
	if third.StartedAt.Before(*done.FinishedAt) {
		t.Fatalf("third job started at %v, before the first finished at %v", third.StartedAt, done.FinishedAt)
	}
	if j := job(t, url, ids[1]); j.State != api.Running {
		t.Fatalf("second job is %s, want still running", j.State)
	}
	touch(t, filepath.Join(dir, "go1"))
	touch(t, filepath.Join(dir, "go2"))
	for _, id := range ids {
		if j := waitState(t, url, id, 20*time.Second, api.Succeeded, api.Failed); j.State != api.Succeeded || j.ExitCode == nil || *j.ExitCode != 0 {
			t.Fatalf("job %s ended %s (exit %v), want succeeded with 0", id, j.State, j.ExitCode)
		}
	}
}

func TestFailedJobAndLogs(t *testing.T) {
	url := startDev(t, "v100=4")
	id := submit(t, url, "fails", 1, "echo to-stdout; echo to-stderr >&2; exit 3")
	j := waitState(t, url, id, 20*time.Second, api.Succeeded, api.Failed)
	if j.State != api.Failed || j.ExitCode == nil || *j.ExitCode != 3 {
		t.Fatalf("job ended %s with exit code %v, want failed with 3", j.State, j.ExitCode)
	}
	eventually(t, 10*time.Second, "both output lines in the log", func() bool {
		log := mustCLI(t, url, "logs", id)
		return strings.Contains(log, "to-stdout") && strings.Contains(log, "to-stderr")
	})
}

func TestCancelKillsProcessGroup(t *testing.T) {
	url := startDev(t, "v100=4")
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The job's shell starts a child, so the whole group must go.
	id := submit(t, url, "long", 1, fmt.Sprintf("echo $$ > %q.tmp && mv %q.tmp %q; sleep 300 & wait", pidFile, pidFile, pidFile))
	waitState(t, url, id, 20*time.Second, api.Running)
	var pgid int
	eventually(t, 10*time.Second, "the job's pid file", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pgid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	if !groupAlive(pgid) {
		t.Fatalf("process group %d not running before cancel", pgid)
	}
	mustCLI(t, url, "cancel", id)
	j := waitState(t, url, id, 30*time.Second, api.Cancelled, api.Failed, api.Succeeded)
	if j.State != api.Cancelled {
		t.Fatalf("cancelled job ended %s", j.State)
	}
	eventually(t, 5*time.Second, "process group gone", func() bool { return !groupAlive(pgid) })
}

func TestTwoNodeJob(t *testing.T) {
	addr := freeAddr(t)
	url := "http://" + addr
	data := t.TempDir()
	start(t, "server", "server", "--auth=false", "--listen", addr, "--data", filepath.Join(data, "server"))
	waitHealthy(t, url)
	for _, n := range []string{"alpha", "beta"} {
		start(t, "agent "+n, "agent", "--server", url, "--name", n, "--gpus", "v100=2", "--data", filepath.Join(data, n))
	}
	eventually(t, 20*time.Second, "two ready nodes", func() bool {
		return strings.Count(mustCLI(t, url, "nodes"), "ready") == 2
	})
	id := submit(t, url, "wide", 4, `echo "NNODES=$NNODES NODE_RANK=$NODE_RANK MASTER_ADDR=$MASTER_ADDR WORLD_SIZE=$WORLD_SIZE LWS=$LOCAL_WORLD_SIZE"; cat "$GPUSCHED_HOSTFILE"`)
	j := waitState(t, url, id, 30*time.Second, api.Succeeded, api.Failed)
	if j.State != api.Succeeded || len(j.Alloc) != 0 && len(j.Alloc) != 4 {
		t.Fatalf("2-node job ended %s with alloc %v", j.State, j.Alloc)
	}
	var log string
	// A replica's output may reach the server in more than one chunk: wait
	// for both replicas' host files too, not only their first lines.
	eventually(t, 10*time.Second, "logs of both replicas", func() bool {
		log = mustCLI(t, url, "logs", id)
		return strings.Count(log, "NNODES=") == 2 && strings.Count(log, "alpha:2") == 2 && strings.Count(log, "beta:2") == 2
	})
	var master []string
	for rank := range 2 {
		re := fmt.Sprintf("NNODES=2 NODE_RANK=%d MASTER_ADDR=", rank)
		i := strings.Index(log, re)
		if i < 0 {
			t.Fatalf("no line for node rank %d in\n%s", rank, log)
		}
		rest := log[i+len(re):]
		m, tail, _ := strings.Cut(rest, " ")
		master = append(master, m)
		if !strings.HasPrefix(tail, "WORLD_SIZE=4 LWS=2") {
			t.Fatalf("node rank %d: %q, want WORLD_SIZE=4 LWS=2", rank, tail)
		}
	}
	if master[0] != master[1] || (master[0] != "alpha" && master[0] != "beta") {
		t.Fatalf("MASTER_ADDR %v, want the same node for both ranks", master)
	}
	for _, line := range []string{"alpha:2", "beta:2"} {
		if strings.Count(log, line) != 2 {
			t.Fatalf("host file line %q not printed by both replicas:\n%s", line, log)
		}
	}
}

func TestBadRequests(t *testing.T) {
	url := startDev(t, "v100=4")
	cases := []struct {
		name, body string
		status     int
		field      string
	}{
		{"negative gpus", `{"command":["true"],"gpus":-1}`, 400, "gpus"},
		{"min above max", `{"command":["true"],"gpus":2,"min_gpus":2,"max_gpus":1}`, 400, "max_gpus"},
		{"empty command", `{"command":[],"gpus":1}`, 400, "command"},
		{"unknown field", `{"command":["true"],"gpus":1,"gpu":2}`, 400, "gpu"},
		{"too large", `{"command":["` + strings.Repeat("x", 2<<20) + `"],"gpus":1}`, 413, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := http.Post(url+"/v1/jobs", "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Body.Close()
			var e api.Error
			jsonBody(t, r, &e)
			if r.StatusCode != c.status || e.Field != c.field || e.Error == "" {
				t.Fatalf("got %d %+v, want %d naming field %q", r.StatusCode, e, c.status, c.field)
			}
		})
	}
	if js := jobs(t, url); len(js) != 0 {
		t.Fatalf("rejected requests stored %d jobs", len(js))
	}
	r, err := http.Get(url + "/v1/jobs/j404")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown job: %d, want 404", r.StatusCode)
	}
	if code, _, errs := cli(t, url, "job", "j404"); code == 0 || !strings.Contains(errs, "j404") {
		t.Fatalf("gpusched job j404: exit %d, stderr %q", code, errs)
	}
}
