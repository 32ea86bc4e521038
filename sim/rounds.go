package sim

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
// arrival when nothing runs).
func (r *run) trigger(event, tick bool) bool {
	if !r.cfg.RoundsOnly {
		return event || tick
	}
	return tick || (event && len(r.state.Running()) == 0)
}
