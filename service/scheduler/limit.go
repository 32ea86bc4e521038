package scheduler

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// checkLimits stops every running attempt that has outrun its job's time
// limit (time_limit_s, like Slurm's --time): SIGTERM, then SIGKILL after
// the grace period; the job fails (exit code -1) once its replicas are
// gone. Run every round tick, so a limit is enforced within a round
// period.
func (s *Scheduler) checkLimits() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	b := s.newBatch()
	for _, j := range s.tab.Active {
		rec := &j.Rec
		if rec.State != api.Running || rec.Stopping != "" || rec.TimeLimitS <= 0 || rec.StartedAt == nil {
			continue
		}
		limit := time.Duration(rec.TimeLimitS) * time.Second
		if ran := now.Sub(*rec.StartedAt); ran >= limit {
			b.edit(j).ExitCode = ptr(-1)
			s.stopJob(b, j, stopFail, fmt.Sprintf("time limit of %s reached (attempt %d ran %s): stopped with SIGTERM "+
				"and its grace period of %ds", limit, rec.Attempt, ran.Round(time.Second), rec.GracePeriodS), now)
		}
	}
	_ = b.run("stop jobs past their time limit") // logged; tried again next tick
}

// tickForecast runs the forecaster's tick (tickETA) every round tick.
func (s *Scheduler) tickForecast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.learner.TickETA(s.now(), false)
}
