package edl

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/service/store"
)

// Limits of the batcher.
const (
	// maxBatch bounds the requests written in one transaction.
	maxBatch = 256
	// maxInFlight bounds the transactions under way at once. One: on a
	// 3-member etcd, 4 under way gave smaller transactions and fewer task
	// leases per second (2,651–3,123 against 3,327–3,806 in one run of
	// BenchmarkTaskLeases): etcd is bound by its transactions, not by
	// their latency. The rules below keep any bound correct.
	maxInFlight = 1
)

// errStale answers a change that was computed on a state a failed write
// had touched: it is dropped, and the state loaded again.
var errStale = errors.New("an earlier change of the EDL state could not be written; nothing of this one was written: retry")

// batcher writes changes in shared store transactions, up to maxInFlight
// under way at once (on etcd a transaction costs a round of consensus,
// however many changes it carries). Changes are queued in the order they were made in
// memory (under Service.mu) and started in that order; the rules keep the
// store equal to what applying them in order gives:
//
//   - a transaction starts only with changes whose keys no transaction
//     under way writes (writes of one key commit in order);
//   - a change that writes anything but task records (the queue record of
//     a pass transition, a master or pserver record) starts only when no
//     transaction is under way: it may depend on every earlier change;
//   - when a transaction fails, the service forgets the state of every job
//     and bumps the epoch (onFail); queued changes made before that are
//     answered errStale instead of written (they may build on the failed
//     change).
//
// Task records are self-contained (each is one task's whole state), so
// transactions of disjoint task records may commit in any order. Within a
// transaction the last put of each key wins, which is what applying its
// changes in order gives.
type batcher struct {
	mu       sync.Mutex
	pending  []*batchReq
	inFlight int
	keys     map[string]int // keys written by the transactions under way
	epoch    uint64         // bumped by every failure (under Service.mu too)
	st       store.Store
	onFail   func(jobs []string)
}

// batchReq is one change waiting for its transaction.
type batchReq struct {
	job     string
	ops     []store.Op
	keys    []string
	barrier bool   // writes more than task records
	epoch   uint64 // the batcher's epoch when the change was made
	done    chan error
}

// enqueue queues a change of job; call it under Service.mu, so that the
// queue's order is the order of the changes, and wait outside it.
func (b *batcher) enqueue(job string, ops []store.Op, keys []string) *batchReq {
	r := &batchReq{job: job, ops: ops, keys: keys, done: make(chan error, 1)}
	for _, k := range keys {
		if !strings.Contains(k, "/tasks/") {
			r.barrier = true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.keys == nil {
		b.keys = map[string]int{}
	}
	r.epoch = b.epoch
	b.pending = append(b.pending, r)
	b.dispatch()
	return r
}

// dispatch starts transactions while the rules allow; b.mu is held.
func (b *batcher) dispatch() {
	for b.inFlight < maxInFlight && len(b.pending) > 0 {
		batch := b.take()
		if len(batch) == 0 {
			return
		}
		b.inFlight++
		for _, r := range batch {
			for _, k := range r.keys {
				b.keys[k]++
			}
		}
		go b.write(batch)
	}
}

// take removes from the front of the queue the changes one transaction
// may carry now (none when the first one must wait); b.mu is held.
func (b *batcher) take() []*batchReq {
	limit := store.TxnLimit(b.st)
	n, puts := 0, 0
	for _, r := range b.pending {
		if r.epoch != b.epoch { // made before a failure: answered below
			n++
			continue
		}
		if n == maxBatch || limit > 0 && puts+len(r.ops) > limit && puts > 0 ||
			r.barrier && (b.inFlight > 0 || n > 0) || b.conflicts(r) {
			break
		}
		n++
		puts += len(r.ops)
		if r.barrier {
			break // alone, until it is written
		}
	}
	batch := make([]*batchReq, 0, n)
	for _, r := range b.pending[:n] {
		if r.epoch != b.epoch {
			r.done <- errStale
			continue
		}
		batch = append(batch, r)
	}
	b.pending = append([]*batchReq(nil), b.pending[n:]...)
	return batch
}

// conflicts reports whether r writes a key a transaction under way writes.
func (b *batcher) conflicts(r *batchReq) bool {
	for _, k := range r.keys {
		if b.keys[k] > 0 {
			return true
		}
	}
	return false
}

// write commits a batch in one transaction, the last put of each key, and
// answers it.
func (b *batcher) write(batch []*batchReq) {
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
	_, err := b.st.Txn(context.Background(), all...)
	if err != nil {
		jobs := make([]string, 0, len(batch))
		for _, r := range batch {
			jobs = append(jobs, r.job)
		}
		b.onFail(jobs) // forgets the jobs' states and bumps the epoch
	}
	b.mu.Lock()
	b.inFlight--
	for _, r := range batch {
		for _, k := range r.keys {
			if b.keys[k]--; b.keys[k] == 0 {
				delete(b.keys, k)
			}
		}
		r.done <- err
	}
	b.dispatch()
	b.mu.Unlock()
}

// bump starts a new epoch after a failure; the caller holds Service.mu.
func (b *batcher) bump() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.epoch++
}
