package edl

import (
	"context"
	"fmt"

	"github.com/gpusched/gpusched/service/store"
)

// dropBatch caps the deletes of one transaction on a store without a
// limit of its own (bbolt).
const dropBatch = 1000

// Drop deletes the EDL state of jobs that no longer exist (pruned by the
// job retention): their records in the store and what the service keeps
// of them in memory. The jobs have ended, so nothing uses their state.
func (s *Service) Drop(ctx context.Context, jobs []string) error {
	var keys []string
	for _, job := range jobs {
		s.mu.Lock()
		delete(s.states, job)
		delete(s.progressAt, job)
		s.mu.Unlock()
		kvs, _, err := s.st.List(ctx, prefix(job))
		if err != nil {
			return fmt.Errorf("drop the EDL state of %s: %w", job, err)
		}
		for _, kv := range kvs {
			keys = append(keys, kv.Key)
		}
	}
	if _, err := store.DeleteKeys(ctx, s.st, keys, dropBatch); err != nil {
		return fmt.Errorf("drop the EDL state: %w", err)
	}
	return nil
}
