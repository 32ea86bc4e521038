package scheduler

import (
	"time"

	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
)

// Forecasts (docs/ETA.md; package forecast's Room runs and serves them)
// read the scheduler through foreWorld, with s.mu held: the Live jobs,
// the nodes, the model. Finished jobs teach the spread of each class of
// lengths (package learn).

// Forecasts returns the forecasts of the active jobs (package forecast's
// Room: ETA, ETAs).
func (s *Scheduler) Forecasts() *forecast.Room { return s.forecasts }

// foreWorld is the scheduler as package forecast sees it.
type foreWorld struct{ s *Scheduler }

// Now implements forecast.World.
func (w foreWorld) Now() time.Time { return w.s.now() }

// Job implements forecast.World.
func (w foreWorld) Job(id string) (*ledger.Record, bool) {
	if j := w.s.tab.Jobs[id]; j != nil {
		return &j.Rec, true
	}
	return nil, false
}

// Jobs implements forecast.World.
func (w foreWorld) Jobs() []forecast.Live { return w.s.liveJobs() }

// Key implements forecast.World.
func (w foreWorld) Key(jobs []forecast.Live) (uint64, any) {
	return forecast.Key(w.s.nextSeq.Load(), jobs, forecast.LiveNodes(w.s.tab.Nodes)), w.s.tab.State
}

// Inputs implements forecast.World.
func (w foreWorld) Inputs(now time.Time) forecast.Inputs {
	s := w.s
	in := forecast.Inputs{Now: now, History: s.learned.History(), Names: s.cfg.Names,
		None: waitNoNodes + ": there is nothing to forecast on"}
	if tab, ok := s.tab.ProfileTable(); ok {
		in.Cluster, in.Table, in.Options = s.tab.Cluster, tab, s.energy.Options(*s.cfg.Options, s.tab.Cluster)
	}
	return in
}

// Estimate implements forecast.World.
func (w foreWorld) Estimate(id string, l forecast.Length, now time.Time) {
	w.s.learned.Estimate(id, l, now)
}

// Predict implements forecast.World.
func (w foreWorld) Predict(id string, p forecast.Prediction) { w.s.learned.Predict(id, p) }

// liveJobs returns the active jobs as forecasts read them, oldest first.
// Called with s.mu held.
func (s *Scheduler) liveJobs() []forecast.Live {
	list := jobs.BySeq(s.tab.Active)
	out := make([]forecast.Live, len(list))
	for i, j := range list {
		out[i] = s.live(j)
	}
	return out
}

// live returns active job j as forecasts read it. Called with s.mu held.
func (s *Scheduler) live(j *job) forecast.Live {
	rate, reports := s.learned.Series.MeasuredRate(j.Rec.ID, j.Rec.Attempt, j.Rec.Generation)
	return forecast.Live{Rec: &j.Rec, Job: j.Model, Seq: j.Seq, Rate: rate, Reports: reports}
}
