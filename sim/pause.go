package sim

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// notePauses writes a pause event, with the placer's reason, for every job
// that the round at t paused (seed 002, claim 8) and the previous round did
// not: once when a pause starts, not every round it lasts. A pause ends
// when the job starts or a round passes without pausing it.
func (r *run) notePauses(ps []engine.Pause, t model.Time) {
	if len(ps) == 0 {
		return
	}
	if r.paused == nil {
		r.paused = make([]int, len(r.jobs))
		for i := range r.paused {
			r.paused[i] = -1
		}
	}
	for _, p := range ps {
		seq := p.Job.Seq
		if r.paused[seq] != r.rounds-1 {
			r.emit(eventlog.Event{T: t, Kind: eventlog.Pause, Job: p.Job.Spec.ID, Reason: p.Reason})
		}
		r.paused[seq] = r.rounds
	}
}
