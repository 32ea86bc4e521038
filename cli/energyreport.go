package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
)

// energyOptions are the flags of `gpusched energy`.
type energyOptions struct {
	clientOptions
	replay string
}

func newEnergyCommand() *cobra.Command {
	o := &energyOptions{}
	cmd := &cobra.Command{
		Use:   "energy [--server URL] [-o table|json|yaml] [--replay DIR]",
		Short: "Report the energy the cluster drew, by node, job, user, queue and load state, and what pack would have cost",
		Long: "energy prints the scheduler service's energy report (docs/ENERGY.md, \"What\n" +
			"energy placement saved\"): the kWh the nodes drew since the server began to\n" +
			"account them, measured from power readings where there are any and modelled\n" +
			"otherwise (and marked which), by node, by job, by user, by queue and by load state; and\n" +
			"the modelled kWh of the same jobs replayed through the simulator under the pack\n" +
			"placer on the same cluster. --replay DIR also writes the replay's inputs,\n" +
			"DIR/cluster.yaml and DIR/trace.jsonl, and prints the gpusched sim command that\n" +
			"reproduces the pack figure.",
		Example: "  gpusched energy\n" +
			"  gpusched energy -o json | jq '{total_kwh, pack_kwh}'\n" +
			"  gpusched energy --replay /tmp/replay",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEnergy(cmd, o) },
	}
	addClientFlags(cmd, &o.clientOptions)
	cmd.Flags().StringVar(&o.replay, "replay", "", "write the pack replay's cluster.yaml and trace.jsonl into this directory")
	return cmd
}

func runEnergy(cmd *cobra.Command, o *energyOptions) error {
	c, err := o.connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	rep, err := c.Energy(ctx)
	if err != nil {
		return clientError(err, "")
	}
	if o.replay != "" {
		files, err := c.EnergyReplay(ctx)
		if err != nil {
			return clientError(err, "")
		}
		if err := writeReplay(o.replay, files); err != nil {
			return err
		}
		if rep.Replay != nil {
			rep.Replay.Command = replayCommand(o.replay, files.Policy)
		}
	}
	if o.output != outTable && o.output != outWide {
		return writeValue(cmd.OutOrStdout(), o.output, rep)
	}
	return writeEnergyReport(cmd.OutOrStdout(), rep, time.Now())
}

// writeReplay writes the replay's files into dir.
func writeReplay(dir string, files api.EnergyReplay) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--replay: %w", err)
	}
	for name, data := range map[string]string{"cluster.yaml": files.Cluster, "trace.jsonl": files.Trace} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return fmt.Errorf("--replay: %w", err)
		}
	}
	return nil
}

// savedText says what placement by placer saved against pack: "saved X
// against pack", or "cost X more than pack" when it saved less than
// nothing; when the placer is pack itself, that the difference is the
// replay's, not placement's.
func savedText(placer string, kwh float64) string {
	if placer == "pack" {
		return fmt.Sprintf("placement is pack itself: the live run and its replay with pack differ by %s", kWhText(math.Abs(kwh)))
	}
	if kwh < 0 {
		return fmt.Sprintf("placement by %s cost %s more than pack", placer, kWhText(-kwh))
	}
	return fmt.Sprintf("placement by %s saved %s against pack", placer, kWhText(kwh))
}

// replayCommand is the gpusched sim command line that reproduces the pack
// figure from the files in dir.
func replayCommand(dir, policy string) string {
	return fmt.Sprintf("gpusched sim --trace %s --cluster %s --policy %s --placer pack --json",
		shellQuote(filepath.Join(dir, "trace.jsonl")), shellQuote(filepath.Join(dir, "cluster.yaml")), policy)
}

// writeEnergyReport prints the report: the totals, the pack comparison,
// then the tables by load state, node, job, user and queue.
func writeEnergyReport(w io.Writer, r api.EnergyReport, now time.Time) error {
	fmt.Fprintf(w, "Energy since %s (%s): %s — measured %s, modelled %s; jobs %s, idle %s\n",
		r.Since.Local().Format(time.RFC3339), ago(r.Since, now), kWhText(r.TotalKWh), kWhText(r.MeasuredKWh),
		kWhText(r.ModelledKWh), kWhText(r.JobsKWh), kWhText(r.IdleKWh))
	switch {
	case r.PackKWh != nil && r.Replay != nil:
		fmt.Fprintf(w, "The same %d jobs under pack (%s policy, modelled, replayed through the simulator): %s — jobs %s, idle %s\n",
			r.Replay.Jobs, r.Policy, kWhText(*r.PackKWh), kWhText(r.Replay.PackJobsKWh), kWhText(r.Replay.PackIdleKWh))
		fmt.Fprintf(w, "The run as it went, under the same model and span: %s — %s\n",
			kWhText(r.Replay.ModelKWh), savedText(r.Placer, r.Replay.SavedKWh))
		fmt.Fprintf(w, "  reproduce: %s\n", r.Replay.Command)
	default:
		fmt.Fprintf(w, "Under pack: not available (%s)\n", r.PackError)
	}
	fmt.Fprintf(w, "Placer: %s\n\n", r.Placer)
	tw := newTable(w)
	fmt.Fprintln(tw, "LOAD-STATE\tENERGY")
	for _, s := range r.States {
		fmt.Fprintf(tw, "%s\t%s\n", s.State, kWhText(s.KWh))
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "NODE\tCLASS\tENERGY\tSOURCE")
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(n.Name), cell(n.Class), kWhText(n.KWh), sourceText(n.Measured, n.ModelledKWh))
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "JOB\tNAME\tUSER\tQUEUE\tSTATE\tENERGY\tSOURCE")
	for _, j := range r.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(j.ID), cell(j.Name), cell(j.User), cell(j.Queue), j.State, kWhText(j.KWh),
			sourceText(j.Measured, j.ModelledKWh))
	}
	for _, g := range []struct {
		title string
		list  []api.GroupEnergyUse
	}{{"USER", r.Users}, {"QUEUE", r.Queues}} {
		fmt.Fprintln(tw, "\t")
		fmt.Fprintln(tw, g.title+"\tJOBS\tENERGY\tSOURCE")
		for _, u := range g.list {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", cell(u.Name), u.Jobs, kWhText(u.KWh), sourceText(u.Measured, u.ModelledKWh))
		}
	}
	return tw.Flush()
}

// sourceText says where an energy figure comes from.
func sourceText(measured bool, modelled float64) string {
	switch {
	case measured:
		return "measured"
	case modelled > 0:
		return "modelled " + kWhText(modelled)
	}
	return "-"
}
