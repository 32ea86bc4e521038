package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/trace"
)

// simInputs is everything a run needs, loaded and validated.
type simInputs struct {
	engine    *engine.Engine
	cluster   *model.Cluster
	table     *profile.Table
	jobs      []model.JobSpec
	traceName string
	network   *network.Network // nil: no storage devices
	power     *power.Cluster   // power model (simpower.go)
	noPower   []string         // GPU types without power figures: no energy
	// contention applies node contention: --contention, or by default
	// whether the cluster file declares it (simpower.go).
	contention bool
	// queues are the teams' queues (simqueues.go); nil without.
	queues *quota.Config
	// file is the cluster file (or the Alibaba node list made one,
	// simalibaba.go) and fileName its path; nil and "" for --gpus.
	file     *config.File
	fileName string
	// skipped counts the trace's lines its reader left out, by reason;
	// notes are said on stderr before the run (what was left out).
	skipped map[string]int
	notes   []string
}

func (in *simInputs) config(o *simOptions) sim.Config {
	return sim.Config{
		Engine: in.engine, Cluster: in.cluster, Workload: in.table, Jobs: in.jobs,
		RestartOverhead: model.Time(o.restartOverhead.Milliseconds()),
		Round:           model.Time(o.round.Milliseconds()),
		RoundsOnly:      o.roundsOnly,
		Network:         in.network,
		Power:           in.power,
		Spare:           o.spare,
		Energy:          len(in.noPower) == 0,
		Contention:      in.contention,
		Queues:          in.queues,
	}
}

func loadSimInputs(o *simOptions) (*simInputs, error) {
	if o.restartOverhead < 0 || o.round < 0 || o.spare < 0 {
		return nil, badInput("--restart-overhead, --round and --spare-nodes must not be negative")
	}
	if o.progress != "auto" && o.progress != "always" && o.progress != "never" {
		return nil, badInput("--progress %q: want auto, always or never", o.progress)
	}
	if err := applyConfig(o); err != nil {
		return nil, err
	}
	if o.roundsOnly && o.round <= 0 {
		return nil, badInput("--rounds-only needs a positive --round")
	}
	if o.realloc < 0 {
		return nil, badInput("--realloc-interval must not be negative")
	}
	in := &simInputs{}
	var err error
	if err = in.loadCluster(o); err != nil {
		return nil, err
	}
	matrix, err := loadMatrix(o.throughputs)
	if err != nil {
		return nil, err
	}
	profiles, err := loadProfiles(o.profiles, in.cluster)
	if err != nil {
		return nil, err
	}
	matrix = matrix.Merge(profiles...)
	tr, err := in.loadTrace(o.trace, o.format)
	if err != nil {
		return nil, err
	}
	if o.limit < 0 {
		return nil, badInput("--limit %d: must not be negative", o.limit)
	}
	if o.limit > 0 && o.limit < len(in.jobs) {
		in.jobs = in.jobs[:o.limit] // readers sort by submit time
	}
	if o.elasticMin != 0 {
		if _, err := sim.MakeElastic(in.jobs, o.elasticMin); err != nil {
			return nil, badInput("--elastic-min: %w", err)
		}
	}
	if err := in.buildTable(o, matrix, tr.WallClock); err != nil {
		return nil, err
	}
	if in.queues, err = simQueues(o, in.jobs); err != nil {
		return nil, err
	}
	o.opts.Queues = in.queues
	if o.fairShare == fairShareNone {
		o.opts.Queues = nil // measured, not scheduled
	}
	f := in.file
	if in.network, err = loadNetwork(in.fileName, f, in.cluster); err != nil {
		return nil, err
	}
	in.contention = contentionOn(o, f)
	if in.engine, err = buildEngine(o, f, in); err != nil {
		return nil, err
	}
	if in.power, in.noPower, err = simPower(in.fileName, f, in.cluster); err != nil {
		return nil, err
	}
	runPower(in.power, o.sleep, in.contention)
	return in, nil
}

