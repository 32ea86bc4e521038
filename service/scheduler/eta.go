package scheduler

import "github.com/gpusched/gpusched/service/forecast"

// Forecasts (docs/ETA.md; package forecast's Room runs and serves them)
// read the job table through s.learner (learn.Table), with s.mu held: the
// Live jobs, the nodes, the model. Finished jobs teach the spread of each
// class of lengths (package learn).

// Forecasts returns the forecasts of the active jobs (package forecast's
// Room: ETA, ETAs).
func (s *Scheduler) Forecasts() *forecast.Room { return s.forecasts }
