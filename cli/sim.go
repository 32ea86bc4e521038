package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/audit"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
	"github.com/gpusched/gpusched/sim/report"
	"github.com/gpusched/gpusched/sim/trace"
)

// simOptions are the flags of `gpusched sim`.
type simOptions struct {
	trace, format          string
	gpus, cluster          string
	gpusPerNode, limit     int
	throughputs, refType   string
	profiles               string
	names                  recipe.Names
	opts                   recipe.Options
	seed                   uint64
	json                   bool
	events, report         string
	reportJobs             []string
	restartOverhead, round time.Duration
	roundsOnly             bool
	realloc                time.Duration
	progress               string
	config                 string
	elasticMin             float64
	scalerPeriod           time.Duration
	contention, sleep      bool
	upgrade                bool
	moveCost               bool
	gangOwed               time.Duration
	spare                  int
	queues, queueFrom      string
	fairShare              string
	halfLife               time.Duration
	// given reports whether a flag was set on the command line.
	given func(flag string) bool
}

// newSimCommand returns `gpusched sim`: it replays a trace through the
// scheduling core on a simulated cluster and prints the run's summary.
func newSimCommand() *cobra.Command {
	o := &simOptions{names: recipe.Defaults(), opts: recipe.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "sim [flags]",
		Short: "Replay a trace through the scheduler on a simulated cluster",
		Long: "sim replays a job trace through gpusched's scheduling core on a virtual clock\n" +
			"and prints a summary. With no flags it replays an embedded sample (Gavel's\n" +
			"96-job max_min_fairness trace) on an embedded " + assets.DefaultGPUs + " cluster.",
		Example: "  gpusched sim\n" +
			"  gpusched sim --trace small_test.trace --gpus v100=2,p100=2,k80=2 --policy srtf --json\n" +
			"  gpusched sim --trace philly.csv --gpus v100=2500 --gpus-per-node 8 --report out/\n" +
			"  gpusched sim --trace small_test.trace --gpus v100=2,p100=2,k80=2 --policy fifo,las,hlas --report cmp/",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("GOGC") == "" { // GOGC, when set, wins
				defer debug.SetGCPercent(debug.SetGCPercent(simGCPercent))
			}
			return runSim(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addSimFlags(cmd, o)
	cmd.AddCommand(newCompareCommand())
	return cmd
}

// simGCPercent is the garbage collector's target during a replay, three
// quarters of Go's default, unless GOGC is set. A replay is one batch whose
// peak memory is the collector's headroom over what it keeps (the jobs'
// records, the trace, the auditor's state). On the whole Philly trace the
// recommended policy peaked at about 260 MB with 50 instead of 300–313 MB
// with 100; since then what the replay keeps has shrunk, and 75 peaks at
// about 250 MB (50: about 240 MB, 100: about 270 MB) for about 0.1 s less
// CPU than 50 (docs/BENCHMARKS.md, issue 29, ninth session).
const simGCPercent = 75

// addSimFlags registers the flags of `gpusched sim` on cmd, into o.
func addSimFlags(cmd *cobra.Command, o *simOptions) {
	f := cmd.Flags()
	o.given = func(name string) bool { return f.Changed(name) }
	f.StringVar(&o.config, "config", "", "scheduler configuration file (YAML, docs/CONFIG.md): policy, placer, scaler and their settings; flags win")
	f.StringVar(&o.trace, "trace", "", "trace to replay (default: the embedded sample)")
	f.IntVar(&o.limit, "limit", 0, "replay only the first N jobs by submit time (0: all)")
	f.StringVar(&o.format, "format", "auto", "trace format: "+strings.Join(trace.Formats(), "|"))
	f.StringVar(&o.gpus, "gpus", "", "cluster as GPU counts per type, e.g. v100=8,p100=8,k80=8 (default "+assets.DefaultGPUs+")")
	f.IntVar(&o.gpusPerNode, "gpus-per-node", 4, "GPUs per node for --gpus")
	f.StringVar(&o.cluster, "cluster", "", "cluster description file (YAML, docs/CLUSTER.md) or an Alibaba node list (CSV) instead of --gpus")
	f.StringVar(&o.throughputs, "throughputs", "", "throughput matrix in Gavel's JSON format (default: the embedded Gavel matrix)")
	f.StringVar(&o.profiles, "profiles", "", "job profiles (YAML, docs/PROFILES.md): steps/s per GPU type and count, peak memory; merged into the throughput matrix")
	f.StringVar(&o.refType, "ref-type", "v100", "reference GPU type on which trace durations were measured")
	f.StringVar(&o.names.Policy, "policy", o.names.Policy, "queue policy: "+strings.Join(recipe.Policies(), ", ")+
		" (oracles, which read each job's true length, for comparison only: "+strings.Join(recipe.Oracles(), ", ")+"); a comma-separated list runs each and compares them (--report writes the comparison); "+recipe.RecommendedNote)
	f.StringVar(&o.names.Placer, "placer", o.names.Placer, "placer: "+strings.Join(recipe.Placers(), ", "))
	f.StringVar(&o.names.Scaler, "scaler", o.names.Scaler, "elastic scaler: "+strings.Join(recipe.Scalers(), ", "))
	f.BoolVar(&o.opts.Backfill, "backfill", false, "fifo: start later jobs when the head of the queue does not fit")
	f.Float64Var(&o.opts.PriorityRatio, "priority-ratio", o.opts.PriorityRatio, "hlas/las: demote a running job whose attained service exceeds the running average times this")
	f.Float64Var(&o.opts.StarveRatio, "starve-ratio", o.opts.StarveRatio, "hlas/las: promote a Q2 job whose waiting time over running time exceeds this")
	f.Var(floatList{&o.opts.TiresiasThresholds}, "tiresias-thresholds", "tiresias: queue limits in GPU-seconds, ascending, comma-separated (one more queue than limits)")
	f.Float64Var(&o.opts.TiresiasPromoteKnob, "tiresias-promote-knob", o.opts.TiresiasPromoteKnob, "tiresias: promote a waiting job to the top queue once its waiting time reaches this times its run time (0: never)")
	f.Float64Var(&o.opts.Threshold.Proportion, "elastic-proportion", o.opts.Threshold.Proportion, "threshold scaler: share of the idle capacity lent to elastic growth (elasticProportion; seed 000's example: 0.3)")
	f.Float64Var(&o.opts.Threshold.Expand, "expand-threshold", o.opts.Threshold.Expand, "threshold scaler: expand while elastic use is below this share of the pool (expandThreshold; seed 000's example: 0.3)")
	f.Float64Var(&o.opts.Threshold.Shrink, "scaling-threshold", o.opts.Threshold.Shrink, "threshold scaler: shrink while elastic use is above this share of the pool (scalingThreshold; seed 000's example: 0.9)")
	f.IntVar(&o.spare, "spare-nodes", sim.DefaultSpare, "idle nodes of each kind (same GPU type, size, power and links) kept on while jobs keep coming, so that arriving jobs "+
		"rarely wait for a wake-up, or more where the workload's largest gang that can run on the kind's GPU type (an elastic job's maximum under a scaler) fills more nodes of the kind; every idle node stays on while jobs wait, and sleeping ones are woken until each kind's idle nodes hold the waiting jobs that can run there; 0: idle nodes sleep after their delay regardless, as before issue 28 (docs/ENERGY.md#spare-nodes)")
	f.BoolVar(&o.upgrade, "upgrade", true, "energy placer: move a running job to a GPU type on which it runs at least 1.5 times as fast (1.2 onto a type none of whose GPUs is busy) once that type has room after the round's placements, and back to a slower type, the cheapest move first, when the head of a strict queue fits nowhere else, or, elastic, only below its requested size (issue 28; docs/ENERGY.md); --upgrade=false keeps every job where it started, as before")
	f.BoolVar(&o.opts.Threshold.Reclaim, "reclaim", o.opts.Threshold.Reclaim, "threshold and fulfillment scalers: a waiting job goes to the GPU type it would get if the GPUs lent to elastic growth were free, the grown jobs shrinking in the same round where it needs their GPUs, unless the placer gives it a faster type on the free GPUs as they are (elasticConfig.reclaim); with fulfillment, --reclaim=false is seed 001's rule as written; seed 000's is --config testdata/config/seed000.yaml (its elasticConfig p=0.3 et=0.3 st=0.9, reclaim off; docs/ELASTIC.md)")
	f.DurationVar(&o.scalerPeriod, "scaler-period", time.Duration(o.opts.Threshold.Period)*time.Millisecond, "threshold scaler: interval between passes (hpaCheckMinutes)")
	f.Float64Var(&o.opts.MaxLoad, "max-load", o.opts.MaxLoad, "fulfillment scaler: never grow jobs beyond this share of the cluster's GPUs")
	f.Float64Var(&o.elasticMin, "elastic-min", 0, "make multi-GPU jobs elastic: max = requested GPUs, min = this fraction of it, rounded up (0: keep the trace's sizes)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of all randomness (e.g. job types given to Philly jobs)")
	f.BoolVar(&o.json, "json", false, "print the summary as one JSON object")
	f.StringVar(&o.events, "events", "", "write the event log (JSON lines) to this file")
	f.StringVar(&o.report, "report", "", "write the report into this directory: index.html (self-contained), summary.json, jobs.csv, samples.csv and PNG plots")
	f.StringSliceVar(&o.reportJobs, "report-jobs", nil, "jobs whose timelines the HTML report shows (default: the longest JCTs and the most preempted or resized)")
	f.DurationVar(&o.restartOverhead, "restart-overhead", 30*time.Second, "pause without progress on every restart and resize")
	f.DurationVar(&o.round, "round", 0, "also schedule periodically at this interval (0: only on events); also the allocation policies' round (default 6m)")
	f.BoolVar(&o.moveCost, "move-cost", true, "gittins: in its program a running job's value on the other GPU types is scaled by 1 − (--restart-overhead) / its expected remaining time, so that a move must gain more than the restart loses (docs/EXPERIMENTS.md, issue 29, ninth session); --move-cost=false: moves cost nothing in the program, as before")
	f.DurationVar(&o.gangOwed, "gang-owed", 0, "gittins: a multi-GPU job whose shares of the allocation have promised it this much more time than it ran is taken first on a GPU type where it has a share until it has caught up, while the backlog is deep (its power at least 0.7; --priority-backlog); off by default (0: never; docs/EXPERIMENTS.md, issue 29, ninth session)")
	f.BoolVar(&o.roundsOnly, "rounds-only", false, "schedule only every --round, as Gavel does: new jobs wait for the next round, freed GPUs stay idle until it (docs/FIDELITY.md)")
	f.DurationVar(&o.realloc, "realloc-interval", 0, "maxmin, maxthroughput, ftf: least time between two computations of the allocation (Gavel: 32m; 0: whenever the active jobs change)")
	f.Float64Var(&o.opts.Alloc.Exponent, "esrpt-exponent", 0, "esrpt: exponent of the expected remaining time in its weights (0: 2)")
	f.Float64Var(&o.opts.Alloc.GangProbe, "gang-probe", o.opts.Alloc.GangProbe, "esrpt, gittins: a multi-GPU job counts per GPU as a single-GPU job until its service reaches this quantile of the learned job sizes (0: never)")
	f.Float64Var(&o.opts.Alloc.GangProbeLight, "gang-probe-light", o.opts.Alloc.GangProbeLight, "esrpt, gittins: the gang probe's quantile while every job fits; it moves to --gang-probe's as the backlog nears --priority-backlog (0: --gang-probe's at every load)")
	f.Float64Var(&o.opts.Alloc.GangProbeEven, "gang-probe-even", o.opts.Alloc.GangProbeEven, "gittins: the gang probe's quantile while every job fits, in place of --gang-probe-light's, once the gangs finished so far are no longer than the single-GPU jobs at the median (10 of each at least); off by default (0: --gang-probe-light's always; docs/EXPERIMENTS.md, issue 29, eighth session)")
	f.Float64Var(&o.opts.Alloc.AdvantageEven, "advantage-even", o.opts.Alloc.AdvantageEven, "gittins: while every job fits and the gangs finished so far are no longer than the single-GPU jobs at the median (10 of each at least), a job's flattened weight times its comparative advantage (best speed over second-best, at most 8) to this power, 0 to 4 (0: off; docs/EXPERIMENTS.md, issue 29, ninth session)")
	f.Float64Var(&o.opts.Alloc.PriorityBacklog, "priority-backlog", o.opts.Alloc.PriorityBacklog, "esrpt, gittins: below this backlog (GPUs asked for over the cluster's) the weights per GPU are flattened towards equal, maximising throughput while jobs fit (0: never)")
	f.Float64Var(&o.opts.Alloc.SpeedExponent, "speed-exponent", 0, "esrpt, gittins: power of a job's speed on a type over its best in the program's values, 0 to 4; below 1 the program weighs which jobs run more than where (0: 1)")
	f.Float64Var(&o.opts.Alloc.GangShare, "gang-share", o.opts.Alloc.GangShare, "gittins: a multi-GPU job with at least this share of the allocation on a GPU type is taken first there each round, before jobs of higher priority, unless a job still in its gang probe with a higher index shares the type; a gang that needs every GPU of the type also with half of it, when no job sharing the type has a higher index per GPU (0: never; docs/EXPERIMENTS.md, issue 29)")
	f.BoolVar(&o.opts.Alloc.Gavel, "gavel", false, "allocation policies follow Gavel's mechanism and formulation, and fifo is Gavel's FIFO (docs/FIDELITY.md)")
	f.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (when a terminal and the run is long), always, never")
	f.BoolVar(&o.contention, "contention", false, "slow jobs on nodes near full load by the power model's contention factor (docs/ENERGY.md); "+
		"default: on when the --cluster file declares contention_knee or contention_slowdown")
	f.StringVar(&o.queues, "queues", "", "teams' queues (YAML, docs/QUEUES.md): quota and limit per GPU type, weight; wins over queues in --config")
	f.StringVar(&o.queueFrom, "queue-from", "", "where a job's queue comes from: queue (the trace's queue field), vc (Philly's virtual cluster), user; "+
		"without declared queues, one queue of weight 1 per name")
	f.StringVar(&o.fairShare, "fair-share", "type-weighted", "how a queue's usage is measured: type-weighted (GPU-hours × the type's speed for the job) or gpu-hours; "+
		"none measures the queues without the queue layer (a baseline)")
	f.DurationVar(&o.halfLife, "fair-share-half-life", 0, "decay of a queue's usage: a GPU-hour used this long ago counts half (0: no decay)")
	f.BoolVar(&o.sleep, "sleep", true, "let idle power-managed nodes sleep (every node by default; sleeps: false in a --cluster file keeps one on) "+
		"and wake them for jobs, which wait for the wake-up (docs/ENERGY.md); --sleep=false keeps every node on")
}

// runSim loads every input first (bad input exits 2 before anything is
// written), runs the simulation with its event log going through the
// auditor (and to --events), then writes the outputs — only when the log
// passes the audit and agrees with the summary. A --policy list runs a
// sweep (simsweep.go).
func runSim(o *simOptions, stdout, stderr io.Writer) error {
	if strings.Contains(o.names.Policy, ",") {
		return runSweep(o, stdout, stderr)
	}
	r, err := simulate(o, stderr)
	if err != nil {
		return err
	}
	defer r.out.abort()
	if o.report != "" {
		if err := report.WriteRuns(o.report, r.title(), []report.Run{r.reportRun(o)}); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if err := r.out.commit(); err != nil {
		return err
	}
	if o.json {
		return report.JSON(stdout, r.sum)
	}
	fmt.Fprintln(stdout, r.title())
	return report.Table(stdout, r.sum)
}

// simRun is one audited run of `gpusched sim`.
type simRun struct {
	in  *simInputs
	out *eventsOut // the event log, committed or aborted by the caller
	res *sim.Result
	sum metrics.Summary
	// timelines keeps the jobs' histories for the HTML report (nil
	// without --report).
	timelines *report.TimelineSink
}

// simulate runs the simulation of o with its event log going through the
// auditor (and to --events, left uncommitted), and returns the run once
// the log passes the audit and agrees with the summary.
func simulate(o *simOptions, stderr io.Writer) (*simRun, error) {
	in, err := loadSimInputs(o)
	if err != nil {
		return nil, err
	}
	for _, n := range in.notes {
		fmt.Fprintf(stderr, "gpusched: %s\n", n)
	}
	out, err := openEvents(o.events)
	if err != nil {
		return nil, err
	}
	r := &simRun{in: in, out: out}
	cfg := in.config(o)
	cfg.Events = out.w
	if o.report != "" {
		r.timelines = report.NewTimelineSink(out.w)
		cfg.Events = r.timelines
	}
	bar := newProgress(o.progress, stderr, len(in.jobs))
	cfg.Progress = bar.update
	r.res, err = sim.Run(cfg)
	bar.finish()
	if err == nil {
		r.sum = metrics.Summarize(in.cluster.TotalGPUs(), r.res.Records)
		r.sum.Policy, r.sum.Placer, r.sum.Scaler = in.engine.Names()
		setEnergy(&r.sum, r.res)
		setQueues(&r.sum, r.res)
		setSkipped(&r.sum, in.skipped)
		metrics.SetResources(&r.sum, r.res.Records, in.cluster.TotalGPUs(), r.res.Resources)
		err = out.audit(r.sum)
	}
	if err != nil {
		out.abort()
		return nil, err
	}
	warnNoPower(stderr, in.noPower)
	warnEnergyPlacer(stderr, o.names.Placer, in)
	return r, nil
}

// title is the line that introduces the run's summary.
func (r *simRun) title() string {
	return fmt.Sprintf("trace %s: %d jobs on %d GPUs (%s)", r.in.traceName, len(r.in.jobs),
		r.in.cluster.TotalGPUs(), describeCluster(r.in.cluster))
}

// reportRun is the run as the HTML report shows it, named by its policy.
func (r *simRun) reportRun(o *simOptions) report.Run {
	run := report.Run{Name: r.sum.Policy, Summary: r.sum, Records: r.res.Records, Samples: r.res.Samples,
		ClusterGPUs: r.in.cluster.TotalGPUs()}
	if r.timelines != nil {
		run.Timelines = r.timelines.Timelines(r.res.Records, o.reportJobs, report.DefaultTimelines)
	}
	return run
}

func describeCluster(c *model.Cluster) string {
	var parts []string
	for t, gt := range c.Types {
		parts = append(parts, fmt.Sprintf("%s=%d", gt.Name, c.TypeGPUs(t)))
	}
	return strings.Join(parts, ",") + fmt.Sprintf(" on %d nodes", len(c.Nodes))
}

// eventsOut is the event log of a run: every event goes to the auditor
// (package audit, which reads the log as an independent check of the
// simulator; it runs in its own goroutine, beside the simulation) and, with
// --events, to a temporary file that replaces the target only when the run
// succeeds.
type eventsOut struct {
	path  string
	f     *os.File // nil without --events
	check *audit.Stream
	feed  *auditFeed // to the auditor's goroutine
	w     *eventlog.Writer
}

// openEvents starts the event log of a run: every event goes to the
// streaming auditor and, when path is not empty, to a temporary file next
// to path that commit renames into place only after the audit passed, so
// that a failed run leaves no half-written log.
func openEvents(path string) (*eventsOut, error) {
	name := "the event log"
	if path != "" {
		name = path
	}
	e := &eventsOut{path: path, check: audit.NewStream(name)}
	e.feed = newAuditFeed(e.check)
	var sink io.Writer = e.feed
	if path != "" {
		dir, base := splitPath(path)
		f, err := os.CreateTemp(dir, "."+base+".tmp-*")
		if err != nil {
			e.stop()
			return nil, badInput("--events %s: %w", path, err)
		}
		e.f, sink = f, io.MultiWriter(e.feed, f)
	}
	e.w = eventlog.NewWriter(sink)
	return e, nil
}

// stop ends the log and waits for the auditor to read all of it.
func (e *eventsOut) stop() { e.feed.Close() }

// audit flushes the log and checks it: its invariants (audit.Check) and
// its agreement with the run's summary (audit.Compare). A failure is a bug
// in the simulator, never bad input.
func (e *eventsOut) audit(sum metrics.Summary) error {
	werr := e.w.Close()
	e.stop()
	res, err := e.check.Close()
	if err == nil && werr != nil {
		return fmt.Errorf("write events %s: %w", e.path, werr)
	}
	if err == nil {
		var js bytes.Buffer
		if err = report.JSON(&js, sum); err == nil {
			err = audit.Compare(res, js.Bytes())
		}
	}
	if err != nil {
		return fmt.Errorf("the simulation's event log fails gpusched's own audit, so its results "+
			"cannot be trusted and nothing was written (a bug in gpusched: please report it with "+
			"the command line): %w", err)
	}
	return nil
}

// commit moves the audited log from its temporary file to its path; a
// no-op without --events.
func (e *eventsOut) commit() error {
	if e.f == nil {
		return nil
	}
	err := e.f.Chmod(0o644) // CreateTemp makes 0600; an event log is no secret
	if err == nil {
		err = e.f.Close()
	}
	if err == nil {
		err = os.Rename(e.f.Name(), e.path)
	}
	if err != nil {
		return fmt.Errorf("write events %s: %w", e.path, err)
	}
	e.f = nil
	return nil
}

// abort stops the auditor and removes the temporary file unless commit
// succeeded.
func (e *eventsOut) abort() {
	e.stop()
	if e.f != nil {
		e.f.Close()
		os.Remove(e.f.Name())
	}
}

func splitPath(p string) (dir, base string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ".", p
	}
	return p[:i+1], p[i+1:]
}

// floatList is a flag holding comma-separated numbers ("3250,7200").
type floatList struct{ v *[]float64 }

// String returns the numbers as Set reads them, comma-separated.
func (f floatList) String() string {
	if f.v == nil {
		return ""
	}
	s := make([]string, len(*f.v))
	for i, x := range *f.v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

// Set reads comma-separated numbers, replacing the list.
func (f floatList) Set(s string) error {
	parts := strings.Split(s, ",")
	out := make([]float64, len(parts))
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", p)
		}
		out[i] = x
	}
	*f.v = out
	return nil
}

// Type names the flag's value in the help.
func (floatList) Type() string { return "numbers" }
