package peer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	out := "Job 19: 818.677\nAverage job completion time: 438.268 seconds (0.12 hours)\n" +
		"Average job completion time (low priority): 438.268 seconds (0.12 hours)\nCluster utilization: 0.263\n"
	r, err := Parse(out)
	if err != nil || r.AvgJCT != 438.268 || r.Utilization != 0.263 {
		t.Fatalf("Parse: %+v %v", r, err)
	}
	for _, bad := range []string{"", "Average job completion time: nan seconds", "Traceback (most recent call last):"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestGPUs(t *testing.T) {
	if g, err := GPUs("8:4:2"); err != nil || g != "v100=8,p100=4,k80=2" {
		t.Fatalf("GPUs: %q %v", g, err)
	}
	for _, bad := range []string{"8:8", "a:b:c", "8:8:8:8", ""} {
		if _, err := GPUs(bad); err == nil {
			t.Errorf("GPUs(%q) accepted", bad)
		}
	}
}

// TestRunCaches runs a stand-in runner (a shell script printing Gavel's
// lines) twice: the second answer comes from the cache, and a failing
// runner is an error that carries its output.
func TestRunCaches(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "gavel")
	count := filepath.Join(dir, "count")
	body := "#!/bin/sh\necho x >> " + count + "\necho 'Average job completion time: 12.5 seconds (0.00 hours)'\necho 'Cluster utilization: 0.5'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "t.trace")
	if err := os.WriteFile(trace, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &Gavel{Script: script, Cache: filepath.Join(dir, "cache")}
	for i, wantCached := range []bool{false, true} {
		r, err := g.Run(context.Background(), trace, "fifo", "1:1:1")
		if err != nil || r.AvgJCT != 12.5 || r.Cached != wantCached {
			t.Fatalf("run %d: %+v %v", i, r, err)
		}
	}
	if data, _ := os.ReadFile(count); strings.Count(string(data), "x") != 1 {
		t.Fatalf("the runner ran %d times, want once", strings.Count(string(data), "x"))
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho boom\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(context.Background(), trace, "fifo", "2:2:2"); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing runner: %v", err)
	}
	if _, err := g.Run(context.Background(), trace, "fifo", "2:2"); err == nil {
		t.Fatal("bad cluster accepted")
	}
}
