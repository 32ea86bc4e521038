package sim

import (
	"math"

	"github.com/gpusched/gpusched/core/model"
)

// trigger reports whether a scheduling round runs at an instant where
// finishes or submissions happened (event) and whether a periodic round is
// due (tick).
//
// Event-driven (the default), both do. With Config.RoundsOnly the
// simulator follows Gavel's (scheduler.py, simulate): rounds of
// Config.Round, a new job waits for the next round, and GPUs that a job
// frees in the middle of a round stay idle until the round ends; but when
// no job is running any more — the last job of the round finished early,
// or the cluster is idle when a job arrives — the next round starts at
// once (Gavel ends a round when its last job ends, and jumps to the next
// arrival when nothing runs). See also roundEnd.
func (r *run) trigger(event, tick bool) bool {
	if !r.cfg.RoundsOnly {
		return event || tick
	}
	return tick || (event && len(r.state.Running()) == 0)
}

// roundEnd, with Config.RoundsOnly, moves the next round to when the round
// started at t ends in Gavel's simulator: each job there runs a micro-task
// of whole steps, int(steps/s × round) or what it has left, and the round
// ends when the longest micro-task does — up to a step's time before the
// full round, so that Gavel's round grid drifts earlier round after round.
// Jobs given as durations (no steps) run the whole round.
func (r *run) roundEnd(t model.Time) {
	if !r.cfg.RoundsOnly || r.nextRnd < 0 || len(r.state.Running()) == 0 {
		return
	}
	end := t
	for _, j := range r.state.Running() {
		if j.Spec.Steps <= 0 || j.Rate <= 0 {
			return
		}
		steps := min(math.Floor(j.Rate*r.cfg.Round.Seconds()), j.Work-j.DoneAt(t))
		end = max(end, max(j.Resume, t)+model.Time(math.Ceil(steps/j.Rate*1000)))
	}
	if end > t && end < r.nextRnd {
		r.nextRnd = end
	}
}
