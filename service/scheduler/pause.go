package scheduler

import (
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/service/api"
)

// Pause and resume (seed 002, claim 8; docs/ENERGY.md, "Paused jobs"): a
// job the energy placer holds back because the best node for it is in
// load state 3 shows the state paused, its reason naming the node, and
// gets a "paused" event when it enters that state; it is placed by the
// first round after a node leaves state 3 (any event, or the periodic
// round, runs one). Its record stays queued: the state is the round's.

// notePauses records the jobs the plan pauses: each is paused in this
// round, and one that was not paused in the previous round gets an event
// in batch b. Called with s.mu held, after noteWaits.
func (s *Scheduler) notePauses(plan engine.Plan, b *batch, now time.Time) {
	for _, p := range plan.Paused {
		j := s.tab.Active[p.Job.Spec.ID]
		if j == nil {
			continue
		}
		was := j.PauseRound == s.tab.Rounds-1
		j.PauseRound = s.tab.Rounds
		if !was {
			b.edit(j).Event(now, string(api.Paused), "held back by the %s placer: %s", "energy", p.Reason)
		}
	}
}
