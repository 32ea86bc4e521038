package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/metrics"
	"github.com/gpusched/gpusched/sim/peer"
)

// compareOptions are the flags of `gpusched sim compare`: those of sim, the
// entries to run, and Gavel's.
type compareOptions struct {
	sim        simOptions
	policies   string
	gavel      string
	gavelPeer  string
	gavelCache string
	json       bool
	traces     string // a family: every trace in this directory (comparefamily.go)
}

// compareRow is one line of the comparison.
type compareRow struct {
	Name        string  `json:"name"`
	Simulator   string  `json:"simulator"`
	AvgJCT      float64 `json:"avg_jct_s"`
	P99JCT      float64 `json:"p99_jct_s,omitempty"`
	Makespan    float64 `json:"makespan_s,omitempty"`
	Preemptions int     `json:"preemptions"`
	Completed   int     `json:"completed"`
	Jobs        int     `json:"jobs"`
}

func newCompareCommand() *cobra.Command {
	o := &compareOptions{sim: simOptions{names: recipe.Defaults(), opts: recipe.DefaultOptions()}}
	cmd := &cobra.Command{
		Use:   "compare --policies LIST [sim flags]",
		Short: "Run several policies on one trace and print one table (optionally beside Gavel's)",
		Long: "compare runs each entry of --policies on the same trace, cluster and settings (every\n" +
			"flag of `gpusched sim` applies to all of them) and prints one table, best average JCT\n" +
			"first. An entry is POLICY[+PLACER[+SCALER]], e.g. las+hetero. With --gavel-policies it also\n" +
			"runs Gavel's own simulator on the trace (a Gavel-format trace, a v100/p100/k80\n" +
			"cluster) through the peer runner, and adds its average JCT (docs/FIDELITY.md).",
		Example: "  gpusched sim compare --trace heavy.trace --gpus v100=8,p100=8,k80=8 \\\n" +
			"      --policies fifo+hetero,las+hetero,maxmin,esrpt --round 1h \\\n" +
			"      --gavel-policies max_min_fairness_perf,max_sum_throughput_perf\n" +
			"  gpusched sim compare --traces traces/heavy/ --gpus v100=8,p100=8,k80=8 \\\n" +
			"      --policies gittins+hetero,maxmin --gavel-policies max_min_fairness_perf,max_sum_throughput_perf",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCompare(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addSimFlags(cmd, &o.sim)
	f := cmd.Flags()
	f.StringVar(&o.policies, "policies", "", "entries to run, comma-separated: POLICY[+PLACER[+SCALER]] (required)")
	f.StringVar(&o.gavel, "gavel-policies", "", "Gavel policies to run through the peer runner, comma-separated (e.g. max_min_fairness_perf)")
	f.StringVar(&o.gavelPeer, "gavel-peer", "", "Gavel's runner (default: ../shared/peers/gavel/gavel, then $GAVEL_PEER)")
	f.StringVar(&o.gavelCache, "gavel-cache", "out/gavel-cache", "directory where Gavel's answers are cached (\"\": none)")
	f.BoolVar(&o.json, "json-rows", false, "print the rows as a JSON array instead of the table")
	f.StringVar(&o.traces, "traces", "", "a family of traces: run every trace file in this directory and print each entry's average JCT as a ratio to Gavel's best (or to the best entry without --gavel-policies), per trace and as a geometric mean")
	return cmd
}

// compareEntry is a parsed --policies entry.
type compareEntry struct {
	label string
	names recipe.Names
}

func parseEntries(list string) ([]compareEntry, error) {
	if strings.TrimSpace(list) == "" {
		return nil, badInput("--policies: give at least one POLICY[+PLACER[+SCALER]]")
	}
	var out []compareEntry
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		parts := strings.Split(item, "+")
		if item == "" || len(parts) > 3 || parts[0] == "" {
			return nil, badInput("--policies: entry %q: want POLICY[+PLACER[+SCALER]]", item)
		}
		n := recipe.Defaults()
		n.Policy = parts[0]
		if len(parts) > 1 {
			n.Placer = parts[1]
		}
		if len(parts) > 2 {
			n.Scaler = parts[2]
		}
		out = append(out, compareEntry{item, n})
	}
	return out, nil
}

func runCompare(ctx context.Context, o *compareOptions, stdout, stderr io.Writer) error {
	entries, err := parseEntries(o.policies)
	if err != nil {
		return err
	}
	if o.sim.events != "" || o.sim.report != "" {
		return badInput("compare writes no event log or report: run `gpusched sim` for one entry")
	}
	if o.traces != "" {
		return runFamily(ctx, o, entries, stdout, stderr)
	}
	gavelPolicies, runner, cluster, err := o.gavelSetup()
	if err != nil {
		return err
	}
	rows, err := o.compareTrace(ctx, entries, gavelPolicies, runner, cluster, stderr)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		return enc.Encode(rows)
	}
	return writeCompare(stdout, rows)
}

