package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/sim/peer"
)

// headToHead is the -section gavel setting: the loads and seeds of the
// heavy traces, and flags added to every gpusched run.
type headToHead struct {
	loads, seeds []int
	flags        []string
}

// gavelPolicies are Gavel's policies the head-to-head runs; the better of
// the two is Gavel's best non-oracle policy on every heavy trace where
// more were tried (docs/EXPERIMENTS.md, issue 21).
var gavelPolicies = []string{"max_min_fairness_perf", "max_sum_throughput_perf"}

// ownPolicies are gpusched's best non-oracle policies on those traces.
var ownPolicies = []string{"esrpt", "gittins"}

// gavelHeadToHead prints, per heavy trace of Gavel's generator (400 jobs,
// one every LOAD seconds on average, seed S; 8:8:8), Gavel's best and
// gpusched's best average JCT, and a summary per load (issue 21). Traces
// that are not committed are generated with scripts/fidelity/gavel-gentrace
// into out/experiments/gavel-gen; Gavel's answers are cached in
// out/experiments/gavel-cache. Without the Gavel peer it says so and
// returns.
func gavelHeadToHead(bin, shared string, h headToHead) error {
	fmt.Println("## Issue 21: gpusched against Gavel on heavy traces")
	fmt.Println()
	script := peer.Find(shared)
	if script == "" {
		fmt.Printf("skipped: no Gavel peer under %s/peers/gavel\n\n", shared)
		return nil
	}
	g := &peer.Gavel{Script: script, Cache: "out/experiments/gavel-cache"}
	fmt.Printf("`bin/gpusched sim --trace T --gpus v100=8,p100=8,k80=8 --policy P %s--json` for P in %s; "+
		"`%s T P 8:8:8` for P in %s. Difference: gpusched's best / Gavel's best − 1.\n\n",
		strings.Join(append(h.flags, ""), " "), strings.Join(ownPolicies, ", "), script, strings.Join(gavelPolicies, ", "))
	fmt.Println("| load (s between arrivals) | seed | Gavel's best (s) | gpusched's best (s) | difference | `esrpt` | `gittins` |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var summaries []string
	for _, load := range h.loads {
		var diffs []float64
		for _, seed := range h.seeds {
			d, err := headToHeadRow(bin, shared, g, h.flags, load, seed)
			if err != nil {
				return err
			}
			diffs = append(diffs, d)
		}
		summaries = append(summaries, loadSummary(load, diffs))
	}
	fmt.Println()
	for _, s := range summaries {
		fmt.Println(s)
	}
	fmt.Println()
	return nil
}

// headToHeadRow runs both simulators on one trace, prints its row and
// returns gpusched's best against Gavel's best, in per cent.
func headToHeadRow(bin, shared string, g *peer.Gavel, flags []string, load, seed int) (float64, error) {
	path, err := heavyTrace(shared, load, seed)
	if err != nil {
		return 0, err
	}
	gavel := math.Inf(1)
	for _, p := range gavelPolicies {
		r, err := g.Run(context.Background(), path, p, "8:8:8")
		if err != nil {
			return 0, fmt.Errorf("gavel %s on %s: %w", p, path, err)
		}
		gavel = min(gavel, r.AvgJCT)
	}
	own := make([]float64, len(ownPolicies))
	best := math.Inf(1)
	for i, p := range ownPolicies {
		args := append([]string{"--trace", path, "--gpus", "v100=8,p100=8,k80=8", "--policy", p}, flags...)
		s, err := run(bin, args)
		if err != nil {
			return 0, err
		}
		own[i] = s.AvgJCT
		best = min(best, s.AvgJCT)
	}
	pct := func(v float64) float64 { return 100 * (v/gavel - 1) }
	fmt.Printf("| %d | %d | %s | %s | %s | %s | %s |\n", load, seed, thousands(gavel), thousands(best), bold(pct(best)), signed(pct(own[0])), signed(pct(own[1])))
	return pct(best), nil
}

// bold formats a difference in per cent, in bold when it is at least 10 %
// below Gavel (the bar).
func bold(d float64) string {
	if d <= -10 {
		return "**" + signed(d) + "**"
	}
	return signed(d)
}

// signed formats a difference in per cent as the docs write it: "−9.2 %".
func signed(d float64) string {
	return strings.Replace(fmt.Sprintf("%+.1f %%", d), "-", "−", 1)
}

// thousands formats seconds with one decimal and thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	whole, frac, _ := strings.Cut(s, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return whole + "." + frac
}

// loadSummary says, for one load, the mean difference and how many seeds
// are at least 10 % below Gavel.
func loadSummary(load int, diffs []float64) string {
	var sum float64
	n := 0
	for _, d := range diffs {
		sum += d
		if d <= -10 {
			n++
		}
	}
	return fmt.Sprintf("- load %d s: mean %s; %d of %d seeds at least 10 %% below Gavel's best.", load, signed(sum/float64(len(diffs))), n, len(diffs))
}

// heavyTrace returns the trace of 400 jobs, one every load seconds on
// average, of the generator's seed: the committed one
// (testdata/traces/gavel-gen/heavy-400-sS.trace, load 3600), else one
// generated once into out/experiments/gavel-gen.
func heavyTrace(shared string, load, seed int) (string, error) {
	if load == 3600 {
		p := fmt.Sprintf("testdata/traces/gavel-gen/heavy-400-s%d.trace", seed)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	dir := "out/experiments/gavel-gen"
	p := filepath.Join(dir, fmt.Sprintf("heavy-400-i%d-s%d.trace", load, seed))
	if _, err := os.Stat(p); err == nil {
		return p, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := p + ".tmp"
	cmd := exec.Command("scripts/fidelity/gavel-gentrace", "400", strconv.Itoa(load), strconv.Itoa(seed), tmp)
	cmd.Env = append(os.Environ(), "GAVEL_PEER="+filepath.Dir(peer.Find(shared)))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gavel-gentrace 400 %d %d: %w: %s", load, seed, err, out)
	}
	return p, os.Rename(tmp, p)
}

// ints parses a comma-separated list of integers and ranges ("1-6,41").
func ints(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(f), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a <= 0 || b < a {
			return nil, fmt.Errorf("%s: %q is not a positive integer or range such as 1-6", flagName, f)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}
