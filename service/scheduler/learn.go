package scheduler

import (
	"context"
	"fmt"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/learn"
)

// Online learning (package learn; s.learner reads the job table): the
// throughput profiles learned from progress reports (Prof), merged over
// the embedded matrix for the engine, and what forecasts learn (ETA: the
// history of run times, the accuracy of the predictions served, the jobs'
// series). Every call is made with s.mu held.

// loadLearning restores the learned profiles, installing the merged
// matrix, and the forecasts' history; call it before the jobs are loaded,
// so that their model indices come from the matrix.
func (s *Scheduler) loadLearning(ctx context.Context) error {
	ps, err := learn.NewProfiles(s.matrix, s.log)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.learner.Prof = ps
	merged, err := ps.Load(ctx, s.store, s.now())
	if err != nil {
		return err
	}
	if merged != nil {
		s.setMatrix(merged)
	}
	s.learner.ETA = learn.NewETA(s.log)
	s.learning = learn.NewRoom(&s.mu, ps, s.learner.ETA, s.learner.Replicas)
	return s.learner.ETA.Load(ctx, s.store, s.now())
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
	if s.learner.Prof == nil {
		return
	}
	if m := s.learner.Prof.Next(); m != nil {
		s.setMatrix(m)
	}
}