// compareTrace runs every entry, and every Gavel policy through runner, on
// o.sim.trace.
func (o *compareOptions) compareTrace(ctx context.Context, entries []compareEntry, gavelPolicies []string,
	runner *peer.Gavel, cluster string, stderr io.Writer) ([]compareRow, error) {
	var rows []compareRow
	for _, e := range entries {
		row, err := o.runEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.label, err)
		}
		rows = append(rows, row)
	}
	for _, p := range gavelPolicies {
		fmt.Fprintf(stderr, "gavel %s on %s (%s)...\n", p, o.sim.trace, cluster)
		r, err := runner.Run(ctx, o.sim.trace, p, cluster)
		if err != nil {
			return nil, err
		}
		rows = append(rows, compareRow{Name: "gavel:" + p, Simulator: "gavel", AvgJCT: r.AvgJCT, Preemptions: -1})
	}
	return rows, nil
}

// runEntry simulates one entry with the shared settings.
func (o *compareOptions) runEntry(e compareEntry) (compareRow, error) {
	so := o.sim // a copy: loading merges the config file into it
	so.names = e.names
	given := o.sim.given
	so.given = func(flag string) bool {
		return flag == "policy" || flag == "placer" || flag == "scaler" || given(flag)
	}
	so.opts = o.sim.opts
	in, err := loadSimInputs(&so)
	if err != nil {
		return compareRow{}, err
	}
	res, err := sim.Run(in.config(&so))
	if err != nil {
		return compareRow{}, err
	}
	sum := metrics.Summarize(in.cluster.TotalGPUs(), res.Records)
	return compareRow{Name: e.label, Simulator: "gpusched", AvgJCT: sum.AvgJCT, P99JCT: sum.P99JCT,
		Makespan: sum.Makespan, Preemptions: sum.Preemptions, Completed: sum.Completed, Jobs: sum.Jobs}, nil
}

// gavelSetup checks the Gavel side: the policies, the runner and the
// cluster in Gavel's form.
func (o *compareOptions) gavelSetup() ([]string, *peer.Gavel, string, error) {
	if strings.TrimSpace(o.gavel) == "" {
		return nil, nil, "", nil
	}
	var ps []string
	for _, p := range strings.Split(o.gavel, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, p)
		}
	}
	if o.sim.trace == "" && o.traces == "" {
		return nil, nil, "", badInput("--gavel-policies needs --trace (a Gavel-format trace) or --traces")
	}
	cluster, err := gavelCluster(o.sim.gpus)
	if err != nil {
		return nil, nil, "", err
	}
	script := o.gavelPeer
	if script == "" {
		if script = peer.Find("../shared"); script == "" {
			script = os.Getenv("GAVEL_PEER")
		}
	}
	if script == "" {
		return nil, nil, "", badInput("--gavel-policies: Gavel's runner not found (../shared/peers/gavel/gavel); give --gavel-peer")
	}
	return ps, &peer.Gavel{Script: script, Cache: o.gavelCache, Timeout: 6 * time.Hour}, cluster, nil
}

// gavelCluster turns --gpus into Gavel's V100:P100:K80 counts; Gavel knows
// only those three types.
func gavelCluster(gpus string) (string, error) {
	counts := map[string]int{}
	for _, item := range strings.Split(gpus, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(item), "=")
		var v int
		if _, err := fmt.Sscan(n, &v); !ok || err != nil || v < 0 {
			return "", badInput("--gavel-policies needs --gpus as v100=N,p100=N,k80=N, got %q", gpus)
		}
		switch name = strings.ToLower(name); name {
		case "v100", "p100", "k80":
			counts[name] = v
		default:
			return "", badInput("--gavel-policies: Gavel's simulator knows v100, p100 and k80 only, not %q", name)
		}
	}
	return fmt.Sprintf("%d:%d:%d", counts["v100"], counts["p100"], counts["k80"]), nil
}

// writeCompare prints the rows, best average JCT first, with each one's
// difference to the best.
func writeCompare(w io.Writer, rows []compareRow) error {
	best := math.Inf(1)
	for _, r := range rows {
		best = min(best, r.AvgJCT)
	}
	sortRows(rows)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "entry\tsimulator\tavg JCT (s)\tvs best\tp99 JCT (s)\tmakespan (s)\tpreemptions\tcompleted\t")
	for _, r := range rows {
		p99, mk, pre, done := "-", "-", "-", "-"
		if r.Simulator == "gpusched" {
			p99, mk = fmt.Sprintf("%.1f", r.P99JCT), fmt.Sprintf("%.0f", r.Makespan)
			pre, done = fmt.Sprint(r.Preemptions), fmt.Sprintf("%d/%d", r.Completed, r.Jobs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%+.1f%%\t%s\t%s\t%s\t%s\t\n", r.Name, r.Simulator, r.AvgJCT,
			100*(r.AvgJCT/best-1), p99, mk, pre, done)
	}
	return tw.Flush()
}

func sortRows(rows []compareRow) {
	slices.SortStableFunc(rows, func(a, b compareRow) int { return cmp.Compare(a.AvgJCT, b.AvgJCT) })
}
