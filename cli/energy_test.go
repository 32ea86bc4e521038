package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/sim/audit"
)

const storageCluster = "../testdata/clusters/storage.yaml"

// simEvents runs gpusched sim --json with an event log and returns the
// summary and the log, after auditing the log and comparing it with the
// summary.
func simEvents(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, log, _ := auditedSim(t, args...)
	return out, log
}

// auditedSim is simEvents that also returns the audit's result.
func auditedSim(t *testing.T, args ...string) (string, string, audit.Result) {
	t.Helper()
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	code, out, errs := run(t, append([]string{"sim", "--json", "--events", events}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	log, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	res, err := audit.Check(strings.NewReader(string(log)), events)
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.Compare(res, []byte(out)); err != nil {
		t.Error(err)
	}
	return out, string(log), res
}

func TestSimEnergyPlacer(t *testing.T) {
	gavelStyle := testdata + "gavel-style.jsonl"
	for _, args := range [][]string{
		// The heterogeneous cluster with storage: staging and scores.
		{"--trace", gavelStyle, "--cluster", storageCluster, "--policy", "fifo", "--backfill"},
		{"--trace", gavelStyle, "--cluster", storageCluster, "--policy", "las"},
		// A small cluster, so that the best node is often in state 3.
		{"--trace", gavelStyle, "--limit", "150", "--gpus", "v100=16,k80=16", "--gpus-per-node", "8", "--policy", "fifo", "--backfill"},
		{"--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=32,p100=32,k80=32", "--gpus-per-node", "8", "--policy", "las"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			args := append(args, "--placer", "energy")
			out, log := simEvents(t, args...)
			if !strings.Contains(out, `"placer":"energy"`) {
				t.Errorf("summary names another placer: %s", out)
			}
			out2, log2 := simEvents(t, args...)
			if out != out2 || log != log2 {
				t.Error("two runs with the same flags differ")
			}
		})
	}
}

func TestSimEnergyPauses(t *testing.T) {
	// 150 Gavel-style jobs on 32 GPUs with contention: nodes reach load
	// state 3, jobs are paused, and every pause names its best node.
	_, log := simEvents(t, "--trace", testdata+"gavel-style.jsonl", "--limit", "150", "--gpus", "v100=16,k80=16",
		"--gpus-per-node", "8", "--policy", "fifo", "--backfill", "--placer", "energy", "--contention")
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"event":"pause"`) {
			n++
			if !strings.Contains(line, `"reason":"best node n`) || !strings.HasSuffix(line, ` is in load state 3"}`) {
				t.Errorf("pause line %s", line)
			}
		}
	}
	if n == 0 {
		t.Error("no pause event")
	}
}

func TestSimStagingDelaysJobs(t *testing.T) {
	// The same placements with and without datasets: staging only adds.
	base := []string{"--cluster", storageCluster, "--policy", "fifo", "--backfill", "--placer", "pack"}
	trace := testdata + "gavel-style.jsonl"
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "bare.jsonl")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		i := strings.Index(l, `,"dataset_gb"`)
		lines = append(lines, l[:i]+"}")
	}
	if err := os.WriteFile(bare, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	with, _ := simEvents(t, append(base, "--trace", trace, "--limit", "40")...)
	without, _ := simEvents(t, append(base, "--trace", bare, "--limit", "40")...)
	jct := func(s string) float64 {
		var sum struct {
			AvgJCT float64 `json:"avg_jct_s"`
		}
		if err := json.Unmarshal([]byte(s), &sum); err != nil {
			t.Fatal(err)
		}
		return sum.AvgJCT
	}
	if !(jct(with) > jct(without)) {
		t.Errorf("avg JCT with datasets %v, without %v: staging should add", jct(with), jct(without))
	}
}

func TestSimEnergyErrors(t *testing.T) {
	dir := t.TempDir()
	noPower := filepath.Join(dir, "p40.yaml")
	if err := os.WriteFile(noPower, []byte("gpu_types: [{name: p40, mem_mib: 24576, tflops: 12}]\nnodes: [{name: a, gpu_type: p40, gpus: 8}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badNet := filepath.Join(dir, "net.yaml")
	if err := os.WriteFile(badNet, []byte("nodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nas}]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster", noPower, "--placer", "energy"}, `gpu_types[0].power: type "p40" has no default power figures`},
		{[]string{"--cluster", badNet}, `nodes[0].links[0].storage: unknown storage device "nas": the file declares none`},
	} {
		code, _, errs := run(t, append([]string{"sim"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestSimEnergyPlacerWarning: --placer energy warns exactly when its node
// choice cannot change the energy: no node sleeps, no contention applies
// and no job is staged.
func TestSimEnergyPlacerWarning(t *testing.T) {
	const warning = "gpusched: warning: --placer energy: no node sleeps and contention is off, so the energy does not " +
		"depend on which node runs a job; let idle nodes sleep (drop --sleep=false, or sleeps: false from the cluster " +
		"file) or apply --contention for the energy placer to matter (docs/ENERGY.md)\n"
	dir := t.TempDir()
	onDeclared := filepath.Join(dir, "on.yaml")
	yaml := "nodes: [{name: a, gpu_type: v100, gpus: 4, count: 2, power: {sleeps: false, contention_knee: 0.75}}]\n"
	if err := os.WriteFile(onDeclared, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	small := testdata + "gavel/small_test.trace"
	tests := []struct {
		name string
		args []string
		warn bool
	}{
		{"nodes on, no contention", []string{"--gpus", "v100=8", "--sleep=false"}, true},
		{"the defaults: nodes sleep", []string{"--gpus", "v100=8"}, false},
		{"nodes on, --contention", []string{"--gpus", "v100=8", "--sleep=false", "--contention"}, false},
		{"another placer", []string{"--gpus", "v100=8", "--sleep=false", "--placer", "spread"}, false},
		{"contention declared by the cluster file", []string{"--cluster", onDeclared}, false},
		{"declared but turned off", []string{"--cluster", onDeclared, "--contention=false"}, true},
		{"nodes on, jobs without datasets on a cluster with storage", []string{"--cluster", storageCluster, "--sleep=false"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"sim", "--json", "--trace", small, "--placer", "energy"}, tt.args...)
			code, _, errs := run(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if want := map[bool]string{true: warning}[tt.warn]; errs != want {
				t.Errorf("stderr %q, want %q", errs, want)
			}
		})
	}
	// Jobs with datasets are staged: the nodes' distance to the data matters.
	args := []string{"sim", "--json", "--trace", testdata + "gavel-style.jsonl", "--limit", "20", "--cluster", storageCluster,
		"--sleep=false", "--placer", "energy"}
	if code, _, errs := run(t, args...); code != 0 || errs != "" {
		t.Errorf("staged jobs: exit %d, stderr %q, want no warning", code, errs)
	}
}

// TestEnergyWorkedExample checks the worked example of docs/ENERGY.md ("A
// worked example") against its hand computation: X (1 GPU) and W (2 GPUs)
// of 3,600 s on a V100, Z (2 GPUs, K80 only) of 3,600 s on K80s, all at 0,
// on two 4-GPU V100 nodes and one 4-GPU K80 node. Joules per placer, with
// the defaults but no spare nodes (nodes asleep, 300 s to wake) and with
// --sleep=false.
func TestEnergyWorkedExample(t *testing.T) {
	tests := []struct {
		placer, sleep string
		joules, jct   float64
	}{
		{"pack", "--sleep=true", 12_036_000, 7500},
		{"spread", "--sleep=true", 7_788_000, 3900},
		{"energy", "--sleep=true", 6_384_000, 3900},
		{"pack", "--sleep=false", 20_682_000, 7200},
		{"spread", "--sleep=false", 7_470_000, 3600},
		{"energy", "--sleep=false", 7_470_000, 3600},
	}
	for _, tt := range tests {
		m, _ := simJSON(t, "--trace", "../testdata/energy/example.jsonl", "--throughputs", "../testdata/energy/matrix.json",
			"--gpus", "v100=8,k80=4", "--placer", tt.placer, tt.sleep, "--spare-nodes", "0")
		if e := m["energy_kwh"].(float64); math.Abs(e-tt.joules/3.6e6) > 1e-9 || m["avg_jct_s"].(float64) != tt.jct {
			t.Errorf("%s %s: %v kWh, avg JCT %v s; want %v kWh, %v s", tt.placer, tt.sleep, e, m["avg_jct_s"], tt.joules/3.6e6, tt.jct)
		}
	}
}
