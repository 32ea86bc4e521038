package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// etaOptions are the flags of `gpusched eta`.
type etaOptions struct {
	clientOptions
	accuracy bool
}

func newETACommand() *cobra.Command {
	o := &etaOptions{}
	cmd := &cobra.Command{
		Use:   "eta (JOB | --accuracy) [-o table|json|yaml]",
		Short: "Forecast when a job will start and finish; how good the forecasts have been",
		Long: "eta asks the server to forecast an active job: the live state (nodes, running jobs\n" +
			"with their progress and speeds, the queue, the policy, placer and scaler) is simulated\n" +
			"forward to predict the job's start and finish, with a P10–P90 range over perturbed\n" +
			"runs and the basis of the forecast (docs/ETA.md). --accuracy shows how far the\n" +
			"predicted starts were from the actual ones.",
		Example: "  gpusched eta j7\n" +
			"  gpusched eta j7 -o json | jq -r .predicted_start\n" +
			"  gpusched eta --accuracy",
		RunE: func(cmd *cobra.Command, args []string) error { return runETA(cmd, o, args) },
	}
	addClientFlags(cmd, &o.clientOptions)
	cmd.Flags().BoolVar(&o.accuracy, "accuracy", false, "show how good the start forecasts served so far have been")
	return cmd
}

func runETA(cmd *cobra.Command, o *etaOptions, args []string) error {
	switch {
	case o.accuracy && len(args) > 0:
		return badInput("eta: give a job or --accuracy, not both")
	case o.accuracy:
		return call(cmd, &o.clientOptions, "",
			func(ctx context.Context, c *client.Client) (api.ETAAccuracy, error) { return c.ETAAccuracy(ctx) },
			writeAccuracy)
	case len(args) != 1:
		return badInput("eta: want one job ID (gpusched eta j7) or --accuracy")
	}
	return call(cmd, &o.clientOptions, args[0],
		func(ctx context.Context, c *client.Client) (api.ETA, error) { return c.ETA(ctx, args[0]) },
		func(w io.Writer, e api.ETA) error { return writeETA(w, e, time.Now()) })
}

// writeETA prints one forecast as "Key: value" lines.
func writeETA(w io.Writer, e api.ETA, now time.Time) error {
	tw := newTable(w)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	line("Job", e.Job+" ("+string(e.State)+")")
	line("Start", etaWhen(e.PredictedStart, now)+etaRange(e.StartP10, e.StartP50, e.StartP90, now))
	line("Finish", etaWhen(e.PredictedFinish, now)+etaRange(e.FinishP10, e.FinishP50, e.FinishP90, now))
	if e.Reason != "" {
		line("Reason", cell(e.Reason))
	}
	b := e.Basis
	if b.Length != "" {
		kind := b.Length
		if b.Speed != "" {
			kind += ", " + b.Speed + " speed"
		}
		line("Basis", cell(kind+": "+b.Detail))
		learned := fmt.Sprintf("learned from %d finished jobs", b.Samples)
		if b.Samples == 0 {
			learned = "prior: no finished job of this kind yet"
		}
		line("Uncertainty", fmt.Sprintf("lengths × exp(N(%.2f, %.2f²)), %s", b.Bias, b.Sigma, learned))
		line("Simulation", fmt.Sprintf("%s/%s/%s, %d perturbed runs, active jobs by length: %s",
			b.Policy, b.Placer, b.Scaler, b.Runs, kindCounts(b.Jobs)))
	}
	line("Forecast at", e.ForecastAt.Format(time.RFC3339))
	return tw.Flush()
}

// etaWhen is a predicted time in RFC 3339 and relative to now.
func etaWhen(t *time.Time, now time.Time) string {
	if t == nil {
		return "unknown"
	}
	return t.Format(time.RFC3339) + " (" + relative(*t, now) + ")"
}

// etaRange is ", P10–P90 a – b, P50 c" when the times are known.
func etaRange(p10, p50, p90 *time.Time, now time.Time) string {
	if p10 == nil || p90 == nil || p50 == nil {
		return ""
	}
	return fmt.Sprintf("; P10–P90 %s – %s, P50 %s", relative(*p10, now), relative(*p90, now), relative(*p50, now))
}

