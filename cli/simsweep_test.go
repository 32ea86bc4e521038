package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimSweep runs three policies on Gavel's embedded trace: one summary
// per policy, each the same as a run of that policy alone, and with
// --report a comparison page beside one report per policy.
func TestSimSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	code, out, errs := run(t, "sim", "--policy", "fifo,las,hlas", "--json", "--report", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d summaries, want 3:\n%s", len(lines), out)
	}
	for i, p := range []string{"fifo", "las", "hlas"} {
		var s map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &s); err != nil || s["policy"] != p {
			t.Errorf("summary %d: %v %v", i, s["policy"], err)
		}
		_, alone, _ := run(t, "sim", "--policy", p, "--json")
		if strings.TrimSpace(alone) != lines[i] {
			t.Errorf("%s in the sweep differs from %s alone:\n%s\n%s", p, p, lines[i], alone)
		}
		if _, err := os.Stat(filepath.Join(dir, p, "index.html")); err != nil {
			t.Errorf("no report for %s: %v", p, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"fifo"`, `"name":"las"`, `"name":"hlas"`, `"timelines":[{"job"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the comparison page lacks %s", want)
		}
	}
	code, out, _ = run(t, "sim", "--policy", "fifo,las")
	if code != 0 || !strings.Contains(out, "avg JCT") || strings.Count(out, "pack") != 2 {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestSimSweepBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--policy", "fifo,fifo"},
		{"sim", "--policy", "fifo,,las"},
		{"sim", "--policy", "fifo,las", "--events", filepath.Join(t.TempDir(), "ev.jsonl")},
		{"sim", "--policy", "fifo,nope"},
	} {
		if code, _, errs := run(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d (%s), want 2 with a message", args, code, errs)
		}
	}
}
