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
	// MaxLoad is the fulfillment scaler's desired maximum load (seed 001).
	MaxLoad float64
	// Energy is what the energy placer needs (seed 002); shells derive it
	// from the cluster description.
	Energy EnergyInputs
	// Queues, when set, wraps the policy with the queue layer (package
	// quota: per-team queues, quotas, fair share).
	Queues *quota.Config
}

// EnergyInputs are the cluster-specific inputs of the energy placer.
type EnergyInputs struct {
	// Cluster is the cluster the engine will schedule.
	Cluster *model.Cluster
	// Table holds every node's load thresholds per algorithm type.
	Table *placer.EnergyTable
	// Network is the cluster's network model; nil when it has no storage
	// devices.
	Network *network.Network
}

// DefaultOptions returns the stage settings used when a shell is given none.
// The hlas ratios were chosen by experiment (docs/EXPERIMENTS.md).
func DefaultOptions() Options {
	return Options{PriorityRatio: 2, StarveRatio: 4, TiresiasThresholds: policy.TiresiasThresholds(),
		Threshold: scaler.DefaultThresholdConfig(), MaxLoad: scaler.DefaultMaxLoad}
}

// Policies returns the queue policy names.
func Policies() []string { return []string{"fifo", "srtf", "hlas", "las", "tiresias"} }

// Placers returns the placer names.
func Placers() []string { return []string{"pack", "spread", "hetero", "energy"} }

// Scalers returns the scaler names.
func Scalers() []string { return []string{"none", "threshold", "fulfillment"} }

// Defaults returns the names used when a shell is given none.
func Defaults() Names { return Names{Policy: "fifo", Placer: "pack", Scaler: "none"} }

// New builds an engine from stage names.
func New(n Names, o Options) (*engine.Engine, error) {
	var q engine.QueuePolicy
	switch n.Policy {
	case "fifo":
		q = policy.FIFO{Backfill: o.Backfill}
	case "srtf":
		q = &policy.SRTF{}
	case "hlas", "las":
		if o.PriorityRatio <= 0 || o.StarveRatio <= 0 {
			return nil, fmt.Errorf("%s: the priority and starve threshold ratios must be positive", n.Policy)
		}
		q = &policy.HLAS{PriorityRatio: o.PriorityRatio, StarveRatio: o.StarveRatio, Blind: n.Policy == "las"}
	case "tiresias":
		t, err := tiresias(o)
		if err != nil {
			return nil, err
		}
		q = t
	default:
		return nil, unknown("policy", n.Policy, Policies())
	}
	if o.Queues != nil {
		wrapped, err := quota.New(q, *o.Queues)
		if err != nil {
			return nil, err
		}
		q = wrapped
	}
	var p engine.Placer
	switch n.Placer {
	case "pack":
		p = placer.Pack{}
	case "spread":
		p = placer.Spread{}
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
	return engine.New(q, p, sc)
}

// energy builds the energy placer.
func energy(in EnergyInputs) (*placer.Energy, error) {
	if in.Cluster == nil || in.Table == nil {
		return nil, errors.New("placer energy: needs the cluster's load thresholds (the shell derives them from its power model)")
	}
	return placer.NewEnergy(in.Cluster, in.Table, in.Network)
}

// newScaler builds the named scaler; nil for "none".
func newScaler(name string, o Options) (engine.Scaler, error) {
	switch name {
	case "none", "":
		return nil, nil
	case "threshold":
		return scaler.NewThreshold(o.Threshold)
	case "fulfillment":
		return scaler.NewFulfillment(o.MaxLoad)
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
