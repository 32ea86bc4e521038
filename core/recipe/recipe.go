package recipe

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/core/scaler"
)

// Names lists the stage names each shell accepts.
type Names struct {
	Policy, Placer, Scaler string
}

// Options are the stage settings that shells expose as flags.
type Options struct {
	// Backfill lets fifo start later jobs when the head of the queue does not
	// fit.
	Backfill bool
	// PriorityRatio and StarveRatio are hlas's and las's
	// priority_threshold_ratio and starve_threshold_ratio (seed 003).
	PriorityRatio, StarveRatio float64
	// TiresiasThresholds are tiresias's queue limits in GPU-seconds
	// (positive, ascending); empty means Tiresias's own.
	TiresiasThresholds []float64
	// TiresiasPromoteKnob is tiresias's PROMOTEKNOB (0: no promotion).
	TiresiasPromoteKnob float64
	// Threshold is the threshold scaler's elasticConfig (seed 000).
	Threshold scaler.ThresholdConfig
	// MaxLoad is the fulfillment scaler's desired maximum load (seed 001);
	// Threshold.Reclaim is the fulfillment scaler's reclaim setting too.
	MaxLoad float64
	// Energy is what the energy placer needs (seed 002); shells derive it
	// from the cluster description.
	Energy EnergyInputs
	// Alloc holds the allocation policies' settings (maxmin,
	// maxthroughput, ftf, ftf-oracle; and fifo with Alloc.Gavel).
	Alloc AllocOptions
	// WrapPlacer, when set, wraps the named placer before the engine gets
	// it: a shell's own rules on top of any placer (the Kubernetes mode
	// keeps placements to whole pods on the nodes a job's pods may use).
	WrapPlacer func(engine.Placer) engine.Placer
	// Queues, when set, wraps the policy with the queue layer (package
	// quota: per-team queues, quotas, fair share).
	Queues *quota.Config
}

// AllocOptions are the settings of the allocation-matrix policies.
type AllocOptions struct {
	// Round is the round length in which they realise their allocation;
	// 0 means each policy's default (DefaultRound; esrpt, gittins:
	// EstSRPTRound).
	Round model.Time
	// Realloc is the least time between two computations of the
	// allocation (Gavel: 32 minutes); 0 recomputes whenever the active
	// jobs changed.
	Realloc model.Time
	// Gavel follows Gavel's mechanism and formulation where they differ
	// from gpusched's (docs/FIDELITY.md), and makes fifo Gavel's FIFO, an
	// allocation realised in rounds, with Gavel's random choice of type.
	Gavel bool
	// Seed seeds the random choices of Gavel's FIFO (Gavel's --seed).
	Seed uint64
	// Exponent is esrpt's exponent of the expected remaining time (0:
	// policy.DefaultExponent).
	Exponent float64
	// GangProbe is the gang probe of esrpt and gittins (policy.Alloc), a
	// quantile of the learned job sizes in [0, 1); 0: none.
	// DefaultOptions sets policy.DefaultGangProbe.
	GangProbe float64
	// GangProbeLight is the gang probe's quantile while every job fits
	// (policy.Alloc), in [0, 1); 0: GangProbe at every load.
	// DefaultOptions sets policy.DefaultGangProbeLight.
	GangProbeLight float64
	// GangProbeEven is gittins's gang probe's quantile while every job
	// fits once the finished gangs are no longer than the single-GPU jobs
	// (policy.Alloc), in [0, 1); 0: GangProbeLight always (the default).
	GangProbeEven float64
	// AdvantageEven is gittins's advantage weight's exponent while every
	// job fits and the finished gangs are no longer than the single-GPU
	// jobs (policy.Alloc), from 0 to 4; 0: off. DefaultOptions sets
	// policy.DefaultAdvantageEven.
	AdvantageEven float64
	// PriorityBacklog is the priority backlog of esrpt and gittins
	// (policy.Alloc): 0 or above 1, in multiples of the cluster's GPUs;
	// 0: none. DefaultOptions sets policy.DefaultPriorityBacklog.
	PriorityBacklog float64
	// SpeedExponent is the exponent of the relative speed in esrpt's and
	// gittins's values (policy.Alloc), from 0 to 4; 0: 1.
	SpeedExponent float64
	// GangShare is gittins's gang share (policy.Alloc), from 0 to 1; 0:
	// none. DefaultOptions sets policy.DefaultGangShare.
	GangShare float64
	// MoveCost is gittins's cost of a move to another GPU type
	// (policy.Alloc), not negative; 0: none. The simulator sets it to its
	// restart overhead unless --move-cost=false.
	MoveCost model.Time
	// GangOwed is gittins's owed-gang threshold (policy.Alloc), not
	// negative; 0: none (the default).
	GangOwed model.Time
}

