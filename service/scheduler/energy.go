package scheduler

import (
	"time"

	"github.com/gpusched/gpusched/service/energy"
)

// Live energy (package energy: power readings, the nodes' and jobs'
// energy, learned thresholds, measured distances, the energy placer's
// inputs, idle nodes, the report) reads the job table through
// energy.Table (s.world) and charges the jobs' records through it. Every
// call is made with s.mu held.

// newWorld returns the job table as live energy reads it.
func (s *Scheduler) newWorld() energy.Table {
	return energy.Table{T: &s.tab, Rate: func(id string) float64 { return s.learner.Rate(id) }, Queue: s.defaultQueue(),
		Power: func(id string, joules float64, d time.Duration, at time.Time) {
			s.learner.ETA.Series.Power(id, joules, d, at)
		}}
}

// Energy returns live energy (package energy's Room: the report, the
// replay's inputs, the calibration, the power samples).
func (s *Scheduler) Energy() *energy.Room { return s.room }
