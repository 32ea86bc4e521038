package scheduler

import (
	"context"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/store"
)

// Reading without leading (ledger.ReadJobs, ledger.ReadNodes): a server
// that does not lead answers reads from the records the leader wrote.

// Store returns the store the scheduler writes (behind the leader's fence
// when it is one of several servers).
func (s *Scheduler) Store() store.Store { return s.store }

// ReadJob returns job id as st holds it, with its events; ErrNotFound.
func ReadJob(ctx context.Context, st store.Store, id string) (api.Job, error) {
	r, ok, err := ledger.ReadRecord(ctx, st, id)
	if err != nil {
		return api.Job{}, err
	}
	if !ok {
		return api.Job{}, noJob(id)
	}
	return ledger.Normal(r.Job), nil
}
