package scheduler

import (
	"context"
	"time"

	"github.com/gpusched/gpusched/service/ledger"
)

// Retention (the store's side: package ledger's Prune and SeqKey).

// PruneJobs deletes the jobs that ended (succeeded, failed or were
// cancelled) before cutoff: their records, their replicas' logs and what
// the scheduler keeps of them in memory. It returns their IDs, oldest
// first, for the caller to drop what it keeps of them (the EDL state). A
// store failure stops it; the jobs pruned so far stay pruned.
func (s *Scheduler) PruneJobs(ctx context.Context, cutoff time.Time) ([]string, error) {
	var pruned []string
	for {
		ids, err := s.pruneBatch(ctx, cutoff)
		pruned = append(pruned, ids...)
		for _, id := range ids { // outside the lock: logs may be large
			if err := s.logs.Remove(id); err != nil {
				s.log.Warn("pruning a job's logs", "job", id, "err", err)
			}
		}
		if err != nil || len(ids) == 0 {
			return pruned, err
		}
	}
}

// pruneBatch prunes at most one transaction's worth of ended jobs (their
// records and memory; PruneJobs removes their logs); the scheduler's lock
// is released between batches.
func (s *Scheduler) pruneBatch(ctx context.Context, cutoff time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.tab.EndedBefore(cutoff)
	if len(old) == 0 {
		return nil, nil
	}
	old = old[:min(len(old), ledger.PruneLimit(s.store))]
	floor := max(s.prunedSeq, old[len(old)-1].Seq)
	ids := make([]string, 0, len(old))
	for _, j := range old {
		ids = append(ids, j.Rec.ID)
	}
	if err := ledger.Prune(ctx, s.store, ids, floor); err != nil {
		return nil, err
	}
	s.prunedSeq = floor
	for _, id := range ids {
		delete(s.tab.Jobs, id)
		s.learner.ETA.Forget(id)
	}
	return ids, nil
}
