package edl

import (
	"context"
	"sync"

	"github.com/gpusched/gpusched/service/store"
)

// maxBatch bounds the requests written in one transaction.
const maxBatch = 256

// batcher writes concurrent changes in shared store transactions: requests
// are queued in the order of their in-memory changes (under Service.mu);
// the first waiter that finds no write under way commits every request
// queued by then, the others wait, and the first of those commits the next
// batch. The service writes only puts, so a batch keeps the last put of
// each key, which is what applying its requests in order gives.
type batcher struct {
	mu      sync.Mutex
	busy    bool
	pending []*batchReq
}

// batchReq is one change waiting for its transaction.
type batchReq struct {
	ops  []store.Op
	keys []string
	done chan error    // buffered: the answer
	lead chan struct{} // closed when this request is to commit the next batch
}

// enqueue queues a change; call it under Service.mu, so that the queue's
// order is the order of the changes, and wait outside it.
func (b *batcher) enqueue(ops []store.Op, keys []string) *batchReq {
	r := &batchReq{ops: ops, keys: keys, done: make(chan error, 1), lead: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, r)
	return r
}

// wait returns when r's change is durable (or failed), committing batches
// itself when its turn comes.
func (b *batcher) wait(st store.Store, r *batchReq) error {
	b.mu.Lock()
	if b.busy {
		b.mu.Unlock()
		select {
		case err := <-r.done:
			return err
		case <-r.lead:
		}
		b.mu.Lock()
	}
	b.busy = true
	batch := b.pending[:fit(b.pending, store.TxnLimit(st))]
	b.pending = append([]*batchReq(nil), b.pending[len(batch):]...)
	b.mu.Unlock()
	if len(batch) > 0 {
		write(st, batch)
	}
	b.mu.Lock()
	b.busy = false
	if len(b.pending) > 0 {
		b.busy = true
		close(b.pending[0].lead)
	}
	b.mu.Unlock()
	return <-r.done
}

// fit returns how many pending requests (at least one) one transaction
// takes: maxBatch, and at most limit puts (0: no limit).
func fit(pending []*batchReq, limit int) int {
	n := 0
	for i, r := range pending {
		if i > 0 && (i == maxBatch || limit > 0 && n+len(r.ops) > limit) {
			return i
		}
		n += len(r.ops)
	}
	return len(pending)
}

// write commits a batch in one transaction, the last put of each key.
func write(st store.Store, batch []*batchReq) {
	last := map[string]int{}
	var all []store.Op
	for _, r := range batch {
		for i, op := range r.ops {
			k := r.keys[i]
			if j, ok := last[k]; ok {
				all[j] = op
				continue
			}
			last[k] = len(all)
			all = append(all, op)
		}
	}
	_, err := st.Txn(context.Background(), all...)
	for _, r := range batch {
		r.done <- err
	}
}