// DefaultRound is the allocation policies' round length unless set: Gavel's
// 6 minutes.
const DefaultRound = 6 * model.Minute

// EstSRPTRound is esrpt's round length unless set: an hour, since it
// reacts to arrivals and finishes anyway and every round may move jobs
// (chosen by experiment, docs/EXPERIMENTS.md).
const EstSRPTRound = 60 * model.Minute

// EnergyInputs are the cluster-specific inputs of the energy placer.
type EnergyInputs struct {
	// Cluster is the cluster the engine will schedule.
	Cluster *model.Cluster
	// Table holds every node's load thresholds per algorithm type.
	Table *placer.EnergyTable
	// Network is the cluster's network model; nil when it has no storage
	// devices.
	Network *network.Network
	// Upgrade lets the energy placer move a running job to a type on
	// which it runs at least placer.MinUpgrade times as fast once that
	// type has room after the round's placements (placer.Energy.Upgrades;
	// issue 28).
	// The simulator sets it by default (sim --upgrade); a shell whose
	// migrations restart jobs without their progress leaves it off.
	Upgrade bool
}

// DefaultOptions returns the stage settings used when a shell is given none.
// The hlas ratios were chosen by experiment (docs/EXPERIMENTS.md).
func DefaultOptions() Options {
	return Options{PriorityRatio: 2, StarveRatio: 4, TiresiasThresholds: policy.TiresiasThresholds(),
		Threshold: scaler.DefaultThresholdConfig(), MaxLoad: scaler.DefaultMaxLoad,
		Alloc: AllocOptions{GangProbe: policy.DefaultGangProbe, GangProbeLight: policy.DefaultGangProbeLight, PriorityBacklog: policy.DefaultPriorityBacklog,
			GangShare: policy.DefaultGangShare, AdvantageEven: policy.DefaultAdvantageEven}}
}

// Policies returns the queue policy names.
func Policies() []string {
	return []string{"fifo", "srtf", "hlas", "las", "tiresias", "maxmin", "maxthroughput", "ftf", "ftf-oracle", "esrpt", "esrpt-oracle", "gittins"}
}

// Recommended names the recommended queue policy and placer: gittins with
// hetero, the policy that does best against Gavel's over every family of
// workloads tried (docs/FIDELITY.md, issue 29). It is not the shells'
// default (Defaults); the help of their --policy flags names it.
func Recommended() Names { return Names{Policy: "gittins", Placer: "hetero", Scaler: "none"} }

// RecommendedNote is the sentence the shells' --policy help adds about
// Recommended.
const RecommendedNote = "recommended: gittins with --placer hetero (docs/FIDELITY.md, workload families)"

// Oracles returns the policy names that read what a real scheduler cannot
// know (a job's true length): lower bounds for comparison.
func Oracles() []string { return []string{"srtf", "ftf-oracle", "esrpt-oracle"} }

// Placers returns the placer names.
func Placers() []string { return []string{"pack", "spread", "hetero", "energy", "fit"} }

// Scalers returns the scaler names.
func Scalers() []string { return []string{"none", "threshold", "fulfillment"} }

// Defaults returns the names used when a shell is given none.
func Defaults() Names { return Names{Policy: "fifo", Placer: "pack", Scaler: "none"} }

// New builds an engine from stage names.
func New(n Names, o Options) (*engine.Engine, error) {
	q, err := teamPolicy(n.Policy, o)
	if err != nil {
		return nil, err
	}
	var p engine.Placer
	switch n.Placer {
	case "pack":
		p = placer.Pack{}
	case "spread":
		p = placer.Spread{}
	case "fit":
		p = &placer.Fit{}
	case "hetero":
		p = &placer.Hetero{}
	case "energy":
		en, err := energy(o.Energy)
		if err != nil {
			return nil, err
		}
		p = en
	default:
		return nil, unknown("placer", n.Placer, Placers())
	}
	sc, err := newScaler(n.Scaler, o)
	if err != nil {
		return nil, err
	}
	if o.WrapPlacer != nil {
		p = o.WrapPlacer(p)
	}
	return engine.New(q, p, sc)
}