// buildTable binds the throughput matrix to the cluster and the reference
// type, gives duration jobs of a heterogeneous cluster job types, and
// checks every job's work. Wall-clock durations (an Alibaba trace) run
// alike on every type: the table sees every type rated as the reference
// (sameSpeed), and no job type is drawn.
func (in *simInputs) buildTable(o *simOptions, matrix *profile.Matrix, wallClock bool) error {
	ref, err := refType(o.refType, in.cluster)
	if err != nil {
		return err
	}
	rated := in.cluster
	if wallClock {
		if rated, err = sameSpeed(in.cluster, ref); err != nil {
			return usageError{err}
		}
	}
	if in.table, err = profile.NewTable(matrix, rated, ref); err != nil {
		return usageError{err}
	}
	if len(in.cluster.Types) > 1 && !wallClock {
		sim.AssignModels(in.jobs, in.table.Models(), o.seed)
	}
	matrix.FillPeakMem(in.jobs)
	for i := range in.jobs {
		if _, _, err := in.table.Work(&in.jobs[i]); err != nil {
			return badInput("%s: %w", in.traceName, err)
		}
	}
	return nil
}

// applyConfig merges the --config file under the flags given on the
// command line.
func applyConfig(o *simOptions) error {
	if o.given("scaler-period") {
		if o.scalerPeriod <= 0 {
			return badInput("--scaler-period %s: must be positive", o.scalerPeriod)
		}
		o.opts.Threshold.Period = model.Time(o.scalerPeriod.Milliseconds())
	}
	if o.given("realloc-interval") {
		o.opts.Alloc.Realloc = model.Time(o.realloc.Milliseconds())
	}
	if o.given("gang-owed") {
		o.opts.Alloc.GangOwed = model.Time(o.gangOwed.Milliseconds())
	}
	o.opts.Alloc.Seed = o.seed
	allocRound := false
	if o.config != "" {
		f, err := applySchedFile(o.config, &o.names, &o.opts, o.given)
		if err != nil {
			return err
		}
		applySimSettings(o, f.Sim())
		allocRound = f.AllocationRound()
	}
	if !allocRound && o.round > 0 {
		o.opts.Alloc.Round = model.Time(o.round.Milliseconds())
	}
	if o.moveCost {
		o.opts.Alloc.MoveCost = model.Time(o.restartOverhead.Milliseconds())
	}
	return nil
}

// applySimSettings copies the config file's simulator block into o, except
// the settings whose flag is given.
func applySimSettings(o *simOptions, s config.SimSettings) {
	if s.Round != nil && !o.given("round") {
		o.round = *s.Round
	}
	if s.RestartOverhead != nil && !o.given("restart-overhead") {
		o.restartOverhead = *s.RestartOverhead
	}
	if s.RoundsOnly != nil && !o.given("rounds-only") {
		o.roundsOnly = *s.RoundsOnly
	}
	if s.Sleep != nil && !o.given("sleep") {
		o.sleep = *s.Sleep
	}
	if s.MoveCost != nil && !o.given("move-cost") {
		o.moveCost = *s.MoveCost
	}
}

// loadCluster loads the cluster of o: a --cluster file (YAML, or an
// Alibaba node list), --gpus, the node list beside an Alibaba pod list
// given without either, or the embedded default.
func (in *simInputs) loadCluster(o *simOptions) error {
	if o.cluster != "" && o.gpus != "" {
		return badInput("give either --gpus or --cluster, not both")
	}
	path := o.cluster
	if path == "" && o.gpus == "" && isAlibabaTrace(o) {
		var err error
		if path, err = alibabaNodesBeside(o.trace); err != nil {
			return err
		}
		in.notes = append(in.notes, fmt.Sprintf("the cluster is the node list %s", path))
	}
	if path != "" {
		return in.loadClusterFile(path)
	}
	spec := o.gpus
	if spec == "" {
		spec = assets.DefaultGPUs
	}
	c, err := config.ParseGPUs(spec, o.gpusPerNode)
	if err != nil {
		return usageError{err}
	}
	in.cluster = c
	return nil
}