// relative is "in 4m", "2m ago" or "now".
func relative(t, now time.Time) string {
	d := t.Sub(now)
	if d.Abs() < time.Second {
		return "now"
	}
	if d < 0 {
		return ago(t, now)
	}
	return "in " + strings.TrimSuffix(ago(now, now.Add(d)), " ago")
}

func kindCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// writeAccuracy prints the accuracy stats, overall and by lead time.
func writeAccuracy(w io.Writer, a api.ETAAccuracy) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "LEAD\tJOBS\tPREDICTIONS\tMEAN|ERR|\tMEDIAN|ERR|\tP90|ERR|\tBIAS\tIN-P10-P90\tWITHIN-10%/5S")
	row := func(label string, s api.ETAStats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", label, s.Jobs, s.Predictions, secs(s.MeanAbsErrorS),
			secs(s.MedianAbsErrorS), secs(s.P90AbsErrorS), secs(s.BiasS), pct(s.InRange, s.Predictions), pct(s.Within10, s.Predictions))
	}
	row("all", a.ETAStats)
	for _, b := range a.ByLead {
		label := fmt.Sprintf("%s+", shortDur(b.MinS))
		if b.MaxS > 0 {
			label = fmt.Sprintf("%s-%s", shortDur(b.MinS), shortDur(b.MaxS))
		}
		row(label, b.ETAStats)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "LENGTH-CLASS\tBIAS\tSIGMA\tFINISHED-JOBS")
	for _, s := range a.Spreads {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%d\n", s.Class, s.Bias, s.Sigma, s.Samples)
	}
	return tw.Flush()
}

func secs(s float64) string { return fmt.Sprintf("%.1fs", s) }

func pct(f float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func shortDur(s float64) string {
	d := time.Duration(s) * time.Second
	switch {
	case d == 0:
		return "0"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// jobETA is a job with its forecast, as `gpusched jobs --eta -o json`
// prints it.
type jobETA struct {
	api.Job
	ETA *api.ETA `json:"eta,omitempty"`
}

// runJobsETA lists the jobs with the forecasts of the active ones: one
// request for the jobs, one for every forecast (computed once per round).
func runJobsETA(cmd *cobra.Command, o *jobsOptions, state api.State) error {
	return call(cmd, &o.clientOptions, "",
		func(ctx context.Context, c *client.Client) ([]jobETA, error) {
			jobs, err := c.Jobs(ctx, state)
			if err != nil {
				return nil, err
			}
			etas, err := c.ETAs(ctx)
			if err != nil {
				return nil, err
			}
			byID := make(map[string]*api.ETA, len(etas))
			for i := range etas {
				byID[etas[i].Job] = &etas[i]
			}
			out := make([]jobETA, len(jobs))
			for i, j := range jobs {
				out[i] = jobETA{Job: j, ETA: byID[j.ID]}
			}
			return out, nil
		},
		func(w io.Writer, jobs []jobETA) error { return writeJobsETATable(w, jobs, time.Now()) })
}

// writeJobsETATable prints the jobs with their predicted start and finish.
func writeJobsETATable(w io.Writer, jobs []jobETA, now time.Time) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tGPUS\tSTART\tSTART-P10-P90\tFINISH\tBASIS")
	for _, j := range jobs {
		start, rng, finish, basis := "-", "-", "-", "-"
		if e := j.ETA; e != nil {
			start, finish, basis = shortWhen(e.PredictedStart, now), shortWhen(e.PredictedFinish, now), e.Basis.Length
			if e.StartP10 != nil && e.StartP90 != nil && j.State != api.Running {
				rng = relative(*e.StartP10, now) + " – " + relative(*e.StartP90, now)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(j.ID), cell(j.Name), stateText(j.Job), gpusText(j.Job),
			start, rng, finish, basis)
	}
	return tw.Flush()
}

func shortWhen(t *time.Time, now time.Time) string {
	if t == nil {
		return "unknown"
	}
	return relative(*t, now)
}