// NewWithPlacer builds an engine from the policy and scaler names of n and
// the placer p, for a shell that manages its placer itself: the scheduler
// service's energy placer, whose inputs (learned thresholds, measured
// distances) change while it runs. n.Placer must be p's name.
func NewWithPlacer(n Names, o Options, p engine.Placer) (*engine.Engine, error) {
	if p == nil || p.Name() != n.Placer {
		return nil, fmt.Errorf("placer %q: the shell's placer does not match the name", n.Placer)
	}
	q, err := teamPolicy(n.Policy, o)
	if err != nil {
		return nil, err
	}
	sc, err := newScaler(n.Scaler, o)
	if err != nil {
		return nil, err
	}
	return engine.New(q, p, sc)
}

// teamPolicy builds the named queue policy, wrapped in the teams' queue
// layer (package quota) when o has queues.
func teamPolicy(name string, o Options) (engine.QueuePolicy, error) {
	q, err := queuePolicy(name, o)
	if err != nil || o.Queues == nil {
		return q, err
	}
	return quota.New(q, *o.Queues)
}

// queuePolicy builds the named queue policy.
func queuePolicy(name string, o Options) (engine.QueuePolicy, error) {
	if a, ok := allocPolicy(name, o.Alloc); ok {
		if o.Alloc.Round < 0 || o.Alloc.Realloc < 0 || o.Alloc.MoveCost < 0 || o.Alloc.GangOwed < 0 {
			return nil, fmt.Errorf("%s: the round, the reallocation interval, the move cost and the owed-gang threshold must not be negative", name)
		}
		if e := o.Alloc.Exponent; e < 0 || math.IsNaN(e) || math.IsInf(e, 0) || e > 16 {
			return nil, fmt.Errorf("%s: the esrpt exponent must be between 0 and 16, got %v", name, e)
		}
		if p := o.Alloc.GangProbe; !ValidQuantile(p) {
			return nil, fmt.Errorf("%s: the gang probe must be a quantile from 0 (none) to below 1, got %v", name, p)
		}
		if p := o.Alloc.GangProbeLight; !ValidQuantile(p) {
			return nil, fmt.Errorf("%s: the light-load gang probe must be a quantile from 0 (the gang probe's) to below 1, got %v", name, p)
		}
		if p := o.Alloc.GangProbeEven; !ValidQuantile(p) {
			return nil, fmt.Errorf("%s: the even-gang probe must be a quantile from 0 (the light-load probe's) to below 1, got %v", name, p)
		}
		if e := o.Alloc.AdvantageEven; !ValidSpeedExponent(e) {
			return nil, fmt.Errorf("%s: the advantage weight's exponent must be from 0 (off) to 4, got %v", name, e)
		}
		if b := o.Alloc.PriorityBacklog; !ValidBacklog(b) {
			return nil, fmt.Errorf("%s: the priority backlog must be 0 (none) or a finite multiple of the cluster's GPUs above 1, got %v", name, b)
		}
		if g := o.Alloc.GangShare; !ValidGangShare(g) {
			return nil, fmt.Errorf("%s: the gang share must be a share from 0 (none) to 1, got %v", name, g)
		}
		if e := o.Alloc.SpeedExponent; !ValidSpeedExponent(e) {
			return nil, fmt.Errorf("%s: the speed exponent must be between 0 and 4, got %v", name, e)
		}
		return a, nil
	}
	var q engine.QueuePolicy
	switch name {
	case "fifo":
		q = policy.FIFO{Backfill: o.Backfill}
	case "srtf":
		q = &policy.SRTF{}
	case "hlas", "las":
		if o.PriorityRatio <= 0 || o.StarveRatio <= 0 {
			return nil, fmt.Errorf("%s: the priority and starve threshold ratios must be positive", name)
		}
		q = &policy.HLAS{PriorityRatio: o.PriorityRatio, StarveRatio: o.StarveRatio, Blind: name == "las"}
	case "tiresias":
		t, err := tiresias(o)
		if err != nil {
			return nil, err
		}
		q = t
	default:
		return nil, unknown("policy", name, Policies())
	}
	return q, nil
}

// ValidQuantile reports whether p can be a gang probe's quantile
// (AllocOptions.GangProbe, GangProbeLight, GangProbeEven): from 0 to below 1. The
// configuration file's checks (package config) share these ranges.
func ValidQuantile(p float64) bool { return p >= 0 && p < 1 }

