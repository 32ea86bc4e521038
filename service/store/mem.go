package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MemOptions configures a Mem store. The zero value gives the defaults.
type MemOptions struct {
	// WatchBuffer is how many events a watcher may fall behind before it is
	// dropped; <= 0 means DefaultWatchBuffer.
	WatchBuffer int
	// WatchHistory is how many recent events are kept for watches that
	// start in the past; 0 means DefaultWatchHistory, < 0 none.
	WatchHistory int
}

// Mem is an in-memory Store with the same semantics as Bolt (revisions,
// transactions, watch history and limits), minus durability. It is meant
// for unit tests of code that uses a Store.
type Mem struct {
	mu     sync.Mutex
	data   map[string]record
	rev    int64
	hub    *hub
	closed bool
}

// NewMem returns an empty in-memory store at revision 0.
func NewMem(opts MemOptions) *Mem {
	return &Mem{
		data: make(map[string]record),
		hub:  newHub(0, opts.WatchHistory, opts.WatchBuffer),
	}
}

// memTable adapts Mem's map to the write path.
type memTable map[string]record

func (t memTable) get(key string) (record, bool, error) {
	r, ok := t[key]
	return r, ok, nil
}

func (t memTable) put(key string, r record) error {
	t[key] = r
	return nil
}

func (t memTable) del(key string) error {
	delete(t, key)
	return nil
}

// Put writes key=value and returns the new revision.
func (m *Mem) Put(ctx context.Context, key string, value []byte) (int64, error) {
	rev, err := m.write(ctx, OpPut(key, value))
	return rev, wrapIf(err, "put %q", key)
}

// Delete removes key; a missing key changes nothing.
func (m *Mem) Delete(ctx context.Context, key string) (int64, error) {
	rev, err := m.write(ctx, OpDelete(key))
	return rev, wrapIf(err, "delete %q", key)
}

// Txn applies ops atomically; see Store.Txn.
func (m *Mem) Txn(ctx context.Context, ops ...Op) (int64, error) {
	rev, err := m.write(ctx, ops...)
	return rev, wrapIf(err, "txn")
}

// write validates and applies ops under one new revision, if they change
// anything.
func (m *Mem) write(ctx context.Context, ops ...Op) (int64, error) {
	ops, err := prepareOps(ops)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, ErrClosed
	}
	events, err := applyTxn(memTable(m.data), ops, m.rev+1)
	if err != nil {
		return m.rev, err
	}
	if len(events) > 0 {
		m.rev++
		m.hub.publish(m.rev, events)
	}
	return m.rev, nil
}

// Get returns key's value (a copy) and revisions.
func (m *Mem) Get(ctx context.Context, key string) (KV, bool, error) {
	if err := checkKey(key); err != nil {
		return KV{}, false, fmt.Errorf("get: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return KV{}, false, fmt.Errorf("get %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return KV{}, false, fmt.Errorf("get %q: %w", key, ErrClosed)
	}
	r, ok := m.data[key]
	if !ok {
		return KV{}, false, nil
	}
	return r.kv(key), true, nil
}

// List returns the keys under prefix, sorted, and the current revision.
func (m *Mem) List(ctx context.Context, prefix string) ([]KV, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("list %q: %w", prefix, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, 0, fmt.Errorf("list %q: %w", prefix, ErrClosed)
	}
	var kvs []KV
	for k, r := range m.data {
		if strings.HasPrefix(k, prefix) {
			kvs = append(kvs, r.kv(k))
		}
	}
	slices.SortFunc(kvs, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	return kvs, m.rev, nil
}

// Watch streams changes under prefix after rev; see Store.Watch.
func (m *Mem) Watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error) {
	return m.hub.watch(ctx, prefix, rev)
}

// Close closes every watch channel; later calls fail with ErrClosed.
// Closing twice is harmless.
func (m *Mem) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.hub.close()
	return nil
}

// kv returns the record as a KV with a copy of the value (never nil).
func (r record) kv(key string) KV {
	return KV{Key: key, Value: append([]byte{}, r.value...), CreateRev: r.createRev, ModRev: r.modRev}
}
