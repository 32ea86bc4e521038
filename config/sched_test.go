package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/core/scaler"
)

// testdataSchedFile parses testdata/config/name.
func testdataSchedFile(t *testing.T, name string) *SchedFile {
	t.Helper()
	data, err := os.ReadFile("../testdata/config/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseSchedFile(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseSchedFile(t *testing.T) {
	f := testdataSchedFile(t, "elastic.yaml")
	n, o := recipe.Defaults(), recipe.DefaultOptions()
	o.Threshold.Proportion = 0 // so that the file's value shows
	f.Apply(&n, &o, func(string) bool { return false })
	if n != (recipe.Names{Policy: "las", Placer: "pack", Scaler: "threshold"}) {
		t.Errorf("names %+v", n)
	}
	if o.Threshold.Proportion != 0.3 || o.Threshold.Expand != 0.3 || o.Threshold.Shrink != 0.9 ||
		o.Threshold.Period != 5*model.Minute || o.MaxLoad != 0.97 || o.PriorityRatio != 2 || o.StarveRatio != 4 {
		t.Errorf("options %+v", o)
	}
	if _, err := recipe.New(n, o); err != nil {
		t.Errorf("recipe.New: %v", err)
	}
}

// TestSeed000File: testdata/config/seed000.yaml is seed 000's rule as
// written, the seed's example elasticConfig with reclaim off, over the
// defaults (p = 1, et = 0.8, st = 1, reclaim on).
func TestSeed000File(t *testing.T) {
	f := testdataSchedFile(t, "seed000.yaml")
	n, o := recipe.Defaults(), recipe.DefaultOptions()
	if o.Threshold != scaler.DefaultThresholdConfig() || o.Threshold.Proportion != 1 || o.Threshold.Expand != 0.8 ||
		o.Threshold.Shrink != 1 || !o.Threshold.Reclaim {
		t.Errorf("default threshold config %+v, want p 1, et 0.8, st 1, reclaim", o.Threshold)
	}
	f.Apply(&n, &o, func(string) bool { return false })
	if o.Threshold != scaler.SeedThresholdConfig() {
		t.Errorf("seed000.yaml gives %+v, want the seed's %+v", o.Threshold, scaler.SeedThresholdConfig())
	}
	if n != recipe.Defaults() {
		t.Errorf("names %+v: the file sets no stage", n)
	}
}

func TestSchedFileFlagsWin(t *testing.T) {
	f, err := ParseSchedFile("c.yaml", []byte("policy: hlas\nscaler: fulfillment\nfulfillment: {max_load: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	n := recipe.Names{Policy: "srtf", Placer: "pack", Scaler: "none"}
	o := recipe.Options{MaxLoad: 0.9}
	given := map[string]bool{"policy": true, "max-load": true}
	f.Apply(&n, &o, func(flag string) bool { return given[flag] })
	if n.Policy != "srtf" || n.Scaler != "fulfillment" || o.MaxLoad != 0.9 {
		t.Errorf("got %+v %+v: flags given must win, the rest come from the file", n, o)
	}
}

// TestReclaimSetting: elasticConfig.reclaim: false is the seeds' rules as
// written (reclaim is on by default); --reclaim given wins over the file.
func TestReclaimSetting(t *testing.T) {
	f, err := ParseSchedFile("c.yaml", []byte("elasticConfig: {reclaim: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		given bool
		want  bool
	}{{false, false}, {true, true}} {
		n, o := recipe.Defaults(), recipe.DefaultOptions()
		if !o.Threshold.Reclaim {
			t.Fatal("reclaim is off by default")
		}
		f.Apply(&n, &o, func(flag string) bool { return tc.given && flag == "reclaim" })
		if o.Threshold.Reclaim != tc.want {
			t.Errorf("flag given %v: reclaim %v, want %v", tc.given, o.Threshold.Reclaim, tc.want)
		}
	}
}

func TestParseSchedFileErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown top field", "polcy: fifo\n", `c.yaml: top level: unknown field "polcy" (known: allocation, backfill, default_queue, elasticConfig`},
		{"unknown nested field", "elasticConfig:\n  expandTreshold: 0.3\n", `c.yaml: elasticConfig: unknown field "expandTreshold"`},
		{"wrong kind", "hlas: {priority_threshold_ratio: high}\n", `c.yaml: hlas.priority_threshold_ratio: want a number, got "high"`},
		{"negative ratio", "hlas: {starve_threshold_ratio: -1}\n", "c.yaml: hlas.starve_threshold_ratio: must be a positive number, got -1"},
		{"negative expand threshold", "elasticConfig: {expandThreshold: -0.1}\n", "c.yaml: elasticConfig.expandThreshold: must be a finite number ≥ 0, got -0.1"},
		{"zero period", "elasticConfig: {hpaCheckMinutes: 0}\n", "c.yaml: elasticConfig.hpaCheckMinutes: must be a positive number, got 0"},
		{"max load", "fulfillment: {max_load: -0.5}\n", "c.yaml: fulfillment.max_load: must be a positive number, got -0.5"},
		{"expand policy", "elasticConfig: {expandPolicy: retry}\n", `c.yaml: elasticConfig.expandPolicy: only "fail" is defined (seed 000), got "retry"`},
		{"scaling policy", "elasticConfig: {scalingPolicy: random}\n", `c.yaml: elasticConfig.scalingPolicy: only "priority" is defined (seed 000), got "random"`},
		{"priority backlog", "allocation: {priority_backlog: 1}\n", "c.yaml: allocation.priority_backlog: must be 0 (none) or a finite multiple of the cluster's GPUs above 1, got 1"},
		{"not yaml", "policy: [\n", "c.yaml: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSchedFile("c.yaml", []byte(tc.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func FuzzParseSchedFile(f *testing.F) {
	if data, err := os.ReadFile("../testdata/config/elastic.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("policy: fifo\nbackfill: true\ntiresias: {thresholds_gpu_s: [10, 20], promote_knob: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ParseSchedFile("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml: ") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		n, o := recipe.Defaults(), recipe.DefaultOptions()
		sf.Apply(&n, &o, func(string) bool { return false })
		_, _ = recipe.New(n, o) // must not panic; bad names are its errors
	})
}

// TestGavelExample checks config/examples/gavel.yaml, the Gavel-compatible
// settings (docs/FIDELITY.md).
func TestGavelExample(t *testing.T) {
	data, err := os.ReadFile("examples/gavel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseSchedFile("gavel.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	n, o := recipe.Defaults(), recipe.DefaultOptions()
	f.Apply(&n, &o, func(string) bool { return false })
	if !o.Alloc.Gavel || o.Alloc.Realloc != 32*model.Minute || f.AllocationRound() {
		t.Errorf("allocation settings %+v", o.Alloc)
	}
	s := f.Sim()
	if s.Round == nil || *s.Round != 6*time.Minute || s.RestartOverhead == nil || *s.RestartOverhead != 0 ||
		s.RoundsOnly == nil || !*s.RoundsOnly {
		t.Errorf("simulator settings %+v", s)
	}
}

// TestConfigDocExample parses the example of docs/CONFIG.md.
func TestConfigDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/CONFIG.md has no yaml example")
	}
	f, err := ParseSchedFile("CONFIG.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	n, o := recipe.Defaults(), recipe.DefaultOptions()
	f.Apply(&n, &o, func(string) bool { return false })
	if o.Alloc.Round != 6*model.Minute || o.Alloc.Gavel || o.Alloc.Realloc != 0 {
		t.Errorf("allocation settings %+v", o.Alloc)
	}
}

func TestEnergyBlock(t *testing.T) {
	f, err := ParseSchedFile("s.yaml", []byte("energy:\n  suspend_idle: true\n  suspend_after: 90s\n  suspend_hook: [ipmitool, power, soft]\n"+
		"  calibrate_window: 0.15\n  calibrate_tolerance: 0.5\n  min_new_samples: 12\n  rtt_window: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := f.Energy()
	if !*e.SuspendIdle || *e.SuspendAfter != 90*time.Second || len(e.SuspendHook) != 3 || *e.CalibrateWindow != 0.15 ||
		*e.CalibrateTolerance != 0.5 || *e.MinNewSamples != 12 || *e.RTTWindow != 7 {
		t.Errorf("settings %+v", e)
	}
	if e := (&SchedFile{}).Energy(); e.SuspendIdle != nil || e.SuspendAfter != nil {
		t.Errorf("no block: %+v", e)
	}
	for _, tc := range []struct{ yaml, err string }{
		{"energy: {suspend_after: soon}", `s.yaml: energy.suspend_after: must be a positive duration such as 10m, got "soon"`},
		{"energy: {suspend_hook: [\"\"]}", "s.yaml: energy.suspend_hook: the program (first element) is empty"},
		{"energy: {calibrate_window: 2}", "s.yaml: energy.calibrate_window: must be in (0, 1], got 2"},
		{"energy: {calibrate_tolerance: 0}", "s.yaml: energy.calibrate_tolerance: must be a positive number, got 0"},
		{"energy: {rtt_window: 0}", "s.yaml: energy.rtt_window: must be 1..100000, got 0"},
	} {
		if _, err := ParseSchedFile("s.yaml", []byte(tc.yaml)); err == nil || err.Error() != tc.err {
			t.Errorf("%s: error %v, want %q", tc.yaml, err, tc.err)
		}
	}
}