// loadClusterFile reads a cluster file, or an Alibaba node list (by its
// header), and builds its cluster.
func (in *simInputs) loadClusterFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return badInput("--cluster: %w", err)
	}
	f, cpuOnly := (*config.File)(nil), 0
	if trace.IsAlibabaNodes(data) {
		if f, cpuOnly, err = readAlibabaNodes(path, data); err != nil {
			return err
		}
		if cpuOnly > 0 {
			in.notes = append(in.notes, fmt.Sprintf("%s: left out %d CPU-only nodes", path, cpuOnly))
		}
	} else if f, err = config.DecodeFile(path, data); err != nil {
		return usageError{err}
	}
	c, err := f.Cluster(path)
	if err != nil {
		return usageError{err}
	}
	in.cluster, in.file, in.fileName = c, f, path
	return nil
}

func loadMatrix(path string) (*profile.Matrix, error) {
	if path == "" {
		return profile.ParseMatrix("embedded throughput matrix", assets.Throughputs())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--throughputs: %w", err)
	}
	m, err := profile.ParseMatrix(path, data)
	if err != nil {
		return nil, usageError{err}
	}
	return m, nil
}

// loadProfiles reads a profile file (docs/PROFILES.md); none without a path.
// Every GPU type it measures must be in the cluster or the catalog, so that a
// misspelt type is an error rather than a silently unused entry.
func loadProfiles(path string, c *model.Cluster) ([]profile.Profile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--profiles: %w", err)
	}
	ps, err := parseProfileFile(path, data)
	if err != nil {
		return nil, usageError{err}
	}
	for i, p := range ps {
		for _, t := range slices.Sorted(maps.Keys(p.Throughput)) {
			if _, ok := config.LookupType(t); !ok && c.TypeIndex(t) < 0 {
				return nil, badInput("%s: profiles[%d].throughput: unknown GPU type %q "+
					"(neither in the cluster nor in the catalog, docs/GPUS.md)", path, i, t)
			}
		}
	}
	return ps, nil
}

// parseProfileFile decodes a profile file written in YAML (JSON is YAML):
// YAML is converted to JSON strictly (a key given twice is an error) and
// handed to profile.ParseProfiles, which keeps the core free of YAML code.
func parseProfileFile(name string, data []byte) ([]profile.Profile, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		if _, ok := errors.AsType[*json.UnsupportedValueError](err); ok {
			return nil, fmt.Errorf("%s: numbers must be finite (no .nan or .inf)", name)
		}
		msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
		return nil, fmt.Errorf("%s: %s", name, msg)
	}
	return profile.ParseProfiles(name, j)
}

// loadTrace reads the trace (the embedded sample without a path) into
// in's jobs, name and what its reader left out.
func (in *simInputs) loadTrace(path, format string) (*trace.Trace, error) {
	name, data := assets.SampleTraceName, assets.SampleTrace()
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, badInput("--trace: %w", err)
		}
		name = path
	} else if format == "auto" {
		format = "gavel"
	}
	tr, err := trace.ReadTrace(bytes.NewReader(data), name, format)
	if err != nil {
		return nil, usageError{err}
	}
	in.jobs, in.traceName, in.skipped = tr.Jobs, name, tr.Skipped
	if total, why := describeSkipped(tr.Skipped); total > 0 {
		in.notes = append(in.notes, fmt.Sprintf("%s: left out %d tasks: %s", name, total, why))
	}
	return tr, nil
}

// refType returns the reference GPU type: the cluster's own definition when
// it has that type, else the catalog's.
func refType(name string, c *model.Cluster) (model.GPUType, error) {
	if t := c.TypeIndex(name); t >= 0 {
		return c.Types[t], nil
	}
	if t, ok := config.LookupType(name); ok {
		return t, nil
	}
	return model.GPUType{}, badInput("--ref-type %q: unknown GPU type", name)
}
