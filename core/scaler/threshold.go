package scaler

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// ThresholdConfig is seed 000's elasticConfig.
type ThresholdConfig struct {
	// Proportion is elasticProportion p: the share of the idle capacity
	// lent to elastic growth, in (0, 1].
	Proportion float64
	// Expand is expandThreshold et; Shrink is scalingThreshold st; 0 <= et
	// <= st.
	Expand, Shrink float64
	// Period is hpaCheckMinutes, the interval between two passes (> 0).
	Period model.Time
	// CountWaiting (elasticConfig.countWaiting) counts, in the work in use
	// a, the minimum GPUs of the jobs that wait for GPUs (and that the
	// round neither starts nor rejects): Volcano's reading, where an
	// admitted (Inqueue) job's minimum resources are reserved. Then a job
	// that arrives on a cluster filled by elastic growth raises a, T goes
	// above st, and the pass shrinks the elastic jobs so that it starts.
	// Off (the default), a counts running work only.
	CountWaiting bool
	// Reclaim (elasticConfig.reclaim, sim --reclaim) takes lent GPUs back
	// at once: a waiting job that would go to GPUs elastic jobs hold above
	// their minimums shrinks them in the same round (engine.Reclaimer),
	// in the shrink order of step 4, instead of waiting for the next pass
	// or going to another GPU type. On by default; off, the scaler is
	// seed 000's rule as written.
	Reclaim bool
}

// DefaultThresholdConfig returns the default configuration: the whole
// idle capacity lent to elastic growth (p = 1), expand below et = 0.8,
// shrink above st = 1 (issue 28: on the robustness grid's development set
// it meets the scaler's target in 60 of 72 cells against 47 with the
// seed's example, and on Pollux's workloads it matches fulfillment,
// docs/EXPERIMENTS.md), and lent GPUs come back at once.
func DefaultThresholdConfig() ThresholdConfig {
	return ThresholdConfig{Proportion: 1, Expand: 0.8, Shrink: 1, Period: 5 * model.Minute, Reclaim: true}
}

// SeedThresholdConfig returns seed 000's example elasticConfig (p = 0.3,
// et = 0.3, st = 0.9, every 5 minutes) with reclaim off: the seed's rule
// as written (testdata/config/seed000.yaml).
func SeedThresholdConfig() ThresholdConfig {
	return ThresholdConfig{Proportion: 0.3, Expand: 0.3, Shrink: 0.9, Period: 5 * model.Minute}
}

// Validate checks the configuration's ranges.
func (c ThresholdConfig) Validate() error {
	switch {
	case !(c.Proportion > 0 && c.Proportion <= 1):
		return fmt.Errorf("elasticProportion must be in (0, 1], got %g", c.Proportion)
	case !(c.Expand >= 0 && c.Expand <= c.Shrink) || math.IsInf(c.Shrink, 0):
		return fmt.Errorf("expandThreshold and scalingThreshold must satisfy 0 <= expandThreshold <= scalingThreshold, got %g and %g", c.Expand, c.Shrink)
	case c.Period <= 0:
		return fmt.Errorf("hpaCheckMinutes must be positive, got %gm", c.Period.Seconds()/60)
	}
	return nil
}

// Threshold is seed 000's scaler. It acts at its first round and then once
// per Period; Next asks for a round at each period. Build it with
// NewThreshold.
//
// While no job waits, a round places nothing, stops nothing and moves
// nothing, so a pass depends only on the state (the cluster's use, the
// elastic jobs and their sizes and resize history), never on the time. So
// after a pass that changed nothing while no job waited, the passes that
// follow would change nothing either until some other round has changed
// the state: Next asks for no round then (idle), and the next pass falls on
// the first period boundary after the state changed — exactly where it
// would have fallen had every idle period been woken for. This keeps a
// long-running elastic job from costing a round every period of its life
// when nothing happens.
type Threshold struct {
	cfg ThresholdConfig
	due model.Time
	// followUp asks for another round at once after a shrink, so that
	// waiting jobs can use the GPUs it freed.
	followUp bool
	// idle: the last pass changed nothing and no round has run since.
	idle  bool
	cands []*model.Job
}

