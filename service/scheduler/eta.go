package scheduler

import (
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
)

// Forecasts (docs/ETA.md): a snapshot of the live state is simulated
// forward (package forecast) on demand, at most once per change of the
// jobs or nodes — a round that starts or ends a job, a submission, a node
// joining or leaving, a running job's speed measured for the first time —
// and at least every forecast.MaxAge; the forecasts served for waiting
// jobs are kept and compared with their actual starts, and finished jobs
// teach the spread of each class of lengths (package learn).

// ETA returns the forecast of active job id. ErrNotFound; ErrConflict for
// a job that has ended.
func (s *Scheduler) ETA(id string) (api.ETA, error) {
	s.mu.Lock()
	j := s.jobs[id]
	var st api.State
	if j != nil {
		st = j.rec.State
	}
	s.mu.Unlock()
	switch {
	case j == nil:
		return api.ETA{}, noJob(id)
	case st.Final():
		return api.ETA{}, api.Conflict("job %s has %s: it has no forecast", id, st)
	}
	f, err := s.forecast()
	if err != nil {
		return api.ETA{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.rec.State.Final() {
		return api.ETA{}, api.Conflict("job %s has %s: it has no forecast", id, j.rec.State)
	}
	return s.etaOf(f, j), nil
}

// ETAs returns the forecast of every active job, oldest first.
func (s *Scheduler) ETAs() ([]api.ETA, error) {
	f, err := s.forecast()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := bySeq(s.active)
	out := make([]api.ETA, len(list))
	for i, j := range list {
		out[i] = s.etaOf(f, j)
	}
	return out, nil
}

// forecast returns the forecast of the current round, running it when the
// cached one is older.
func (s *Scheduler) forecast() (*forecast.Served, error) {
	return s.eta.Get(func() (*forecast.Served, *forecast.Snapshot, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := s.now()
		jobs := s.liveJobs()
		key := forecast.Key(s.nextSeq.Load(), jobs, s.liveNodes())
		if c := s.eta.Latest(); c != nil && c.Key == key && c.State == any(s.state) && now.Sub(c.At) < forecast.MaxAge {
			return c, nil, true
		}
		in := forecast.Inputs{Now: now, History: s.learned.History(), Names: s.cfg.Names,
			None: waitNoNodes + ": there is nothing to forecast on"}
		if tab, ok := s.profileTable(); ok {
			in.Cluster, in.Table, in.Options = s.cluster, tab, s.energy.Options(*s.cfg.Options, s.cluster)
		}
		f, snap := forecast.Take(in, jobs, func(id string, l forecast.Length) { s.learned.Estimate(id, l, now) })
		f.Key, f.State = key, s.state
		return f, snap, false
	})
}

// liveJobs returns the active jobs as forecasts read them, oldest first.
// Called with s.mu held.
func (s *Scheduler) liveJobs() []forecast.Live {
	list := bySeq(s.active)
	out := make([]forecast.Live, len(list))
	for i, j := range list {
		out[i] = s.live(j)
	}
	return out
}

// live returns active job j as forecasts read it. Called with s.mu held.
func (s *Scheduler) live(j *job) forecast.Live {
	rate, reports := s.learned.Series.MeasuredRate(j.rec.ID, j.rec.Attempt, j.rec.Generation)
	return forecast.Live{Rec: &j.rec, Job: j.mj, Seq: j.seq, Rate: rate, Reports: reports}
}

// liveNodes returns the nodes as the forecasts' key reads them. Called
// with s.mu held.
func (s *Scheduler) liveNodes() []forecast.LiveNode {
	out := make([]forecast.LiveNode, 0, len(s.nodes))
	for name, n := range s.nodes {
		out = append(out, forecast.LiveNode{Name: name, Ready: n.Ready, GPUs: len(n.GPUs)})
	}
	return out
}

// etaOf returns job j's ETA from forecast f and records a waiting job's
// prediction (for the accuracy). Called with s.mu held.
func (s *Scheduler) etaOf(f *forecast.Served, j *job) api.ETA {
	out, p := f.ETA(j.rec.ID, j.rec.State, j.rec.StartedAt)
	if p != nil {
		s.learned.Predict(j.rec.ID, *p)
	}
	return out
}

// profileTable returns the model's profile table. Called with s.mu held.
func (s *Scheduler) profileTable() (*profile.Table, bool) {
	if s.state == nil {
		return nil, false
	}
	t, ok := s.state.Profile.(*profile.Table)
	return t, ok
}
