package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/policy"
)

const gavelConfig = "../config/examples/gavel.yaml"

// TestSimAllocationPolicies runs every allocation policy, under gpusched's
// own semantics and under Gavel's (config/examples/gavel.yaml), on a Gavel trace
// and on a slice of a trace from Gavel's generator; the event log is
// audited and must agree with the summary, and a second run must give the
// same summary and log.
func TestSimAllocationPolicies(t *testing.T) {
	traces := [][]string{
		{"--trace", testdata + "gavel/artifact_evaluation.trace", "--gpus", "v100=2,p100=2,k80=2"},
		{"--trace", testdata + "gavel-gen/light-120-s1.trace", "--limit", "40", "--gpus", "v100=4,p100=4,k80=8"},
	}
	var runs [][]string
	for _, tr := range traces {
		for _, p := range []string{"maxmin", "maxthroughput", "ftf", "ftf-oracle", "esrpt", "esrpt-oracle", "gittins"} {
			runs = append(runs, append([]string{"--policy", p, "--round", "30m"}, tr...))
		}
		for _, p := range []string{"fifo", "maxmin", "maxthroughput", "ftf-oracle"} {
			runs = append(runs, append([]string{"--policy", p, "--config", gavelConfig, "--seed", "0"}, tr...))
		}
	}
	runs = append(runs, append([]string{"--policy", "maxmin", "--placer", "hetero"}, traces[0]...))
	for _, args := range runs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, log := simEvents(t, args...)
			var sum struct {
				Jobs, Completed int
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Completed != sum.Jobs {
				t.Fatalf("summary %s: %v (every job must finish)", out, err)
			}
			out2, log2 := simEvents(t, args...)
			if out != out2 || log != log2 {
				t.Error("two runs with the same flags differ")
			}
		})
	}
}