// NewThreshold returns a threshold scaler for a valid configuration.
func NewThreshold(cfg ThresholdConfig) (*Threshold, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("threshold scaler: %w", err)
	}
	return &Threshold{cfg: cfg}, nil
}

// Name returns "threshold".
func (*Threshold) Name() string { return "threshold" }

// Next implements engine.Waker: at once after a shrink, at the next period
// boundary, or never while idle.
func (t *Threshold) Next(now model.Time) model.Time {
	switch {
	case t.followUp:
		return now
	case t.idle:
		return -1
	}
	return t.due
}

// Mode is what a threshold pass does (seed 000 steps 3–5).
type Mode string

// Threshold pass modes.
const (
	Expand   Mode = "expand"
	Shrink   Mode = "shrink"
	Maintain Mode = "maintain"
)

// Pass is one pass's figures (seed 000 steps 1–2), in GPUs.
type Pass struct {
	A, Used, EU  int
	M, MT, T, EM float64
	Mode         Mode
}

// Plan computes a pass's figures from the cluster's GPUs, the GPUs in use
// and the elastic surplus EU (seed 000 steps 1–5).
func (c ThresholdConfig) Plan(total, used, eu int) Pass {
	p := Pass{A: total, Used: used, EU: eu, MT: (c.Expand + c.Shrink) / 2}
	a := used - eu                        // guaranteed work only
	p.M = float64(total-a) * c.Proportion // step 1
	p.T = math.Inf(1)                     // step 2: T = EU / M
	if p.M > 0 {
		p.T = float64(eu) / p.M
	} else if eu == 0 {
		p.T = 0
	}
	switch {
	case p.T < c.Expand: // step 3
		p.Mode, p.EM = Expand, p.MT*p.M-float64(eu)
	case p.T > c.Shrink: // step 4 (T > st, the README's reading)
		p.Mode, p.EM = Shrink, float64(eu)-p.MT*p.M
	default: // step 5
		p.Mode = Maintain
	}
	return p
}

// Scale implements engine.Scaler: one pass when a period is due.
func (t *Threshold) Scale(s *model.State, now model.Time, r *engine.Resizer) {
	t.followUp = false
	if !t.passDue(now) {
		return
	}
	t.due = now + t.cfg.Period
	jobs := r.Jobs()
	eu := 0
	for _, j := range jobs {
		eu += r.Size(j) - j.Spec.MinGPUs
	}
	total := s.Cluster.TotalGPUs()
	used := total - r.Pool().FreeAll()
	if t.cfg.CountWaiting {
		used = min(total+eu, used+r.WaitingMin()) // a = used − EU stays ≤ A
	}
	p := t.cfg.Plan(total, used, eu)
	changed := false
	switch p.Mode {
	case Expand:
		changed = t.expand(jobs, r, p.EM)
	case Shrink:
		changed = t.shrink(jobs, r, p.EM)
		t.followUp = changed
	}
	t.idle = !changed && len(s.Waiting()) == 0
}

// passDue reports whether a round at now makes a pass. After an idle pass
// the periods that went by unwoken count as passed (they would have changed
// nothing), so a pass is due only on a period boundary; a round between
// boundaries ends the idleness and asks for the next one.
func (t *Threshold) passDue(now model.Time) bool {
	if now < t.due {
		t.idle = false
		return false
	}
	if t.idle {
		t.due += (now - t.due) / t.cfg.Period * t.cfg.Period // the last boundary <= now
		if t.due < now {
			t.due += t.cfg.Period
			t.idle = false
			return false
		}
	}
	return true
}

