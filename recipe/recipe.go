package recipe

import (
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/engine"
	"github.com/gpusched/gpusched/placer"
	"github.com/gpusched/gpusched/policy"
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
}

// DefaultOptions returns the stage settings used when a shell is given none.
// The hlas ratios were chosen by experiment (docs/EXPERIMENTS.md).
func DefaultOptions() Options {
	return Options{PriorityRatio: 1.5, StarveRatio: 2}
}

// Policies returns the queue policy names.
func Policies() []string { return []string{"fifo", "srtf", "hlas", "las"} }

// Placers returns the placer names.
func Placers() []string { return []string{"pack", "hetero"} }

// Scalers returns the scaler names.
func Scalers() []string { return []string{"none"} }

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
	default:
		return nil, unknown("policy", n.Policy, Policies())
	}
	var p engine.Placer
	switch n.Placer {
	case "pack":
		p = placer.Pack{}
	case "hetero":
		p = &placer.Hetero{}
	default:
		return nil, unknown("placer", n.Placer, Placers())
	}
	switch n.Scaler {
	case "none", "":
	default:
		return nil, unknown("scaler", n.Scaler, Scalers())
	}
	return engine.New(q, p, nil)
}

func unknown(stage, name string, known []string) error {
	return fmt.Errorf("unknown %s %q (known: %s)", stage, name, strings.Join(known, ", "))
}
