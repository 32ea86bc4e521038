package store

import (
	"context"
	"errors"
	"fmt"
)

// Store is a durable, revisioned key-value store. All methods are safe for
// concurrent use. Values passed in are copied; values handed out (KV.Value,
// Event.KV.Value) must not be modified by the receiver, since a watch event
// is shared by all watchers.
type Store interface {
	// Put writes key=value and returns the store's new revision. On a
	// durable store it returns only after the write is on disk.
	Put(ctx context.Context, key string, value []byte) (rev int64, err error)
	// Txn applies ops atomically: if every compare (IfModRev, IfAbsent)
	// holds, all puts and deletes are applied under one new revision;
	// otherwise nothing is written and the error wraps ErrCompareFailed.
	// A Txn that changes nothing (only compares, or deletes of missing keys)
	// does not advance the revision and returns the current one.
	Txn(ctx context.Context, ops ...Op) (rev int64, err error)
	// Get returns the key's value and revisions; ok is false if the key
	// does not exist.
	Get(ctx context.Context, key string) (kv KV, ok bool, err error)
	// List returns every key that starts with prefix, sorted by key, and the
	// store's revision at which that snapshot was taken. The revision is
	// the natural starting point of a Watch that must miss nothing.
	List(ctx context.Context, prefix string) (kvs []KV, rev int64, err error)
	// Delete removes key and returns the new revision. Deleting a missing
	// key is not an error; it changes nothing and returns the current
	// revision.
	Delete(ctx context.Context, key string) (rev int64, err error)
	// Watch streams the changes to keys under prefix with revisions greater
	// than rev, in revision order, until ctx ends or the store is closed;
	// then it closes the channel. rev 0 means "from now". Starting from a
	// revision older than the events the store still holds gives
	// ErrCompacted. A watcher that falls more than the store's watch buffer
	// behind is dropped: its channel is closed while ctx is still live, and
	// the watcher should List and Watch again.
	Watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error)
	// Close waits for pending writes, closes every watch channel and
	// releases the store. Other calls after Close return ErrClosed; a
	// second Close does nothing.
	Close() error
}

// KV is one key with its value and revisions.
type KV struct {
	Key   string
	Value []byte
	// CreateRev is the revision of the write that created the key.
	CreateRev int64
	// ModRev is the revision of the key's last write. For a delete event it
	// is the revision of the delete.
	ModRev int64
}

// EventType says what happened to a key.
type EventType uint8

// The event types.
const (
	// EventPut is a create or an update; KV holds the new value.
	EventPut EventType = iota + 1
	// EventDelete is a deletion; KV holds the key and, in ModRev, the
	// revision of the delete.
	EventDelete
)

// String returns "put" or "delete".
func (t EventType) String() string {
	switch t {
	case EventPut:
		return "put"
	case EventDelete:
		return "delete"
	default:
		return fmt.Sprintf("EventType(%d)", uint8(t))
	}
}

// Event is one committed change, as delivered by Watch.
type Event struct {
	Type EventType
	KV   KV
}

// Limits on keys and values, the same for every implementation (etcd's
// default request limit is 1.5 MiB).
const (
	// MaxKeySize is the longest key, in bytes.
	MaxKeySize = 4096
	// MaxValueSize is the longest value, in bytes.
	MaxValueSize = 1536 * 1024
)

// Errors returned by stores. They are wrapped with context; test with
// errors.Is.
var (
	// ErrCompareFailed means a Txn's compare did not hold; nothing was
	// written.
	ErrCompareFailed = errors.New("store: compare failed")
	// ErrCompacted means Watch was asked to start before the oldest event
	// the store still holds.
	ErrCompacted = errors.New("store: requested revision is compacted")
	// ErrClosed means the store has been closed.
	ErrClosed = errors.New("store: closed")
	// ErrInvalid means a request is malformed (empty or oversized key,
	// oversized value, a key written twice in one Txn, ...).
	ErrInvalid = errors.New("store: invalid request")
	// ErrLocked means another process holds the data file.
	ErrLocked = errors.New("data directory in use by another process")
)