// expand gives one replica at a time to the candidates in seed 000's expand
// order, round after round, while the budget pays for it (step 3); it
// reports whether any replica was given.
func (t *Threshold) expand(jobs []*model.Job, r *engine.Resizer, em float64) bool {
	t.cands = t.cands[:0]
	for _, j := range jobs {
		if r.Size(j) < j.Spec.MaxGPUs {
			t.cands = append(t.cands, j)
		}
	}
	// Higher priority, fewer past expansions, earlier last expansion.
	slices.SortFunc(t.cands, func(a, b *model.Job) int {
		return cmp.Or(cmp.Compare(b.Spec.Priority, a.Spec.Priority), cmp.Compare(a.Expansions, b.Expansions),
			cmp.Compare(a.LastExpand, b.LastExpand), cmp.Compare(a.Seq, b.Seq))
	})
	return walk(t.cands, em, func(j *model.Job, k int) bool { return r.Grow(j, k) })
}

// shrink takes one replica at a time from the candidates in seed 000's
// shrink order while the budget lasts (step 4); it reports whether any
// replica was taken.
func (t *Threshold) shrink(jobs []*model.Job, r *engine.Resizer, em float64) bool {
	t.shrinkOrder(jobs, r, ^engine.TypeSet(0))
	return walk(t.cands, em, func(j *model.Job, k int) bool { return r.Shrink(j, k) })
}

// shrinkOrder sets t.cands to the jobs above their minimums on a type in
// types, in seed 000's shrink order: lower priority, fewer past shrinks,
// earlier last shrink.
func (t *Threshold) shrinkOrder(jobs []*model.Job, r *engine.Resizer, types engine.TypeSet) {
	t.cands = t.cands[:0]
	for _, j := range jobs {
		if r.Size(j) > j.Spec.MinGPUs && types.Has(r.Type(j)) {
			t.cands = append(t.cands, j)
		}
	}
	slices.SortFunc(t.cands, func(a, b *model.Job) int {
		return cmp.Or(cmp.Compare(a.Spec.Priority, b.Spec.Priority), cmp.Compare(a.Shrinks, b.Shrinks),
			cmp.Compare(a.LastShrink, b.LastShrink), cmp.Compare(a.Seq, b.Seq))
	})
}

// Reclaims implements engine.Reclaimer: ThresholdConfig.Reclaim.
func (t *Threshold) Reclaims() bool { return t.cfg.Reclaim }

// Donate implements engine.Donor (with Reclaim; without, it gives
// nothing): one replica from the first job in seed 000's shrink order
// among those above their minimums on a type in types.
func (t *Threshold) Donate(_ *model.State, _ model.Time, r *engine.Resizer, _ *model.Job, types engine.TypeSet) bool {
	if !t.cfg.Reclaim {
		return false
	}
	t.shrinkOrder(r.Jobs(), r, types)
	for _, j := range t.cands {
		if r.Shrink(j, j.Spec.Replica()) {
			return true
		}
	}
	return false
}

// budgetSlack absorbs floating-point rounding in budget comparisons.
const budgetSlack = 1e-9

// walk visits cands in order, again and again, applying step to one replica
// of each while em − r1 >= 0; a candidate whose step fails or whose replica
// the budget cannot pay leaves the walk. It reports whether any step was
// applied. Every visit applies a step or drops a candidate, so a walk costs
// O(len(cands) + replicas moved).
func walk(cands []*model.Job, em float64, step func(*model.Job, int) bool) bool {
	moved := false
	for len(cands) > 0 {
		kept := cands[:0]
		for _, j := range cands {
			r1 := j.Spec.Replica()
			// The budget is a float: allow for rounding ((et+st)/2 is
			// not exact), so that EM = 2 pays for two 1-GPU replicas.
			if em-float64(r1) >= -budgetSlack && step(j, r1) {
				em -= float64(r1)
				moved = true
				kept = append(kept, j)
			}
		}
		cands = kept
	}
	return moved
}
