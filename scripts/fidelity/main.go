// Command fidelity compares gpusched's simulator in Gavel-compatible mode
// (config/examples/gavel.yaml) with Gavel's own simulator on the same traces and
// prints the table of docs/FIDELITY.md (`make fidelity`).
//
//	go run ./scripts/fidelity [-bin bin/gpusched] [-shared ../shared] [-record]
//
// Gavel runs through the peer's runner (../shared/peers/gavel/gavel) and its
// answers are cached under out/fidelity/. Without the peer, Gavel's column
// comes from the figures recorded in testdata/fidelity/gavel.json (written
// by -record) and a note says so.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gpusched/gpusched/sim/peer"
)

// tolerance is the largest relative difference the table accepts.
const tolerance = 0.05

// recorded is the file of recorded Gavel figures.
const recorded = "testdata/fidelity/gavel.json"

type trace struct{ label, path, cluster string }

type pair struct{ ours, gavel string }

var pairs = []pair{
	{"fifo", "fifo"}, {"maxmin", "max_min_fairness_perf"},
	{"maxthroughput", "max_sum_throughput_perf"}, {"ftf-oracle", "finish_time_fairness_perf"},
}

// record is one recorded Gavel figure.
type record struct {
	Trace   string  `json:"trace"`
	Cluster string  `json:"cluster"`
	Policy  string  `json:"policy"`
	AvgJCT  float64 `json:"avg_jct_s"`
	Command string  `json:"command"`
}

func main() {
	bin := flag.String("bin", "bin/gpusched", "gpusched binary")
	shared := flag.String("shared", "../shared", "the shared folder (Gavel peer, physical-cluster traces)")
	rec := flag.Bool("record", false, "write Gavel's figures to "+recorded)
	flag.Parse()
	if err := run(*bin, *shared, *rec); err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(1)
	}
}

func traces(shared string) []trace {
	ts := []trace{
		{"small_test", "testdata/traces/gavel/small_test.trace", "2:2:2"},
		{"artifact_evaluation", "testdata/traces/gavel/artifact_evaluation.trace", "2:2:2"},
		{"medium_test", "testdata/traces/gavel/medium_test.trace", "2:2:2"},
	}
	phys := filepath.Join(shared, "traces", "gavel", "physical_cluster")
	for _, t := range []trace{{"max_min_fairness", "max_min_fairness.trace", "4:4:4"}, {"minimize_makespan", "minimize_makespan.trace", "8:8:8"}} {
		if p := filepath.Join(phys, t.path); exists(p) {
			ts = append(ts, trace{t.label, p, t.cluster})
		}
	}
	for _, g := range []string{"light-120-s1", "light-120-s2", "light-120-s3", "heavy-400-s1", "heavy-400-s2", "heavy-400-s3"} {
		ts = append(ts, trace{g, "testdata/traces/gavel-gen/" + g + ".trace", "8:8:8"})
	}
	return ts
}

func run(bin, shared string, rec bool) error {
	gavel, note, err := gavelSource(shared, rec)
	if err != nil {
		return err
	}
	fmt.Println("| trace | cluster | gpusched policy | Gavel policy | gpusched avg JCT (s) | Gavel avg JCT (s) | difference |")
	fmt.Println("| --- | --- | --- | --- | ---: | ---: | ---: |")
	var recs []record
	var misses []string
	for _, t := range traces(shared) {
		gpus, err := peer.GPUs(t.cluster)
		if err != nil {
			return err
		}
		for _, p := range pairs {
			theirs, cmd, ok, err := gavel(t, p.gavel)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			recs = append(recs, record{t.label, t.cluster, p.gavel, theirs, cmd})
			ours, err := gpusched(bin, t.path, gpus, p.ours)
			if err != nil {
				return err
			}
			diff := ours/theirs - 1
			mark := ""
			if math.Abs(diff) > tolerance {
				mark = " ✗"
				misses = append(misses, fmt.Sprintf("%s %s", t.label, p.ours))
			}
			fmt.Printf("| %s | %s | %s | %s | %.1f | %.1f | %+.1f%%%s |\n", t.label, t.cluster, p.ours, p.gavel, ours, theirs, 100*diff, mark)
		}
	}
	fmt.Println()
	fmt.Printf("gpusched: `%s sim --config config/examples/gavel.yaml --trace TRACE --gpus GPUS --policy P --seed 0 --json`; %s\n", bin, note)
	if len(misses) > 0 {
		fmt.Printf("Beyond ±%.0f%%: %v\n", 100*tolerance, misses)
	}
	if rec {
		return write(recs)
	}
	return nil
}

// gavelSource returns how to get Gavel's figure for a trace and policy:
// the peer (cached) or the recorded figures.
func gavelSource(shared string, rec bool) (func(trace, string) (float64, string, bool, error), string, error) {
	if script := peer.Find(shared); script != "" {
		g := &peer.Gavel{Script: script, Cache: "out/fidelity", Timeout: 2 * time.Hour}
		return func(t trace, policy string) (float64, string, bool, error) {
			fmt.Fprintf(os.Stderr, "gavel %s on %s %s...\n", policy, t.label, t.cluster)
			r, err := g.Run(context.Background(), t.path, policy, t.cluster)
			if err != nil {
				return 0, "", false, err
			}
			return r.AvgJCT, fmt.Sprintf("%s %s %s %s", script, t.path, policy, t.cluster), true, nil
		}, "Gavel: `" + script + " TRACE POLICY CLUSTER` (Gavel's seed 0; cached under out/fidelity/).", nil
	}
	if rec {
		return nil, "", errors.New("-record needs the Gavel peer under " + shared)
	}
	fmt.Fprintf(os.Stderr, "fidelity: no Gavel peer under %s: Gavel's column comes from %s\n", shared, recorded)
	data, err := os.ReadFile(recorded)
	if err != nil {
		return nil, "", fmt.Errorf("skip: no Gavel peer and no recorded figures: %w", err)
	}
	var recs []record
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, "", fmt.Errorf("%s: %w", recorded, err)
	}
	return func(t trace, policy string) (float64, string, bool, error) {
		for _, r := range recs {
			if r.Trace == t.label && r.Cluster == t.cluster && r.Policy == policy {
				return r.AvgJCT, r.Command, true, nil
			}
		}
		return 0, "", false, nil
	}, "Gavel: figures recorded in " + recorded + " (no peer here).", nil
}

// gpusched runs one gpusched simulation in Gavel-compatible mode.
func gpusched(bin, path, gpus, policy string) (float64, error) {
	out, err := exec.Command(bin, "sim", "--config", "config/examples/gavel.yaml", "--trace", path, "--gpus", gpus,
		"--policy", policy, "--seed", "0", "--json").Output()
	if err != nil {
		return 0, fmt.Errorf("gpusched %s on %s: %w", policy, path, err)
	}
	var s struct {
		AvgJCT float64 `json:"avg_jct_s"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return 0, fmt.Errorf("gpusched %s on %s: %w", policy, path, err)
	}
	return s.AvgJCT, nil
}

func write(recs []record) error {
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(recorded), 0o755); err != nil {
		return err
	}
	return os.WriteFile(recorded, append(data, '\n'), 0o644)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
