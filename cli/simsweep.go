package cli

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gpusched/gpusched/sim/metrics"
	"github.com/gpusched/gpusched/sim/report"
)

// runSweep runs the trace once per policy of a --policy list, with every
// other flag the same, and prints one table comparing them (with --json
// one summary per line); --report writes the comparison (report.WriteRuns:
// index.html beside one directory per policy).
func runSweep(o *simOptions, stdout, stderr io.Writer) error {
	policies := strings.Split(o.names.Policy, ",")
	for i, p := range policies {
		policies[i] = strings.TrimSpace(p)
		if policies[i] == "" || slices.Contains(policies[:i], policies[i]) {
			return badInput("--policy %q: want distinct policy names separated by commas", o.names.Policy)
		}
	}
	if o.events != "" {
		return badInput("--events writes one run's log: give one --policy, not %d", len(policies))
	}
	var runs []report.Run
	var title string
	for _, p := range policies {
		one := *o
		one.names.Policy = p
		r, err := simulate(&one, stderr)
		if err != nil {
			return fmt.Errorf("--policy %s: %w", p, err)
		}
		r.out.abort() // no --events: nothing to keep
		runs = append(runs, r.reportRun(&one))
		title = r.title()
	}
	if o.report != "" {
		if err := report.WriteRuns(o.report, title+": "+strings.Join(policies, ", "), runs); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if o.json {
		var b bytes.Buffer
		for _, r := range runs {
			if err := report.JSON(&b, r.Summary); err != nil {
				return err
			}
		}
		_, err := stdout.Write(b.Bytes())
		return err
	}
	fmt.Fprintln(stdout, title)
	return compareTable(stdout, runs)
}

// compareTable prints the headline figures of several runs side by side.
func compareTable(w io.Writer, runs []report.Run) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tplacer\tscaler\tcompleted\tavg JCT (s)\tp50 JCT (s)\tp99 JCT (s)\tavg queue (s)\tmakespan (s)\tGPU util\tpreemptions\tenergy (kWh)\t")
	for _, r := range runs {
		s := r.Summary
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f%%\t%d\t%s\t\n", s.Policy, s.Placer, s.Scaler,
			s.Completed, s.Jobs, s.AvgJCT, s.P50JCT, s.P99JCT, s.AvgQueue, s.Makespan, 100*s.GPUUtil, s.Preemptions, energyText(s))
	}
	return tw.Flush()
}

func energyText(s metrics.Summary) string {
	if s.EnergyKWh == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *s.EnergyKWh)
}
