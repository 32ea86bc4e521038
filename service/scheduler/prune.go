package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/store"
)

// jobSeqKey holds the highest sequence number of a pruned job: load starts
// numbering after it, so that a job is never given the ID (nor the job
// token, derived from the ID) of a pruned one.
const jobSeqKey = "meta/job-seq"

// pruneBatch caps the jobs pruned in one transaction on a store without a
// limit of its own (bbolt); the scheduler's lock is released between
// batches.
const pruneBatch = 500

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
// records and memory; PruneJobs removes their logs).
func (s *Scheduler) pruneBatch(ctx context.Context, cutoff time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := pruneBatch
	if l := store.TxnWriteLimit(s.store); l > 0 {
		limit = min(limit, l-1) // and the sequence floor
	}
	var old []*job
	for _, j := range s.jobs {
		if j.rec.State.Final() && endedAt(j).Before(cutoff) {
			old = append(old, j)
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	slices.SortFunc(old, func(a, b *job) int { return a.seq - b.seq })
	old = old[:min(len(old), limit)]
	floor := max(s.prunedSeq, old[len(old)-1].seq)
	ops := make([]store.Op, 0, len(old)+1)
	ids := make([]string, 0, len(old))
	for _, j := range old {
		ops = append(ops, store.OpDelete(ledger.JobKey(j.rec.ID)))
		ids = append(ids, j.rec.ID)
	}
	ops = append(ops, store.OpPut(jobSeqKey, []byte(strconv.Itoa(floor))))
	if _, err := s.store.Txn(ctx, ops...); err != nil {
		return nil, fmt.Errorf("server: prune jobs: %w", err)
	}
	s.prunedSeq = floor
	for _, id := range ids {
		delete(s.jobs, id)
		s.learned.Forget(id)
	}
	return ids, nil
}

// endedAt is when an ended job ended (when it was submitted if the record
// has no end time).
func endedAt(j *job) time.Time {
	if t := j.rec.FinishedAt; t != nil {
		return *t
	}
	return j.rec.SubmittedAt
}

// loadSeqFloor reads the highest sequence number of a pruned job (0 when
// none was pruned).
func (s *Scheduler) loadSeqFloor(ctx context.Context) (int, error) {
	kv, ok, err := s.store.Get(ctx, jobSeqKey)
	if err != nil || !ok {
		return 0, err
	}
	var n int
	if err := json.Unmarshal(kv.Value, &n); err != nil || n < 0 {
		return 0, fmt.Errorf("server: load %s: want a job number, got %q", jobSeqKey, kv.Value)
	}
	return n, nil
}
