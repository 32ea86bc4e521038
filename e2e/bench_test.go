package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// BenchmarkSubmitToStart measures, on a `gpusched dev` server over loopback,
// the time from sending POST /v1/jobs to the job's process running: the job
// is `touch FILE`, and the clock stops when FILE appears. It reports the
// median and 90th percentile over b.N sequential jobs.
func BenchmarkSubmitToStart(b *testing.B) {
	url := startDev(b, "v100=4")
	submitToStart(b, url, "", b.TempDir())
}

// BenchmarkSubmitToStartConfined is BenchmarkSubmitToStart on a server
// with authentication (alice's token) and an agent running as root, side
// by side (docs/BENCHMARKS.md): as-root runs every job as root, unconfined
// (a user map to root, --confine off); owner as alice's Unix account;
// root-cgroup as root in a cgroup of its own with its limits and device
// rules (--confine require); owner-cgroup as alice in a cgroup. It needs
// root, useradd and cgroups.
func BenchmarkSubmitToStartConfined(b *testing.B) {
	needCgroups(b)
	if _, err := exec.LookPath("useradd"); err != nil {
		b.Skip("useradd not found: the benchmark runs jobs as Unix account alice")
	}
	addAccount(b, "alice")
	root := filepath.Join(b.TempDir(), "users-root.yaml")
	if err := os.WriteFile(root, []byte("default: {account: root}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		args []string
	}{
		{"as-root", []string{"--confine", "off", "--user-map", root}},
		{"owner", []string{"--confine", "off"}},
		{"root-cgroup", []string{"--confine", "require", "--user-map", root}},
		{"owner-cgroup", []string{"--confine", "require"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			c := startRootCluster(b, []string{"alice"}, append([]string{"--gpus", "v100=4"}, v.args...)...)
			out := filepath.Join(c.data, "out")
			if err := os.Mkdir(out, 0o777); err != nil {
				b.Fatal(err)
			}
			if err := os.Chmod(out, 0o777); err != nil {
				b.Fatal(err)
			}
			submitToStart(b, c.url, c.tokens["alice"], out)
		})
	}
}

// submitToStart submits b.N jobs `touch DIR/N` one after the other, with
// token (none when empty), and reports the median and 90th percentile of
// the time from sending POST /v1/jobs until the file exists.
func submitToStart(b *testing.B, url, token, dir string) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		file := filepath.Join(dir, fmt.Sprint(i))
		body, _ := json.Marshal(api.JobSpec{Command: []string{"touch", file}, GPUs: 1})
		req, err := http.NewRequest(http.MethodPost, url+"/v1/jobs", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		t0 := time.Now()
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusCreated {
			b.Fatalf("submit: %d", r.StatusCode)
		}
		for {
			if _, err := os.Stat(file); err == nil {
				break
			}
			if time.Since(t0) > 30*time.Second {
				b.Fatalf("job %d never started", i)
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkShimFootprint measures the memory of a replica's shim: on a
// `gpusched dev` server, each iteration runs a job that sleeps, reads the
// Rss and Private_Dirty of its shim (the process's parent) from
// /proc/PID/smaps_rollup, and cancels it. It reports their means in KiB.
func BenchmarkShimFootprint(b *testing.B) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		b.Skip("needs /proc/PID/smaps_rollup")
	}
	url := startDev(b, "v100=4")
	dir := b.TempDir()
	var rss, private float64
	for i := range b.N {
		pidFile := filepath.Join(dir, fmt.Sprint(i))
		id := submit(b, url, fmt.Sprint("shim", i), 1, fmt.Sprintf("echo $$ > %q.tmp; mv %q.tmp %q; exec sleep 30", pidFile, pidFile, pidFile))
		var pid int
		eventually(b, 20*time.Second, "job "+id+" to start", func() bool {
			data, err := os.ReadFile(pidFile)
			return err == nil && json.Unmarshal(bytes.TrimSpace(data), &pid) == nil
		})
		smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", parentOf(b, pid)))
		if err != nil {
			b.Fatal(err)
		}
		rss += float64(smapsKiB(b, smaps, "Rss:"))
		private += float64(smapsKiB(b, smaps, "Private_Dirty:"))
		mustCLI(b, url, "cancel", id)
		waitState(b, url, id, 20*time.Second, api.Cancelled)
	}
	b.ReportMetric(rss/float64(b.N), "shim-rss-KiB")
	b.ReportMetric(private/float64(b.N), "shim-private-KiB")
}

// smapsKiB returns the value of field (e.g. "Rss:") in smaps_rollup text.
func smapsKiB(b *testing.B, smaps []byte, field string) int {
	for line := range bytes.Lines(smaps) {
		if rest, ok := bytes.CutPrefix(line, []byte(field)); ok {
			var kib int
			if _, err := fmt.Sscan(string(rest), &kib); err != nil {
				b.Fatalf("%s %q: %v", field, rest, err)
			}
			return kib
		}
	}
	b.Fatalf("no %s in smaps_rollup", field)
	return 0
}
