package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/service/store"
)

// Retention: ended jobs are pruned (their records deleted) in batches;
// SeqKey keeps the highest sequence number of a pruned job, from which a
// loaded scheduler numbers new jobs, so that a job is never given the ID
// (nor the job token, derived from the ID) of a pruned one.

// SeqKey holds the highest sequence number of a pruned job.
const SeqKey = "meta/job-seq"

// pruneBatch caps the jobs pruned in one transaction on a store without a
// limit of its own (bbolt).
const pruneBatch = 500

// PruneLimit returns the most jobs one Prune may delete in st.
func PruneLimit(st store.Store) int {
	limit := pruneBatch
	if l := store.TxnWriteLimit(st); l > 0 {
		limit = min(limit, l-1) // and the sequence floor
	}
	return limit
}

// Prune deletes the records of jobs ids (at most PruneLimit) and raises
// the sequence floor to floor, in one transaction.
func Prune(ctx context.Context, st store.Store, ids []string, floor int) error {
	ops := make([]store.Op, 0, len(ids)+1)
	for _, id := range ids {
		ops = append(ops, store.OpDelete(JobKey(id)))
	}
	ops = append(ops, store.OpPut(SeqKey, []byte(strconv.Itoa(floor))))
	if _, err := st.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("server: prune jobs: %w", err)
	}
	return nil
}

// EndedAt is when an ended job ended (when it was submitted if the record
// has no end time).
func (r *Record) EndedAt() time.Time {
	if t := r.FinishedAt; t != nil {
		return *t
	}
	return r.SubmittedAt
}

// ReadSeqFloor reads the highest sequence number of a pruned job (0 when
// none was pruned).
func ReadSeqFloor(ctx context.Context, st store.Store) (int, error) {
	kv, ok, err := st.Get(ctx, SeqKey)
	if err != nil || !ok {
		return 0, err
	}
	var n int
	if err := json.Unmarshal(kv.Value, &n); err != nil || n < 0 {
		return 0, fmt.Errorf("server: load %s: want a job number, got %q", SeqKey, kv.Value)
	}
	return n, nil
}