// ValidBacklog reports whether b can be a priority backlog
// (AllocOptions.PriorityBacklog): 0 (none) or a finite number above 1.
func ValidBacklog(b float64) bool { return b == 0 || b > 1 && !math.IsInf(b, 1) }

// ValidGangShare reports whether g can be a gang share
// (AllocOptions.GangShare): from 0 (none) to 1.
func ValidGangShare(g float64) bool { return g >= 0 && g <= 1 }

// ValidSpeedExponent reports whether e can be a speed exponent
// (AllocOptions.SpeedExponent): from 0 to 4.
func ValidSpeedExponent(e float64) bool { return e >= 0 && e <= 4 }

// allocPolicy builds the allocation policy called name, if it is one
// (fifo is one with o.Gavel).
func allocPolicy(name string, o AllocOptions) (*policy.Alloc, bool) {
	a := &policy.Alloc{Round: o.Round, Realloc: o.Realloc, Gavel: o.Gavel, Seed: o.Seed, GangProbe: o.GangProbe,
		GangProbeLight: o.GangProbeLight, GangProbeEven: o.GangProbeEven, AdvantageEven: o.AdvantageEven, PriorityBacklog: o.PriorityBacklog, SpeedExponent: o.SpeedExponent, GangShare: o.GangShare,
		MoveCost: o.MoveCost, GangOwed: o.GangOwed}
	if a.Round == 0 {
		a.Round = DefaultRound
		if name == "esrpt" || name == "esrpt-oracle" || name == "gittins" {
			a.Round = EstSRPTRound
		}
	}
	switch name {
	case "maxmin":
		a.Objective = policy.MaxMin
	case "maxthroughput":
		a.Objective = policy.MaxThroughput
	case "ftf", "ftf-oracle":
		a.Objective, a.Oracle = policy.FinishTime, name == "ftf-oracle"
	case "esrpt", "esrpt-oracle":
		a.Objective, a.Oracle, a.Exponent = policy.EstSRPT, name == "esrpt-oracle", o.Exponent
	case "gittins":
		a.Objective = policy.Gittins
	case "fifo":
		if !o.Gavel {
			return nil, false
		}
		a.Objective = policy.FIFOAlloc
	default:
		return nil, false
	}
	return a, true
}

// energy builds the energy placer.
func energy(in EnergyInputs) (*placer.Energy, error) {
	if in.Cluster == nil || in.Table == nil {
		return nil, errors.New("placer energy: needs the cluster's load thresholds (the shell derives them from its power model)")
	}
	e, err := placer.NewEnergy(in.Cluster, in.Table, in.Network)
	if err != nil {
		return nil, err
	}
	e.Upgrades = in.Upgrade
	return e, nil
}

// newScaler builds the named scaler; nil for "none".
func newScaler(name string, o Options) (engine.Scaler, error) {
	switch name {
	case "none", "":
		return nil, nil
	case "threshold":
		return scaler.NewThreshold(o.Threshold)
	case "fulfillment":
		return scaler.NewFulfillment(o.MaxLoad, o.Threshold.Reclaim)
	}
	return nil, unknown("scaler", name, Scalers())
}

// tiresias builds the tiresias policy, rejecting settings that would make
// its queues meaningless.
func tiresias(o Options) (*policy.Tiresias, error) {
	ts := o.TiresiasThresholds
	if len(ts) == 0 {
		ts = policy.TiresiasThresholds()
	}
	for i, t := range ts {
		if !(t > 0) || math.IsInf(t, 1) || (i > 0 && t <= ts[i-1]) {
			return nil, fmt.Errorf("--tiresias-thresholds %s: want positive GPU-seconds in ascending order", formatFloats(ts))
		}
	}
	if k := o.TiresiasPromoteKnob; !(k >= 0) || math.IsInf(k, 1) {
		return nil, fmt.Errorf("--tiresias-promote-knob %s: want 0 (off) or a positive multiple of the run time", formatFloats([]float64{k}))
	}
	return &policy.Tiresias{Thresholds: slices.Clone(ts), PromoteKnob: o.TiresiasPromoteKnob}, nil
}

func formatFloats(fs []float64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func unknown(stage, name string, known []string) error {
	return fmt.Errorf("unknown %s %q (known: %s)", stage, name, strings.Join(known, ", "))
}
