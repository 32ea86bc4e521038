package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/learn"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// Online learning (package learn): the throughput profiles learned from
// progress reports (s.prof), merged over the embedded matrix for the
// engine, and what forecasts learn (s.learned: the history of run times,
// the accuracy of the predictions served, the jobs' series). Every call
// is made with s.mu held.

// loadLearning restores the learned profiles, installing the merged
// matrix, and the forecasts' history; call it before the jobs are loaded,
// so that their model indices come from the matrix.
func (s *Scheduler) loadLearning(ctx context.Context) error {
	ps, err := learn.NewProfiles(s.matrix, s.log)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.prof = ps
	merged, err := ps.Load(ctx, s.store, s.now())
	if err != nil {
		return err
	}
	if merged != nil {
		s.setMatrix(merged)
	}
	s.learned = learn.NewETA(s.log)
	s.learning = learn.NewRoom(&s.mu, s.prof, s.learned, func(id string) ([]ledger.Replica, bool) {
		if j := s.tab.Jobs[id]; j != nil {
			return j.Rec.Replicas, true
		}
		return nil, false
	})
	return s.learned.Load(ctx, s.store, s.now())
}

// Learning returns online learning (package learn's Room: the learned
// profiles, the forecasts' accuracy, the jobs' series).
func (s *Scheduler) Learning() *learn.Room { return s.learning }

// setMatrix makes m the scheduler's matrix: job types are numbered by a
// profile.Table of m (a job type m gained shifts the others), and every
// active job's model index is derived again.
func (s *Scheduler) setMatrix(m *profile.Matrix) {
	t, err := profile.NewTable(m, &model.Cluster{}, s.ref)
	if err != nil {
		s.log.Error("cannot use the merged throughput matrix", "err", err)
		return
	}
	s.matrix = m
	s.models = make(map[string]int, len(t.Models()))
	for _, name := range t.Models() {
		s.models[name] = t.ModelIndex(name)
	}
	for _, j := range s.tab.Active {
		if j.Model != nil {
			j.Model.Model = t.ModelIndex(j.Rec.Model)
		}
	}
}

// swapMatrix installs a merged matrix waiting for the rebuild (which
// calls it first, so that the new table and the jobs' indices agree).
func (s *Scheduler) swapMatrix() {
	if s.prof == nil {
		return
	}
	if m := s.prof.Next(); m != nil {
		s.setMatrix(m)
	}
}

// observeProgress learns from a new progress report of active job j whose
// record (before the report) is cur: the profiles from a running job that
// is not being stopped, the job's series.
func (s *Scheduler) observeProgress(cur *record, rep progressReport) {
	if cur.State != api.Running || cur.Stopping != "" {
		s.prof.Forget(cur.ID)
	} else {
		s.prof.ObserveProgress(learn.Progress{Job: cur.ID, Model: cur.Model, GPUType: nodes.JobGPUType(cur, s.tab.Nodes),
			Attempt: cur.Attempt, Generation: cur.Generation, GPUs: cur.LiveGPUs(), Steps: rep.steps, At: rep.at})
	}
	if cur.State == api.Running {
		s.learned.Series.Progress(cur.ID, cur.Attempt, cur.Generation, rep.steps, rep.at)
	}
}

// jobRate returns the latest measured steps/s of running job id (0 when
// none is known).
func (s *Scheduler) jobRate(id string) float64 {
	if s.prof == nil {
		return 0
	}
	return s.prof.Rate(id)
}

// tickProfiles runs every round tick: a rebuild of the matrix the profiles
// ask for comes with the next round.
func (s *Scheduler) tickProfiles(now time.Time) {
	if s.prof.Tick(now, func(id string) bool { return s.tab.Active[id] != nil }) {
		s.dirty = true
		s.notify()
	}
}

// noteStart records, as job j starts at now, the outcomes of the
// predictions served while it waited and its length as estimated now (the
// base of what its run time will teach). Called with s.mu held, after the
// start is applied.
func (s *Scheduler) noteStart(j *job, now time.Time) {
	s.learned.Started(j.Rec.ID, now)
	if tab, ok := s.tab.ProfileTable(); ok && j.Model != nil {
		if fj, ok := forecast.JobOf(s.live(j), tab, s.tab.Cluster, s.learned.History(), now); ok {
			s.learned.Estimate(j.Rec.ID, fj.Length, now)
		}
	}
}

// noteEnd learns from job j, which stopped running at now in state st.
// Called with s.mu held, after the record is applied.
func (s *Scheduler) noteEnd(j *job, st api.State, now time.Time) {
	s.learned.Ended(j.Rec.ID, j.Rec.User, j.Rec.StartedAt, st, now)
}

// tickETA writes what the forecasts learned (with force, all of it).
// Called with s.mu held.
func (s *Scheduler) tickETA(now time.Time, force bool) {
	s.learned.Tick(now, force, func(id string) bool {
		j := s.tab.Jobs[id]
		return j == nil || j.Rec.State.Final()
	})
}
