package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxSubmitBatch bounds the submissions written in one transaction: 256
// job records of a few KiB stay below etcd's default request limit of
// 1.5 MiB; a batch over it fails and its submissions are retried alone.
const maxSubmitBatch = 256

// GroupCommit writes concurrent submissions in shared transactions: the
// first submission that finds no write under way becomes the committer and
// writes every submission queued by then in one store transaction; those
// that arrive meanwhile wait, and the first of them commits the next batch.
// On etcd a transaction costs a round of the consensus whatever its size,
// so batching is what lets many clients' submissions be durable at once
// (the bbolt store batches its own writes as well).
type GroupCommit struct {
	// Stopped answers the submissions still waiting when stop is closed
	// (nothing of them was written); it should wrap ErrClosed.
	Stopped error

	mu      sync.Mutex
	busy    bool
	pending []*commitReq
}

// commitReq is one submission waiting for its transaction.
type commitReq struct {
	ops  []Op
	done chan error    // buffered: the answer
	lead chan struct{} // closed when this request is to commit the next batch
}

// Commit writes ops (a submission's compare and put) in a shared
// transaction and returns when it is durable, or g.Stopped once stop is
// closed.
func (g *GroupCommit) Commit(st Store, stop <-chan struct{}, ops ...Op) error {
	req := &commitReq{ops: ops, done: make(chan error, 1), lead: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, req)
	if g.busy {
		g.mu.Unlock()
		select {
		case err := <-req.done:
			return err
		case <-req.lead:
		}
		g.mu.Lock()
	}
	g.busy = true
	batch := g.pending[:batchLen(g.pending, TxnLimit(st))]
	select {
	case <-stop: // shut down, or the term as leader ended: write nothing more
		batch = g.pending
	default:
	}
	g.pending = append([]*commitReq(nil), g.pending[len(batch):]...)
	g.mu.Unlock()

	select {
	case <-stop:
		for _, r := range batch {
			r.done <- g.Stopped
		}
	default:
		g.write(st, stop, batch)
	}

	g.mu.Lock()
	g.busy = false
	if len(g.pending) > 0 {
		g.busy = true
		close(g.pending[0].lead) // hand the next batch over
	}
	g.mu.Unlock()
	return <-req.done
}

// batchLen returns how many of the pending requests (at least one) fit
// one transaction: maxSubmitBatch, and at most limit compares and limit
// writes (0: no limit).
func batchLen(pending []*commitReq, limit int) int {
	cmps, writes := 0, 0
	for i, r := range pending {
		c, w := CountOps(r.ops)
		if i > 0 && (i == maxSubmitBatch || limit > 0 && (cmps+c > limit || writes+w > limit)) {
			return i
		}
		cmps, writes = cmps+c, writes+w
	}
	return len(pending)
}

// write commits a batch in one transaction; if it fails for a reason that
// may be one request's, each request is tried alone so that one bad
// request cannot fail the others.
func (g *GroupCommit) write(st Store, stop <-chan struct{}, batch []*commitReq) {
	var ops []Op
	for _, r := range batch {
		ops = append(ops, r.ops...)
	}
	err := txnRetry(st, stop, ops)
	if err == nil || len(batch) == 1 || !perRequest(err) {
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	for _, r := range batch {
		err := txnRetry(st, stop, r.ops)
		if err != nil {
			err = fmt.Errorf("(alone, after its batch of %d failed) %w", len(batch), err)
		}
		r.done <- err
	}
}

// perRequest reports whether a failed batch may owe its failure to one of
// its requests (then each is tried alone); an unavailable, fenced or
// closed store fails them all alike.
func perRequest(err error) bool {
	return !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrFenced) && !errors.Is(err, ErrClosed)
}

// retryFor bounds how long a submission's write is retried while the store
// is unavailable (etcd electing a new leader among its members).
const retryFor = 10 * time.Second

// txnRetry writes a submission batch (IfAbsent + put per job). When the
// store is unavailable — an etcd member died and the write timed out,
// applied or not — it tries again for up to retryFor, unless the
// scheduler stops (its term ended); if a retry finds a
// key present, the earlier attempt was applied when every put's key holds
// exactly its value (even if this server has lost its leadership since:
// the next leader loads the job), and the write has succeeded.
func txnRetry(st Store, stop <-chan struct{}, ops []Op) error {
	deadline := time.Now().Add(retryFor)
	_, err := st.Txn(context.Background(), ops...)
	for retried := false; ; retried = true {
		switch {
		case err == nil:
			return nil
		case retried && (errors.Is(err, ErrCompareFailed) || errors.Is(err, ErrFenced)) && applied(st, ops):
			return nil
		case !errors.Is(err, ErrUnavailable) || time.Now().After(deadline):
			return err
		}
		select {
		case <-stop:
			return err
		case <-time.After(200 * time.Millisecond):
		}
		_, err = st.Txn(context.Background(), ops...)
	}
}

// applied reports whether every put of ops is in st with its value.
func applied(st Store, ops []Op) bool {
	for _, op := range ops {
		key, value, ok := op.Put()
		if !ok {
			continue
		}
		kv, found, err := st.Get(context.Background(), key)
		if err != nil || !found || !bytes.Equal(kv.Value, value) {
			return false
		}
	}
	return true
}