// opType is the kind of an Op.
type opType uint8

const (
	opPut opType = iota + 1
	opDelete
	opCompare
)

// Op is one element of a Txn: a put, a delete or a compare. Build it with
// OpPut, OpDelete, IfModRev or IfAbsent.
type Op struct {
	typ   opType
	key   string
	value []byte
	rev   int64
}

// OpPut is a Txn operation that writes key=value.
func OpPut(key string, value []byte) Op {
	return Op{typ: opPut, key: key, value: value}
}

// OpDelete is a Txn operation that deletes key (a no-op if it is missing).
func OpDelete(key string) Op {
	return Op{typ: opDelete, key: key}
}

// IfModRev is a Txn compare that holds when key's ModRev equals rev; rev 0
// means "key does not exist" (etcd's ModRevision(key) == rev).
func IfModRev(key string, rev int64) Op {
	return Op{typ: opCompare, key: key, rev: rev}
}

// IfAbsent is a Txn compare that holds when key does not exist.
func IfAbsent(key string) Op {
	return IfModRev(key, 0)
}

// Put returns the key and value of a put; ok is false for other ops.
func (o Op) Put() (key string, value []byte, ok bool) {
	return o.key, o.value, o.typ == opPut
}

// String describes the op for errors and logs (values are not printed).
func (o Op) String() string {
	switch o.typ {
	case opPut:
		return fmt.Sprintf("put %q (%d bytes)", o.key, len(o.value))
	case opDelete:
		return fmt.Sprintf("delete %q", o.key)
	case opCompare:
		return fmt.Sprintf("if mod_rev(%q) == %d", o.key, o.rev)
	default:
		return "invalid op"
	}
}

// checkKey validates a key for any request.
func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if len(key) > MaxKeySize {
		return fmt.Errorf("%w: key of %d bytes exceeds %d", ErrInvalid, len(key), MaxKeySize)
	}
	return nil
}

// prepareOps validates ops and returns a copy whose put values are copied,
// so that the caller may reuse its buffers once the call returns.
func prepareOps(ops []Op) ([]Op, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: txn without operations", ErrInvalid)
	}
	out := make([]Op, len(ops))
	var written map[string]bool // duplicate writes; only for a real txn
	if len(ops) > 1 {
		written = make(map[string]bool, len(ops))
	}
	for i, op := range ops {
		op, err := prepareOp(op)
		if err == nil && op.typ != opCompare && written != nil {
			if written[op.key] {
				err = fmt.Errorf("%w: key written twice in one txn", ErrInvalid)
			}
			written[op.key] = true
		}
		if err != nil && len(ops) > 1 {
			return nil, fmt.Errorf("op %d (%v): %w", i, op, err)
		}
		if err != nil {
			return nil, err
		}
		out[i] = op
	}
	return out, nil
}

// prepareOp validates one op and copies a put's value (never nil).
func prepareOp(op Op) (Op, error) {
	if err := checkKey(op.key); err != nil {
		return op, err
	}
	switch op.typ {
	case opPut:
		if len(op.value) > MaxValueSize {
			return op, fmt.Errorf("%w: value of %d bytes exceeds %d", ErrInvalid, len(op.value), MaxValueSize)
		}
		op.value = append([]byte{}, op.value...)
	case opDelete:
	case opCompare:
		if op.rev < 0 {
			return op, fmt.Errorf("%w: negative revision", ErrInvalid)
		}
	default:
		return op, fmt.Errorf("%w: zero Op (use OpPut, OpDelete, IfModRev)", ErrInvalid)
	}
	return op, nil
}

// compareError reports the first compare that failed.
func compareError(op Op, have int64) error {
	return fmt.Errorf("%w: %q has mod revision %d, want %d", ErrCompareFailed, op.key, have, op.rev)
}
