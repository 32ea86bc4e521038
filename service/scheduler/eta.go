package scheduler

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
)

// Forecasts (docs/ETA.md): a snapshot of the live state is simulated
// forward (package forecast) on demand, at most once per change of the
// jobs or nodes — a round that starts or ends a job, a submission, a node
// joining or leaving, a running job's speed measured for the first time —
// and at least every etaMaxAge; the forecasts served
// for waiting jobs are kept and compared with their actual starts, and
// finished jobs teach the spread of each class of lengths.
const (
	// etaMaxAge bounds how long a forecast is served while nothing
	// changes (measured speeds move, estimates run out).
	etaMaxAge = 10 * time.Second
)

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
		return api.ETA{}, conflict("job %s has %s: it has no forecast", id, st)
	}
	f, err := s.forecast()
	if err != nil {
		return api.ETA{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.rec.State.Final() {
		return api.ETA{}, conflict("job %s has %s: it has no forecast", id, j.rec.State)
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
	list := make([]*job, 0, len(s.active))
	for _, j := range s.active {
		list = append(list, j)
	}
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
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
		key := s.etaKeyOf()
		if c := s.eta.Latest(); c != nil && c.Key == key && c.State == any(s.state) && now.Sub(c.At) < etaMaxAge {
			return c, nil, true
		}
		f, snap := s.snapshot(now)
		f.Key, f.State = key, s.state
		return f, snap, false
	})
}

// etaKeyOf fingerprints what a forecast depends on besides time and the
// measured speeds' small moves: the jobs submitted, every active job's
// state, attempt, membership, stop and whether its speed is measured yet,
// and the nodes. Called with s.mu held.
func (s *Scheduler) etaKeyOf() uint64 {
	key := mix(uint64(s.nextSeq.Load()))
	for _, j := range s.active { // a sum: the order of the map does not matter
		r := &j.rec
		rate, _ := s.measuredRate(r)
		h := fnv.New64a()
		fmt.Fprintf(h, "%d|%s|%d|%d|%s|%d|%t", j.seq, r.State, r.Attempt, r.Generation, r.Stopping, len(r.Alloc), rate > 0)
		key += mix(h.Sum64())
	}
	for name, n := range s.nodes {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s|%t|%d", name, n.ready, len(n.gpus))
		key += mix(h.Sum64())
	}
	return key
}

// mix is SplitMix64's finalizer: it spreads a hash's bits before the sum.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
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

// snapshot captures the live state for a forecast at now; without a
// cluster it returns no snapshot and says why. Called with s.mu held.
func (s *Scheduler) snapshot(now time.Time) (*forecast.Served, *forecast.Snapshot) {
	f := forecast.NewServed(now, s.learned.History().Spreads(), [3]string{s.cfg.Names.Policy, s.cfg.Names.Placer, s.cfg.Names.Scaler})
	tab, _ := s.profileTable()
	if s.state == nil || tab == nil {
		f.None = waitNoNodes + ": there is nothing to forecast on"
		return f, nil
	}
	list := make([]*job, 0, len(s.active))
	for _, j := range s.active {
		if j.mj != nil {
			list = append(list, j)
		}
	}
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
	snap := &forecast.Snapshot{Now: model.Time(now.UnixMilli()), Cluster: s.cluster, Table: tab,
		Names: s.cfg.Names, Options: s.energy.Options(*s.cfg.Options, s.cluster), Jobs: make([]forecast.Job, 0, len(list))}
	for _, j := range list {
		fj, ok := s.forecastJob(j, tab, now)
		if !ok {
			continue
		}
		fj.Job.Seq = f.Add(j.rec.ID, fj.Length)
		snap.Jobs = append(snap.Jobs, fj)
		if j.rec.State == api.Running && j.rec.Stopping == "" {
			s.learned.Estimate(j.rec.ID, fj.Length, now)
		}
	}
	return f, snap
}

// profileTable returns the model's profile table. Called with s.mu held.
func (s *Scheduler) profileTable() (*profile.Table, bool) {
	if s.state == nil {
		return nil, false
	}
	t, ok := s.state.Profile.(*profile.Table)
	return t, ok
}

// forecastJob returns active job j as the forecast sees it: a copy of its
// model job and its length; false for a job the model does not hold
// consistently (running in its record, not in the model). Called with
// s.mu held.
func (s *Scheduler) forecastJob(j *job, tab *profile.Table, now time.Time) (forecast.Job, bool) {
	mj := *j.mj
	mj.Alloc = slices.Clone(j.mj.Alloc)
	mj.Periods = slices.Clone(j.mj.Periods)
	mj.Model = tab.ModelIndex(j.rec.Model)
	running := j.rec.State == api.Running
	if running != (mj.State == model.Running) || (running && len(mj.Alloc) == 0) {
		return forecast.Job{}, false
	}
	fj := forecast.Job{Job: &mj}
	if running {
		fj.Started = model.Time(j.rec.StartedAt.UnixMilli())
	}
	if running && j.rec.Stopping != "" {
		grace := time.Duration(j.rec.GracePeriodS) * time.Second
		fj.Length = forecast.Length{Kind: forecast.KindTimeLimit, Remaining: max(grace, time.Second),
			Detail: fmt.Sprintf("being stopped (%s): its GPUs are free within its grace period of %s", j.rec.Stopping, grace)}
		return fj, true
	}
	fj.Length = forecast.Estimate(s.facts(j, tab, now))
	return fj, true
}

// facts gathers what the service knows of job j's length. Called with
// s.mu held.
func (s *Scheduler) facts(j *job, tab *profile.Table, now time.Time) forecast.Facts {
	rec := &j.rec
	f := forecast.Facts{TotalSteps: rec.TotalSteps, TimeLimit: time.Duration(rec.TimeLimitS) * time.Second}
	f.UserMedian, f.UserRuns = s.learned.History().UserMedian(rec.User)
	f.AllMedian, f.AllRuns = s.learned.History().AllMedian()
	mi := tab.ModelIndex(rec.Model)
	if rec.State != api.Running {
		f.MatrixKnown = mi >= 0
		if rec.LastCheckpointAt != nil {
			f.DoneSteps = rec.CheckpointSteps
		}
		return f
	}
	f.Running = true
	if rec.StartedAt != nil {
		f.Elapsed = now.Sub(*rec.StartedAt)
	}
	f.DoneSteps = rec.ResumeSteps
	if rec.ProgressAt != nil && rec.StartedAt != nil && !rec.ProgressAt.Before(*rec.StartedAt) {
		f.DoneSteps = rec.Steps
	}
	f.MeasuredRate, f.MeasuredReports = s.measuredRate(rec)
	if mi >= 0 && j.mj != nil && len(j.mj.Alloc) > 0 {
		probe := model.Job{Spec: model.JobSpec{Steps: 1, GPUs: rec.GPUsRequested}, Model: mi}
		f.MatrixRate = tab.Speed(&probe, s.cluster.TypeOf(j.mj.Alloc[0]), len(j.mj.Alloc))
	}
	return f
}
