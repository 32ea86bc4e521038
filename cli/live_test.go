package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestLiveCommands drives the live seed 002 commands against a real
// service with one agent: nodes -o wide (the node's class and default
// thresholds), calibrate --from-server (its flags and its table), energy
// (the report, -o json and --replay), submit --data-endpoint.
func TestLiveCommands(t *testing.T) {
	_, url := serviceWithNode(t, "v100=4")
	out := mustRun(t, "nodes", "--server", url, "-o", "wide")
	for _, want := range []string{"CLASS", "LOAD-STATE", "TH1", "SOURCE", "v100x4", "catalog", "(0 new)"} {
		if !strings.Contains(out, want) {
			t.Errorf("nodes -o wide lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := run(t, "jobs", "--server", url, "-o", "wide"); code != 2 || !strings.Contains(errs, "want table, json or yaml") {
		t.Errorf("jobs -o wide: exit %d, %s", code, errs)
	}
	out = mustRun(t, "calibrate", "--from-server", "--server", url)
	if !strings.Contains(out, "CLASS") || !strings.Contains(out, "v100x4") || !strings.Contains(out, "too few samples") {
		t.Errorf("calibrate --from-server:\n%s", out)
	}
	var cal api.Calibration
	if err := json.Unmarshal([]byte(mustRun(t, "calibrate", "--from-server", "--server", url, "--json")), &cal); err != nil || len(cal.Classes) != 1 {
		t.Errorf("calibrate --from-server --json: %v %+v", err, cal)
	}
	if code, _, errs := run(t, "calibrate", "--from-server", "--server", url, "--window", "0.2"); code != 2 || !strings.Contains(errs, "--window does not go with --from-server") {
		t.Errorf("--from-server --window: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, "submit", "--server", url, "--gpus", "1", "--data-endpoint", "nas", "--", "true"); code != 2 ||
		!strings.Contains(errs, "--data-endpoint: ") {
		t.Errorf("bad --data-endpoint: exit %d, %s", code, errs)
	}
	id := strings.TrimSpace(mustRun(t, "submit", "--server", url, "--gpus", "1", "--data-endpoint", "nas:2049", "--", "true"))
	var j api.Job
	deadline := 200
	for ; deadline > 0; deadline-- {
		if err := json.Unmarshal([]byte(mustRun(t, "job", id, "--server", url, "-o", "json")), &j); err == nil && j.State.Final() {
			break
		}
		sleepShort()
	}
	if j.DataEndpoint != "nas:2049" || j.State != api.Succeeded {
		t.Fatalf("job %+v", j)
	}
	out = mustRun(t, "energy", "--server", url)
	for _, want := range []string{"Energy since", "under pack", "LOAD-STATE", "NODE", "JOB"} {
		if !strings.Contains(out, want) {
			t.Errorf("energy lacks %q:\n%s", want, out)
		}
	}
	dir := filepath.Join(t.TempDir(), "replay")
	var rep api.EnergyReport
	if err := json.Unmarshal([]byte(mustRun(t, "energy", "--server", url, "-o", "json", "--replay", dir)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.PackKWh == nil || rep.Replay == nil || !strings.Contains(rep.Replay.Command, filepath.Join(dir, "trace.jsonl")) {
		t.Errorf("report %+v", rep)
	}
	for _, f := range []string{"trace.jsonl", "cluster.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// sleepShort waits a little between polls.
func sleepShort() { time.Sleep(20 * time.Millisecond) }

// TestLiveFlagErrors: bad live flags exit 2 before anything starts.
func TestLiveFlagErrors(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cluster, []byte("nodes: [{name: a, gpu_type: v100, gpus: 2}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("nodes: [{name: a, gpu_type: v100, gpus: 0}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"dev", "--data", dir, "--cluster", cluster, "--gpus", "v100=4"}, "--cluster declares the nodes: give neither --gpus nor --name with it"},
		{[]string{"dev", "--data", dir, "--cluster", bad}, "bad.yaml: nodes[0].gpus"},
		{[]string{"server", "--data", dir, "--cluster", filepath.Join(dir, "none.yaml")}, "--cluster: open"},
		{[]string{"server", "--data", dir, "--power-sample-every", "0s"}, "--power-sample-every and --suspend-after must be positive"},
		{[]string{"agent", "--gpus", "v100=1", "--power-http", "bmc:80"}, `--power-http "bmc:80": want an http(s) URL`},
	} {
		if code, _, errs := run(t, tc.args...); code != 2 || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tc.args, code, errs, tc.err)
		}
	}
}