// TestSimGavelCalibration pins the calibration against Gavel's own
// simulator (docs/FIDELITY.md): with config/examples/gavel.yaml gpusched lands on
// Gavel's figures, measured with the peer's runner
// (../shared/peers/gavel/gavel TRACE POLICY 2:2:2, recorded in
// testdata/fidelity/gavel.json): fifo on small_test 438.268 s, maxmin
// (max_min_fairness_perf) on artifact_evaluation 3,429.279 s.
func TestSimGavelCalibration(t *testing.T) {
	for _, tc := range []struct {
		trace, policy string
		gavel, tol    float64
	}{
		{"small_test", "fifo", 438.268, 0.001},
		{"artifact_evaluation", "maxmin", 3429.279, 0.01},
	} {
		code, out, errs := run(t, "sim", "--config", gavelConfig, "--trace", testdata+"gavel/"+tc.trace+".trace",
			"--gpus", "v100=2,p100=2,k80=2", "--policy", tc.policy, "--seed", "0", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var sum struct {
			AvgJCT float64 `json:"avg_jct_s"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatal(err)
		}
		if d := sum.AvgJCT/tc.gavel - 1; math.Abs(d) > tc.tol {
			t.Errorf("%s on %s: avg JCT %.3f s, Gavel %.3f s (%+.2f%%)", tc.policy, tc.trace, sum.AvgJCT, tc.gavel, 100*d)
		}
	}
}

func TestSimAllocationBadInput(t *testing.T) {
	dir := t.TempDir()
	badRound := filepath.Join(dir, "round.yaml")
	if err := os.WriteFile(badRound, []byte("allocation:\n  round: 0s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badProbe := filepath.Join(dir, "probe.yaml")
	if err := os.WriteFile(badProbe, []byte("allocation:\n  gang_probe: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badLight := filepath.Join(dir, "light.yaml")
	if err := os.WriteFile(badLight, []byte("allocation:\n  gang_probe_light: -0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badEven := filepath.Join(dir, "even.yaml")
	if err := os.WriteFile(badEven, []byte("allocation:\n  gang_probe_even: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badAdv := filepath.Join(dir, "adv.yaml")
	if err := os.WriteFile(badAdv, []byte("allocation:\n  advantage_even: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badBacklog := filepath.Join(dir, "backlog.yaml")
	if err := os.WriteFile(badBacklog, []byte("allocation:\n  priority_backlog: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badSpeed := filepath.Join(dir, "speed.yaml")
	if err := os.WriteFile(badSpeed, []byte("allocation:\n  speed_exponent: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badShare := filepath.Join(dir, "share.yaml")
	if err := os.WriteFile(badShare, []byte("allocation:\n  gang_share: 1.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badOwed := filepath.Join(dir, "owed.yaml")
	if err := os.WriteFile(badOwed, []byte("allocation:\n  gang_owed: -5m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badSim := filepath.Join(dir, "sim.yaml")
	if err := os.WriteFile(badSim, []byte("simulator:\n  restart_overhead: soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rounds-only"}, "--rounds-only needs a positive --round"},
		{[]string{"--realloc-interval", "-1s"}, "--realloc-interval must not be negative"},
		{[]string{"--policy", "esrpt", "--esrpt-exponent", "-1"}, "esrpt exponent must be between 0 and 16"},
		{[]string{"--config", badRound}, "allocation.round: must be a positive duration"},
		{[]string{"--policy", "gittins", "--gang-probe", "1"}, "gittins: the gang probe must be a quantile from 0 (none) to below 1, got 1"},
		{[]string{"--policy", "esrpt", "--gang-probe", "-0.1"}, "esrpt: the gang probe must be a quantile"},
		{[]string{"--config", badProbe}, "allocation.gang_probe: must be a quantile from 0 (none) to below 1, got 1"},
		{[]string{"--policy", "gittins", "--gang-probe-light", "1.5"}, "gittins: the light-load gang probe must be a quantile from 0 (the gang probe's) to below 1, got 1.5"},
		{[]string{"--config", badLight}, "allocation.gang_probe_light: must be a quantile from 0 (the gang probe's) to below 1, got -0.5"},
		{[]string{"--policy", "gittins", "--gang-probe-even", "-0.2"}, "gittins: the even-gang probe must be a quantile from 0 (the light-load probe's) to below 1, got -0.2"},
		{[]string{"--config", badEven}, "allocation.gang_probe_even: must be a quantile from 0 (gang_probe_light's) to below 1, got 1"},
		{[]string{"--policy", "gittins", "--advantage-even", "5"}, "gittins: the advantage weight's exponent must be from 0 (off) to 4, got 5"},
		{[]string{"--config", badAdv}, "allocation.advantage_even: must be from 0 (off) to 4, got -1"},
		{[]string{"--policy", "gittins", "--priority-backlog", "1"}, "gittins: the priority backlog must be 0 (none) or a finite multiple of the cluster's GPUs above 1, got 1"},
		{[]string{"--policy", "esrpt", "--priority-backlog", "-2"}, "esrpt: the priority backlog must be 0 (none)"},
		{[]string{"--policy", "esrpt", "--priority-backlog", "+Inf"}, "got +Inf"},
		{[]string{"--config", badBacklog}, "allocation.priority_backlog: must be 0 (none) or a finite multiple of the cluster's GPUs above 1, got 0.5"},
		{[]string{"--policy", "gittins", "--speed-exponent", "-0.5"}, "gittins: the speed exponent must be between 0 and 4, got -0.5"},
		{[]string{"--policy", "esrpt", "--speed-exponent", "NaN"}, "esrpt: the speed exponent must be between 0 and 4, got NaN"},
		{[]string{"--policy", "gittins", "--gang-share", "1.5"}, "gittins: the gang share must be a share from 0 (none) to 1, got 1.5"},
		{[]string{"--policy", "gittins", "--gang-share", "NaN"}, "gittins: the gang share must be a share from 0 (none) to 1, got NaN"},
		{[]string{"--config", badSpeed}, "allocation.speed_exponent: must be between 0 (meaning 1) and 4, got 5"},
		{[]string{"--config", badShare}, "allocation.gang_share: must be a share from 0 (none) to 1, got 1.2"},
		{[]string{"--config", badOwed}, `allocation.gang_owed: must be a duration ≥ 0 such as 30s or 6m, got "-5m"`},
		{[]string{"--policy", "gittins", "--gang-owed", "-1m"}, "gittins: the round, the reallocation interval, the move cost and the owed-gang threshold must not be negative"},
		{[]string{"--config", badSim}, `simulator.restart_overhead: must be a duration ≥ 0 such as 30s or 6m, got "soon"`},
	} {
		code, _, errs := run(t, append([]string{"sim"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestSimCompare(t *testing.T) {
	code, out, errs := run(t, "sim", "compare", "--trace", testdata+"gavel/artifact_evaluation.trace",
		"--gpus", "v100=2,p100=2,k80=2", "--policies", "fifo+hetero,maxmin,esrpt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "avg JCT") {
		t.Fatalf("want a header and three rows:\n%s", out)
	}
	// Each row's average JCT is that of `gpusched sim` with the same flags.
	for _, e := range []struct{ policy, placer string }{{"fifo", "hetero"}, {"maxmin", "pack"}, {"esrpt", "pack"}} {
		avg := simAvgJCT(t, "--trace", testdata+"gavel/artifact_evaluation.trace", "--gpus", "v100=2,p100=2,k80=2",
			"--policy", e.policy, "--placer", e.placer)
		if want := strconv.FormatFloat(avg, 'f', 1, 64); !strings.Contains(out, " "+want+" ") {
			t.Errorf("%s+%s: the table lacks %s:\n%s", e.policy, e.placer, want, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policies", ""}, "--policies: give at least one"},
		{[]string{"--policies", "fifo+pack+none+x"}, `entry "fifo+pack+none+x"`},
		{[]string{"--policies", "lottery"}, `unknown policy "lottery"`},
		{[]string{"--policies", "fifo", "--gavel-policies", "fifo"}, "--gavel-policies needs --trace"},
		{[]string{"--policies", "fifo", "--trace", testdata + "gavel/small_test.trace", "--gpus", "a100=4", "--gavel-policies", "fifo"}, "knows v100, p100 and k80 only"},
	} {
		code, _, errs := run(t, append([]string{"sim", "compare"}, tc.args...)...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestAllocationSettings: for each of esrpt's and gittins's settings,
// its key under allocation in --config sets it as its flag does (0 turns
// it off), the flag wins over the file, and the default changes gittins's
// schedule on a heavy trace with gangs.
func TestAllocationSettings(t *testing.T) {
	avg := func(args ...string) float64 {
		t.Helper()
		return simAvgJCT(t, append([]string{"--trace", testdata + "gavel-gen/heavy-400-s1.trace",
			"--gpus", "v100=8,p100=8,k80=8", "--policy", "gittins"}, args...)...)
	}
	for _, tc := range []struct {
		flag, key string
		def       float64
	}{
		{"--gang-probe", "gang_probe", policy.DefaultGangProbe},
		{"--gang-probe-light", "gang_probe_light", policy.DefaultGangProbeLight},
		{"--priority-backlog", "priority_backlog", policy.DefaultPriorityBacklog},
		{"--gang-share", "gang_share", policy.DefaultGangShare},
	} {
		off := filepath.Join(t.TempDir(), "off.yaml")
		if err := os.WriteFile(off, []byte("allocation:\n  "+tc.key+": 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		flagOff, fileOff, def := avg(tc.flag, "0"), avg("--config", off), avg()
		if flagOff != fileOff {
			t.Errorf("%s 0: %v s; %s: 0 in --config: %v s; want the same", tc.flag, flagOff, tc.key, fileOff)
		}
		if def == flagOff {
			t.Errorf("the default %s changed nothing (%v s)", tc.flag, def)
		}
		if got := avg("--config", off, tc.flag, strconv.FormatFloat(tc.def, 'g', -1, 64)); got != def {
			t.Errorf("%s over the file's 0: %v s, want the default's %v s", tc.flag, got, def)
		}
	}
}

// TestSimCompareFamily: over a directory of traces, each entry's ratio is
// its average JCT (as `gpusched sim` gives it) over the trace's reference,
// the best entry's without Gavel, and the geometric mean is that of the
// ratios.
func TestSimCompareFamily(t *testing.T) {
	dir := t.TempDir()
	traces := []string{"artifact_evaluation.trace", "small_test.trace"}
	for _, name := range traces {
		b, err := os.ReadFile(testdata + "gavel/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "sim", "compare", "--traces", dir, "--gpus", "v100=2,p100=2,k80=2",
		"--policies", "fifo+hetero,gittins+hetero", "--json-rows")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Reference string `json:"reference"`
		Traces    []struct {
			Trace     string  `json:"trace"`
			Reference float64 `json:"reference_avg_jct_s"`
			Rows      []struct {
				AvgJCT float64 `json:"avg_jct_s"`
			} `json:"rows"`
		} `json:"traces"`
		Scores []struct {
			Name    string  `json:"name"`
			GeoMean float64 `json:"geomean_ratio"`
		} `json:"scores"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Reference != "entries" || len(rep.Traces) != 2 || len(rep.Scores) != 2 {
		t.Fatalf("want 2 traces and 2 scores against the entries, got %+v", rep)
	}
	logs := make([]float64, 2)
	for i, tr := range rep.Traces {
		if tr.Trace != traces[i] {
			t.Errorf("trace %d is %s, want %s (name order, README left out)", i, tr.Trace, traces[i])
		}
		for k, e := range []struct{ policy, placer string }{{"fifo", "hetero"}, {"gittins", "hetero"}} {
			avg := simAvgJCT(t, "--trace", testdata+"gavel/"+traces[i], "--gpus", "v100=2,p100=2,k80=2",
				"--policy", e.policy, "--placer", e.placer)
			if got := tr.Rows[k].AvgJCT; got != avg {
				t.Errorf("%s %s+%s: avg JCT %v, `sim` says %v", tr.Trace, e.policy, e.placer, got, avg)
			}
		}
		best := min(tr.Rows[0].AvgJCT, tr.Rows[1].AvgJCT)
		if tr.Reference != best {
			t.Errorf("%s: reference %v, want the best entry's %v", tr.Trace, tr.Reference, best)
		}
		for k := range logs {
			logs[k] += math.Log(tr.Rows[k].AvgJCT / best)
		}
	}
	for k, sc := range rep.Scores {
		if want := math.Exp(logs[k] / 2); math.Abs(sc.GeoMean-want) > 1e-12 {
			t.Errorf("%s: geometric mean %v, want %v", sc.Name, sc.GeoMean, want)
		}
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--traces", dir, "--trace", testdata + "gavel/small_test.trace"}, "give --trace or --traces, not both"},
		{[]string{"--traces", empty}, "no trace files in it"},
		{[]string{"--traces", filepath.Join(empty, "nowhere")}, "--traces: open"},
	} {
		code, _, errs := run(t, append([]string{"sim", "compare", "--policies", "fifo"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// simAvgJCT is the average JCT that `gpusched sim ARGS --json` reports.
func simAvgJCT(t *testing.T, args ...string) float64 {
	t.Helper()
	code, js, errs := run(t, append([]string{"sim", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	var sum struct {
		AvgJCT float64 `json:"avg_jct_s"`
	}
	if err := json.Unmarshal([]byte(js), &sum); err != nil {
		t.Fatal(err)
	}
	return sum.AvgJCT
}

// TestSimConfigOrFlag: gittins's move cost (on by default) and owed-gang
// threshold (off by default) are set alike by their flag and by their key
// of the config file, and the flag wins over the file. On each trace the
// setting changes the result (the move cost: 69 preemptions against 63),
// so the comparisons below tell the settings apart.
func TestSimConfigOrFlag(t *testing.T) {
	tests := []struct {
		name, yaml  string
		trace       []string
		flag, unset string // the flag that sets what the file sets, and the one that takes it back
	}{
		{"move cost", "simulator:\n  move_cost: false\n",
			[]string{"--trace", testdata + "gavel-gen/light-120-s1.trace", "--limit", "40", "--gpus", "v100=4,p100=4,k80=8"},
			"--move-cost=false", "--move-cost"},
		{"owed gang", "allocation:\n  gang_owed: 30m\n",
			[]string{"--trace", testdata + "gavel-gen/heavy-400-s1.trace", "--limit", "200", "--gpus", "v100=4,p100=4,k80=4"},
			"--gang-owed=30m", "--gang-owed=0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			sim := func(extra ...string) string {
				t.Helper()
				args := append(append([]string{"sim", "--policy", "gittins", "--placer", "hetero", "--json"}, tt.trace...), extra...)
				code, out, errs := run(t, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", extra, code, errs)
				}
				return out
			}
			def, flagged := sim(), sim(tt.flag)
			if def == flagged {
				t.Fatalf("%s gives the default's result: the trace no longer tells them apart", tt.flag)
			}
			if got := sim("--config", file); got != flagged {
				t.Errorf("the file gives\n%s\nwant %s's\n%s", got, tt.flag, flagged)
			}
			if got := sim("--config", file, tt.unset); got != def {
				t.Errorf("%s over the file gives\n%s\nwant the default's\n%s", tt.unset, got, def)
			}
		})
	}
}
