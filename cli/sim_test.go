package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/cli"
)

const testdata = "../testdata/traces/"

// run executes gpusched in-process and returns its exit status and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSimDefault(t *testing.T) {
	code, out, errs := run(t, "sim")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"96 jobs", "completed", "JCT"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestEventLogAgreesWithSummary is the foundation's acceptance check: the
// event log, audited independently of the simulator, never double-books a
// GPU or holds one outside a job's life, and implies the summary's figures.
func TestEventLogAgreesWithSummary(t *testing.T) {
	runs := [][]string{
		{"--trace", testdata + "gavel/small_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "fifo"},
		{"--trace", testdata + "gavel/small_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "srtf"},
		{"--trace", testdata + "gavel/medium_test.trace", "--gpus", "v100=8,p100=8,k80=8", "--policy", "fifo", "--backfill"},
		{"--trace", testdata + "gavel/artifact_evaluation.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "srtf", "--round", "360s"},
		{"--trace", testdata + "tiresias/60_job.csv", "--gpus", "v100=16", "--policy", "srtf"},
		{"--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=64,k80=64", "--gpus-per-node", "8", "--policy", "fifo", "--backfill"},
		{"--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--policy", "srtf"},
		{"--trace", testdata + "gavel/medium_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "hlas", "--placer", "hetero"},
		{"--trace", testdata + "gavel/artifact_evaluation.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "las", "--placer", "hetero"},
		{"--trace", testdata + "gavel/small_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "tiresias", "--placer", "hetero", "--round", "60s"},
		{"--trace", testdata + "gavel/small_test.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "srtf", "--placer", "hetero"},
		{"--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=16,p100=16,k80=16", "--gpus-per-node", "8", "--policy", "hlas", "--placer", "hetero"},
		{"--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--policy", "las", "--scaler", "threshold", "--elastic-min", "0.25"},
		{"--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--policy", "las", "--scaler", "fulfillment", "--elastic-min", "0.5"},
		{"--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=16,p100=16,k80=16", "--gpus-per-node", "8", "--policy", "fifo", "--backfill",
			"--placer", "hetero", "--scaler", "fulfillment", "--elastic-min", "0.25"},
		{"--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=32,k80=32", "--gpus-per-node", "8", "--policy", "srtf",
			"--scaler", "threshold", "--elastic-min", "0.5", "--scaler-period", "1m", "--elastic-proportion", "0.6"},
	}
	for _, args := range runs {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			_, _, res := auditedSim(t, args...)
			if len(res.Running) > 0 {
				t.Errorf("jobs still running at the end: %v", res.Running)
			}
			if res.Completed == 0 {
				t.Error("no job completed")
			}
		})
	}
}

// TestSimConfigFile: a --config file sets the stages and their settings;
// a flag given on the command line wins.
func TestSimConfigFile(t *testing.T) {
	cfg := testdata + "../config/elastic.yaml"
	pollux := []string{"sim", "--json", "--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--elastic-min", "0.5", "--config", cfg}
	summary := func(args ...string) map[string]any {
		t.Helper()
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	got := summary(pollux...)
	if got["policy"] != "las" || got["scaler"] != "threshold" {
		t.Errorf("from the file: policy %v scaler %v, want las threshold", got["policy"], got["scaler"])
	}
	flagged := summary(append(pollux, "--scaler", "fulfillment", "--policy", "fifo")...)
	if flagged["policy"] != "fifo" || flagged["scaler"] != "fulfillment" {
		t.Errorf("flags must win: policy %v scaler %v", flagged["policy"], flagged["scaler"])
	}
	same := summary(append(pollux, "--scaler-period", "5m", "--elastic-proportion", "0.3")...)
	if same["avg_jct_s"] != got["avg_jct_s"] {
		t.Errorf("flags equal to the file's values changed the result: %v vs %v", same["avg_jct_s"], got["avg_jct_s"])
	}
}

func TestSimDeterministic(t *testing.T) {
	for _, args := range [][]string{
		{"--trace", testdata + "gavel/artifact_evaluation.trace", "--gpus", "v100=2,p100=2,k80=2", "--policy", "srtf"},
		{"--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=32,p100=32,k80=32", "--policy", "fifo", "--seed", "7"},
		{"--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--policy", "tiresias", "--scaler", "fulfillment", "--elastic-min", "0.5"},
		{"--trace", testdata + "pollux/workload-6.csv", "--gpus", "v100=64", "--policy", "las", "--scaler", "threshold", "--elastic-min", "0.25"},
	} {
		var outs, logs [2]string
		for i := range 2 {
			events := filepath.Join(t.TempDir(), "ev.jsonl")
			code, out, errs := run(t, append([]string{"sim", "--json", "--events", events}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			b, err := os.ReadFile(events)
			if err != nil {
				t.Fatal(err)
			}
			outs[i], logs[i] = out, string(b)
		}
		if outs[0] != outs[1] || logs[0] != logs[1] {
			t.Errorf("%v: two runs with the same flags differ", args)
		}
	}
}

func TestSimSeedChangesPhillyModels(t *testing.T) {
	args := []string{"sim", "--json", "--trace", testdata + "philly/philly-head2000.csv", "--gpus", "v100=32,p100=32,k80=32"}
	_, a, _ := run(t, append(args, "--seed", "1")...)
	_, b, _ := run(t, append(args, "--seed", "2")...)
	if a == b {
		t.Error("different seeds gave identical results: job types are not drawn from the seed")
	}
}
