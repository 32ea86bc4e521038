package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrFenced means a write of a Fenced store was refused because its fence
// key changed: the process that wrote through it is no longer the leader.
// Nothing was written.
var ErrFenced = errors.New("store: fenced: no longer the leader")

// Fenced is a Store whose every write is guarded by a fence: a key (the
// leader's election key) that must still have the mod revision it had when
// the fence was made. Put, Delete and Txn become one transaction with
// IfModRev(key, rev) added, so a deposed leader — whose election key was
// deleted when its lease expired, or replaced — cannot change anything,
// however late its writes arrive. Reads and watches pass through. Close
// does nothing: the underlying store belongs to the caller.
type Fenced struct {
	s   Store
	key string
	rev int64
}

// Fence returns s with every write guarded by IfModRev(key, rev).
func Fence(s Store, key string, rev int64) *Fenced { return &Fenced{s: s, key: key, rev: rev} }

// Key returns the fence key and its revision.
func (f *Fenced) Key() (string, int64) { return f.key, f.rev }

// Put writes key=value if the fence holds.
func (f *Fenced) Put(ctx context.Context, key string, value []byte) (int64, error) {
	rev, err := f.txn(ctx, OpPut(key, value))
	return rev, wrapIf(err, "put %q", key)
}

// Delete removes key if the fence holds.
func (f *Fenced) Delete(ctx context.Context, key string) (int64, error) {
	rev, err := f.txn(ctx, OpDelete(key))
	return rev, wrapIf(err, "delete %q", key)
}

// Txn applies ops if the fence and ops' compares hold.
func (f *Fenced) Txn(ctx context.Context, ops ...Op) (int64, error) {
	if len(ops) == 0 {
		return 0, fmt.Errorf("txn: %w: txn without operations", ErrInvalid)
	}
	rev, err := f.txn(ctx, ops...)
	return rev, wrapIf(err, "txn")
}

// txn runs ops behind the fence; a failed compare is ErrFenced when the
// fence key is the one that changed.
func (f *Fenced) txn(ctx context.Context, ops ...Op) (int64, error) {
	all := make([]Op, 0, len(ops)+1)
	all = append(append(all, IfModRev(f.key, f.rev)), ops...)
	rev, err := f.s.Txn(ctx, all...)
	if err == nil || !errors.Is(err, ErrCompareFailed) {
		return rev, unwrapTxn(err)
	}
	kv, ok, gerr := f.s.Get(context.WithoutCancel(ctx), f.key)
	if gerr == nil && (!ok || kv.ModRev != f.rev) {
		return rev, fmt.Errorf("%w (fence %q at revision %d is gone)", ErrFenced, f.key, f.rev)
	}
	return rev, unwrapTxn(err)
}

// unwrapTxn drops the "txn: " context the inner store added, since the
// caller adds its own.
func unwrapTxn(err error) error {
	if err == nil {
		return nil
	}
	if u := errors.Unwrap(err); u != nil && err.Error() == "txn: "+u.Error() {
		return u
	}
	return err
}

// MaxTxnOps returns the underlying store's limit less the fence's compare
// (0: none).
func (f *Fenced) MaxTxnOps() int {
	if n := TxnLimit(f.s); n > 0 {
		return n - 1
	}
	return 0
}

// CountOps returns how many compares and how many writes ops hold.
func CountOps(ops []Op) (compares, writes int) {
	for _, op := range ops {
		if op.typ == opCompare {
			compares++
		} else {
			writes++
		}
	}
	return compares, writes
}

// TxnLimit returns the most compares, and the most puts and deletes, that
// one Txn of s may hold (etcd's --max-txn-ops), or 0 when s has no limit
// (Mem, Bolt). Code that batches writes sizes its batches by it.
func TxnLimit(s Store) int {
	if l, ok := s.(interface{ MaxTxnOps() int }); ok {
		return l.MaxTxnOps()
	}
	return 0
}

// Get reads through.
func (f *Fenced) Get(ctx context.Context, key string) (KV, bool, error) { return f.s.Get(ctx, key) }

// List reads through.
func (f *Fenced) List(ctx context.Context, prefix string) ([]KV, int64, error) {
	return f.s.List(ctx, prefix)
}

// Watch reads through.
func (f *Fenced) Watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error) {
	return f.s.Watch(ctx, prefix, rev)
}

// Close does nothing; the underlying store stays open.
func (f *Fenced) Close() error { return nil }
