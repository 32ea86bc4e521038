package cli_test

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/sim/audit"
)

// simJSON runs sim with --json and args and decodes the summary.
func simJSON(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	code, out, errs := run(t, append([]string{"sim", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return m, errs
}

// energyColumn reads jobs.csv of a report and returns its energy_kwh cells.
func energyColumn(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "energy_kwh" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("jobs.csv has no energy_kwh column: %v", rows[0])
	}
	var cells []string
	for _, r := range rows[1:] {
		cells = append(cells, r[col])
	}
	return cells
}

// TestSimEnergyEndToEnd: energy_kwh is in the --json summary and in
// jobs.csv, where the jobs' energy adds up to at most the total (the rest
// is idle nodes'), and power.png is written.
func TestSimEnergyEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	sum, errs := simJSON(t, "--trace", testdata+"gavel/small_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--report", dir)
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
	total, ok := sum["energy_kwh"].(float64)
	if !ok || total <= 0 {
		t.Fatalf("energy_kwh = %v, want a positive number", sum["energy_kwh"])
	}
	var jobs float64
	for _, c := range energyColumn(t, dir) {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || v <= 0 {
			t.Fatalf("energy_kwh cell %q: %v", c, err)
		}
		jobs += v
	}
	if !(jobs > 0 && jobs <= total*(1+1e-12)) {
		t.Errorf("jobs' energy %v kWh, total %v kWh", jobs, total)
	}
	if info, err := os.Stat(filepath.Join(dir, "power.png")); err != nil || info.Size() == 0 {
		t.Errorf("power.png: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || !strings.Contains(string(b), `"energy_kwh":`) {
		t.Errorf("summary.json lacks energy_kwh (%v): %s", err, b)
	}
	code, out, _ := run(t, "sim", "--trace", testdata+"gavel/small_test.trace", "--gpus", "v100=2,p100=2,k80=2")
	if code != 0 || !strings.Contains(out, " kWh\n") {
		t.Errorf("the summary table shows no energy:\n%s", out)
	}
}

// TestSimEnergyWithoutFigures: a GPU type without power figures gives one
// warning, no energy_kwh and empty energy cells, and the run succeeds.
func TestSimEnergyWithoutFigures(t *testing.T) {
	cluster := filepath.Join(t.TempDir(), "c.yaml")
	yaml := "gpu_types: [{name: p40, mem_mib: 24576, tflops: 12}]\n" +
		"nodes: [{name: a, gpu_type: p40, gpus: 4, count: 2}, {name: b, gpu_type: v100, gpus: 4}]\n"
	if err := os.WriteFile(cluster, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "r")
	for _, extra := range [][]string{nil, {"--contention"}} {
		args := append([]string{"--trace", testdata + "gavel/small_test.trace", "--cluster", cluster, "--report", dir}, extra...)
		sum, errs := simJSON(t, args...)
		if _, ok := sum["energy_kwh"]; ok {
			t.Errorf("%v: energy_kwh = %v without power figures for p40", extra, sum["energy_kwh"])
		}
		if strings.Count(errs, "warning") != 1 || !strings.Contains(errs, `GPU type "p40" has no power figures`) {
			t.Errorf("%v: stderr %q, want one warning naming p40", extra, errs)
		}
		for _, c := range energyColumn(t, dir) {
			if c != "" {
				t.Fatalf("%v: energy cell %q, want empty", extra, c)
			}
		}
	}
}

// TestSimSleepAndContention: nodes that sleep when idle draw less and,
// waking up, delay the jobs placed on them; --sleep=false keeps every node
// on; with contention (--contention, or declared by the cluster file) jobs
// take longer.
func TestSimSleepAndContention(t *testing.T) {
	tmp := t.TempDir()
	file := func(name, power string) string {
		p := filepath.Join(tmp, name)
		yaml := "nodes: [{name: a, gpu_type: v100, gpus: 4, count: 4" + power + "}]\n"
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	on, defaults := file("on.yaml", ", power: {sleeps: false}"), file("defaults.yaml", "")
	instant := file("instant.yaml", ", power: {sleep_w: 10, sleep_after_s: 0, wake_s: 0}")
	declared := file("declared.yaml", ", power: {sleeps: false, contention_knee: 0.75}")
	trace := []string{"--trace", testdata + "gavel/small_test.trace"}
	sim := func(args ...string) map[string]any {
		m, _ := simJSON(t, append(trace, args...)...)
		return m
	}
	a, b, d := sim("--cluster", on), sim("--cluster", instant), sim("--cluster", defaults, "--spare-nodes", "0")
	c := sim("--cluster", on, "--contention")
	kwh := func(m map[string]any) float64 { return m["energy_kwh"].(float64) }
	jct := func(m map[string]any) float64 { return m["avg_jct_s"].(float64) }
	if !(kwh(b) < kwh(a)) || jct(a) != jct(b) {
		t.Errorf("sleeping nodes that wake at once: %v kWh, avg JCT %v; nodes that stay on %v kWh, %v", kwh(b), jct(b), kwh(a), jct(a))
	}
	// Without spare nodes every job of this trace starts at 0 on a
	// sleeping node: each waits 300 s for it (on so short a run, the
	// wake-ups cost more energy than sleep saves).
	if math.Abs(jct(d)-(jct(a)+300)) > 1e-6 || kwh(d) == kwh(a) {
		t.Errorf("default nodes (asleep when idle, 300 s to wake), no spares: %v kWh, avg JCT %v; nodes that stay on %v kWh, %v", kwh(d), jct(d), kwh(a), jct(a))
	}
	// With the default two spares of the four nodes on at the start, the
	// jobs that fit on them start at once: the average JCT lies between.
	if s := sim("--cluster", defaults); !(jct(s) >= jct(a) && jct(s) < jct(d)) {
		t.Errorf("default nodes with spares: avg JCT %v, want from %v (on) to below %v (no spares)", jct(s), jct(a), jct(d))
	}
	if off := sim("--cluster", defaults, "--sleep=false"); kwh(off) != kwh(a) || jct(off) != jct(a) {
		t.Errorf("--sleep=false: %v kWh, avg JCT %v; want those of nodes that stay on, %v, %v", kwh(off), jct(off), kwh(a), jct(a))
	}
	if !(jct(c) > jct(a)) {
		t.Errorf("--contention: avg JCT %v, without %v", jct(c), jct(a))
	}
	if got := sim("--cluster", declared); jct(got) != jct(c) {
		t.Errorf("contention declared by the cluster file: avg JCT %v, want that of --contention, %v", jct(got), jct(c))
	}
	if got := sim("--cluster", declared, "--contention=false"); jct(got) != jct(a) {
		t.Errorf("declared, --contention=false: avg JCT %v, want that without contention, %v", jct(got), jct(a))
	}
}

// TestSimWakeByHand: one job of 100 s on one GPU of a --gpus cluster with
// the defaults but no spare nodes (--spare-nodes 0): the node is asleep at
// the start and up 300 s after the job wakes it, so the job ends at 400 s.
// Waking, the node (base 200 W, 4 V100s idle at 45 W) draws 200 + 4·45 =
// 380 W for 300 s, 114,000 J; then, with one GPU busy at 300 W, 635 W for
// 100 s, 63,500 J: 177,500 J. With --sleep=false: 100 s, 63,500 J; and so
// with the defaults, whose spare node is on at the start.
func TestSimWakeByHand(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "one.jsonl")
	if err := os.WriteFile(trace, []byte(`{"id":"j1","submit_s":0,"gpus":1,"duration_s":100}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		extra  []string
		jct, j float64
	}{{[]string{"--spare-nodes", "0"}, 400, 177_500}, {[]string{"--sleep=false"}, 100, 63_500}, {nil, 100, 63_500}} {
		m, _ := simJSON(t, append([]string{"--trace", trace, "--gpus", "v100=4"}, tt.extra...)...)
		if m["avg_jct_s"].(float64) != tt.jct || math.Abs(m["energy_kwh"].(float64)-tt.j/3.6e6) > 1e-12 {
			t.Errorf("%v: avg JCT %v s, %v kWh; want %v s, %v kWh", tt.extra, m["avg_jct_s"], m["energy_kwh"], tt.jct, tt.j/3.6e6)
		}
	}
}

// TestSimEnergyDeterministic: the same flags give byte-identical --json
// summaries and jobs.csv, energy included, with and without contention.
func TestSimEnergyDeterministic(t *testing.T) {
	for _, extra := range [][]string{nil, {"--contention"}} {
		args := append([]string{"sim", "--json", "--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64",
			"--gpus-per-node", "8", "--policy", "las", "--scaler", "threshold", "--elastic-min", "0.25"}, extra...)
		var outs, csvs [2]string
		for i := range 2 {
			dir := filepath.Join(t.TempDir(), "r")
			code, out, errs := run(t, append(args, "--report", dir)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			b, err := os.ReadFile(filepath.Join(dir, "jobs.csv"))
			if err != nil {
				t.Fatal(err)
			}
			outs[i], csvs[i] = out, string(b)
		}
		if outs[0] != outs[1] || csvs[0] != csvs[1] {
			t.Errorf("%v: two runs with the same flags differ", extra)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(outs[0]), &m); err != nil {
			t.Fatal(err)
		}
		if e, ok := m["energy_kwh"].(float64); !ok || e <= 0 || math.IsNaN(e) {
			t.Errorf("%v: energy_kwh %v", extra, m["energy_kwh"])
		}
	}
}

// TestSimContentionAudit: with --contention the event log, audited
// independently, still implies the summary's figures.
func TestSimContentionAudit(t *testing.T) {
	for _, args := range [][]string{
		{"--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--gpus-per-node", "8", "--policy", "las", "--scaler", "fulfillment", "--elastic-min", "0.5"},
		{"--trace", testdata + "gavel/medium_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "hlas", "--placer", "hetero"},
	} {
		events := filepath.Join(t.TempDir(), "ev.jsonl")
		code, out, errs := run(t, append([]string{"sim", "--json", "--contention", "--events", events}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		f, err := os.Open(events)
		if err != nil {
			t.Fatal(err)
		}
		res, err := audit.Check(f, events)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := audit.Compare(res, []byte(out)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}
