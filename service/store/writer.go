package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// request is one Put, Delete or Txn waiting for the writer.
type request struct {
	ctx  context.Context
	ops  []Op
	done chan result // buffered: the writer never blocks on it
}

// result answers a request.
type result struct {
	rev int64
	err error
}

// submit queues ops for the writer and waits for the commit.
func (b *Bolt) submit(ctx context.Context, ops []Op) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	req := &request{ctx: ctx, ops: ops, done: make(chan result, 1)}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return 0, ErrClosed
	}
	select {
	case b.reqs <- req:
		b.mu.RUnlock()
	case <-ctx.Done():
		b.mu.RUnlock()
		return 0, ctx.Err()
	}
	select {
	case res := <-req.done:
		return res.rev, res.err
	case <-ctx.Done():
		return 0, fmt.Errorf("write may or may not be applied: %w", ctx.Err())
	}
}

// run is the writer goroutine: it gathers a batch, commits it, answers it,
// and exits once Close has closed reqs and every queued request is done.
func (b *Bolt) run() {
	defer close(b.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	batch := make([]*request, 0, b.opts.MaxBatchSize)
	prev := 0 // requests in the previous batch
	for req := range b.reqs {
		var open bool
		batch, open = b.gather(append(batch[:0], req), prev, timer)
		prev = len(batch)
		b.commit(batch)
		clear(batch)
		if !open {
			return
		}
	}
}

// gather completes a batch that holds its first request. It takes every
// request already queued (they arrived during the previous commit); then,
// while the batch has fewer requests than the previous one had (callers
// that were just answered are likely to come back), it waits for more, for
// at most MaxBatchDelay. A batch stops growing at MaxBatchSize operations.
// gather reports false once reqs is closed and drained.
func (b *Bolt) gather(batch []*request, prev int, timer *time.Timer) ([]*request, bool) {
	batch, n, open := b.drain(batch, len(batch[0].ops))
	if !open || n >= b.opts.MaxBatchSize || len(batch) >= prev || b.opts.MaxBatchDelay < 0 {
		return batch, open
	}
	timer.Reset(b.opts.MaxBatchDelay)
	defer timer.Stop()
	for n < b.opts.MaxBatchSize && len(batch) < prev {
		select {
		case req, ok := <-b.reqs:
			if !ok {
				return batch, false
			}
			batch = append(batch, req)
			n += len(req.ops)
		case <-timer.C:
			return batch, true
		}
	}
	return batch, true
}

// drain appends the requests already queued, up to MaxBatchSize operations
// in all (n so far), and reports false if reqs is closed and empty.
func (b *Bolt) drain(batch []*request, n int) ([]*request, int, bool) {
	for n < b.opts.MaxBatchSize {
		select {
		case req, ok := <-b.reqs:
			if !ok {
				return batch, n, false
			}
			batch = append(batch, req)
			n += len(req.ops)
		default:
			return batch, n, true
		}
	}
	return batch, n, true
}

// commit applies a batch in one bbolt transaction and answers every
// request. If the transaction fails as a whole (a write error, a failed
// fsync), each request is retried in a transaction of its own so that one
// bad request cannot fail the others.
func (b *Bolt) commit(batch []*request) {
	live := make([]*request, 0, len(batch))
	for _, req := range batch {
		if err := req.ctx.Err(); err != nil {
			req.done <- result{err: fmt.Errorf("not applied: %w", err)}
			continue
		}
		live = append(live, req)
	}
	if len(live) == 0 {
		return
	}
	results, events, rev, err := b.apply(live)
	if err != nil && len(live) > 1 {
		b.log.Warn("batch commit failed; retrying its requests one by one", "requests", len(live), "err", err)
		for _, req := range live {
			b.commit([]*request{req})
		}
		return
	}
	if err != nil {
		b.log.Error("commit failed", "err", err)
		live[0].done <- result{rev: b.rev, err: fmt.Errorf("commit: %w", err)}
		return
	}
	if rev != b.rev {
		b.rev = rev
		b.commits.Add(1)
		b.hub.publish(rev, events)
	}
	b.requests.Add(int64(len(live)))
	for i, req := range live {
		req.done <- results[i]
	}
}

// apply runs reqs in one write transaction, giving each request that
// changes something the next revision. A request whose compare fails is
// answered with its error and writes nothing. If nothing at all changes, the
// transaction is rolled back (no fsync).
func (b *Bolt) apply(reqs []*request) ([]result, []Event, int64, error) {
	results := make([]result, len(reqs))
	var events []Event
	rev := b.rev
	errNoChange := errors.New("no change")
	err := b.db.Update(func(tx *bolt.Tx) error {
		t := boltTable{tx.Bucket([]byte(bucketKV))}
		for i, req := range reqs {
			evs, err := applyTxn(t, req.ops, rev+1)
			if errors.Is(err, ErrCompareFailed) {
				results[i] = result{rev: rev, err: err}
				continue
			}
			if err != nil {
				return err
			}
			if len(evs) > 0 {
				rev++
				events = append(events, evs...)
			}
			results[i] = result{rev: rev}
		}
		if rev == b.rev {
			return errNoChange
		}
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(metaRev), encodeRev(rev))
	})
	if errors.Is(err, errNoChange) {
		err = nil
	}
	return results, events, rev, err
}

// boltTable adapts the kv bucket of a write transaction to the write path.
type boltTable struct{ b *bolt.Bucket }

func (t boltTable) get(key string) (record, bool, error) {
	v := t.b.Get([]byte(key))
	if v == nil {
		return record{}, false, nil
	}
	r, err := decodeRecord(v)
	return r, err == nil, err
}

func (t boltTable) put(key string, r record) error {
	return t.b.Put([]byte(key), encodeRecord(r))
}

func (t boltTable) del(key string) error {
	return t.b.Delete([]byte(key))
}
