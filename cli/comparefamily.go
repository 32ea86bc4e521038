package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// familyTrace is one trace of a family with its rows and their reference:
// Gavel's best average JCT, or the best entry's without Gavel.
type familyTrace struct {
	Trace     string       `json:"trace"`
	Reference float64      `json:"reference_avg_jct_s"`
	Rows      []compareRow `json:"rows"`
}

// familyScore sums up one row's ratios to the reference over a family.
type familyScore struct {
	Name    string  `json:"name"`
	GeoMean float64 `json:"geomean_ratio"`
	Max     float64 `json:"max_ratio"`
	AtMost9 int     `json:"traces_at_most_0_9"` // ratio ≤ 0.9
	AtMost1 int     `json:"traces_at_most_1"`   // ratio ≤ 1.0
	Traces  int     `json:"traces"`
}

// familyReport is what `sim compare --traces` prints with --json-rows.
type familyReport struct {
	Reference string        `json:"reference"` // "gavel" or "entries"
	Traces    []familyTrace `json:"traces"`
	Scores    []familyScore `json:"scores"`
}

// familyFiles lists the trace files of dir in name order: regular files
// whose names start with neither "." nor "README" (a family's notes).
func familyFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, badInput("--traces: %v", err)
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasPrefix(strings.ToUpper(name), "README") {
			continue
		}
		out = append(out, filepath.Join(dir, name))
	}
	if len(out) == 0 {
		return nil, badInput("--traces %s: no trace files in it", dir)
	}
	slices.Sort(out)
	return out, nil
}

// runFamily runs the comparison on every trace of o.traces and prints each
// row's ratio to the reference per trace, then each row's geometric mean,
// worst ratio and how many traces it is at or under 0.9× and 1.0×.
func runFamily(ctx context.Context, o *compareOptions, entries []compareEntry, stdout, stderr io.Writer) error {
	if o.sim.trace != "" {
		return badInput("give --trace or --traces, not both")
	}
	files, err := familyFiles(o.traces)
	if err != nil {
		return err
	}
	gavelPolicies, runner, cluster, err := o.gavelSetup()
	if err != nil {
		return err
	}
	rep := familyReport{Reference: "entries"}
	if len(gavelPolicies) > 0 {
		rep.Reference = "gavel"
	}
	for _, f := range files {
		o.sim.trace = f
		rows, err := o.compareTrace(ctx, entries, gavelPolicies, runner, cluster, stderr)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		rep.Traces = append(rep.Traces, familyTrace{Trace: filepath.Base(f), Reference: reference(rows, rep.Reference == "gavel"), Rows: rows})
	}
	o.sim.trace = ""
	rep.Scores = scores(rep.Traces)
	if o.json {
		return json.NewEncoder(stdout).Encode(rep)
	}
	return writeFamily(stdout, rep)
}

// reference is the best average JCT of Gavel's rows (gavel) or of all rows.
func reference(rows []compareRow, gavel bool) float64 {
	best := math.Inf(1)
	for _, r := range rows {
		if !gavel || r.Simulator == "gavel" {
			best = min(best, r.AvgJCT)
		}
	}
	return best
}

// scores sums up every row name's ratios over the traces, in the rows'
// order.
func scores(traces []familyTrace) []familyScore {
	var out []familyScore
	for i := range traces[0].Rows {
		sc := familyScore{Name: traces[0].Rows[i].Name, Traces: len(traces)}
		logSum := 0.0
		for _, tr := range traces {
			ratio := tr.Rows[i].AvgJCT / tr.Reference
			logSum += math.Log(ratio)
			sc.Max = max(sc.Max, ratio)
			if ratio <= 0.9 {
				sc.AtMost9++
			}
			if ratio <= 1 {
				sc.AtMost1++
			}
		}
		sc.GeoMean = math.Exp(logSum / float64(len(traces)))
		out = append(out, sc)
	}
	return out
}

// writeFamily prints one line per trace with every row's ratio, then the
// scores.
func writeFamily(w io.Writer, rep familyReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	ref := "best of Gavel's policies"
	if rep.Reference != "gavel" {
		ref = "best entry (no --gavel-policies)"
	}
	fmt.Fprintf(w, "average JCT as a ratio to the %s, per trace\n", ref)
	fmt.Fprint(tw, "trace\treference (s)\t")
	for _, r := range rep.Traces[0].Rows {
		fmt.Fprintf(tw, "%s\t", r.Name)
	}
	fmt.Fprintln(tw)
	for _, tr := range rep.Traces {
		fmt.Fprintf(tw, "%s\t%.1f\t", tr.Trace, tr.Reference)
		for _, r := range tr.Rows {
			fmt.Fprintf(tw, "%.3f\t", r.AvgJCT/tr.Reference)
		}
		fmt.Fprintln(tw)
	}
	for _, line := range []struct {
		name string
		val  func(familyScore) string
	}{
		{"geometric mean", func(s familyScore) string { return fmt.Sprintf("%.3f", s.GeoMean) }},
		{"worst", func(s familyScore) string { return fmt.Sprintf("%.3f", s.Max) }},
		{"traces ≤ 0.9×", func(s familyScore) string { return fmt.Sprintf("%d/%d", s.AtMost9, s.Traces) }},
		{"traces ≤ 1.0×", func(s familyScore) string { return fmt.Sprintf("%d/%d", s.AtMost1, s.Traces) }},
	} {
		fmt.Fprintf(tw, "%s\t\t", line.name)
		for _, s := range rep.Scores {
			fmt.Fprintf(tw, "%s\t", line.val(s))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
