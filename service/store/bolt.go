package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Defaults for BoltOptions.
const (
	// DefaultMaxBatchSize is the default number of operations per commit.
	DefaultMaxBatchSize = 1024
	// DefaultMaxBatchDelay is the default longest time the writer lingers
	// for more writes before a commit.
	DefaultMaxBatchDelay = time.Millisecond
	// DefaultLockTimeout is how long OpenBolt waits for the file lock.
	DefaultLockTimeout = time.Second
)

// Bucket and key names of the on-disk layout (docs/STORE.md).
const (
	bucketKV     = "kv"
	bucketMeta   = "meta"
	metaRev      = "rev"
	metaSchema   = "schema"
	schemaLatest = "1"
)

// BoltOptions configures a Bolt store. The zero value gives the defaults.
type BoltOptions struct {
	// MaxBatchSize caps the operations (puts, deletes, compares) applied in
	// one bbolt transaction; <= 0 means DefaultMaxBatchSize.
	MaxBatchSize int
	// MaxBatchDelay bounds how long the writer lingers for more writes
	// before a commit. A batch always takes every write already queued; it
	// lingers only while it has fewer writes than the previous batch had
	// (their callers, just answered, are likely to write again), so a lone
	// writer never waits. 0 means DefaultMaxBatchDelay, < 0 never lingers.
	MaxBatchDelay time.Duration
	// LockTimeout is how long OpenBolt waits for another process to release
	// the file lock before it fails with ErrLocked; <= 0 means
	// DefaultLockTimeout.
	LockTimeout time.Duration
	// WatchBuffer is how many events a watcher may fall behind before it is
	// dropped; <= 0 means DefaultWatchBuffer.
	WatchBuffer int
	// WatchHistory is how many recent events are kept in memory for watches
	// that start in the past; 0 means DefaultWatchHistory, < 0 none.
	WatchHistory int
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
}

// withDefaults fills in the zero fields.
func (o BoltOptions) withDefaults() BoltOptions {
	if o.MaxBatchSize <= 0 {
		o.MaxBatchSize = DefaultMaxBatchSize
	}
	if o.MaxBatchDelay == 0 {
		o.MaxBatchDelay = DefaultMaxBatchDelay
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Bolt is a durable Store in one bbolt file. Writes are group-committed by
// a single writer goroutine and acknowledged only after bbolt's commit has
// fsynced them. Reads use bbolt read transactions and do not wait for the
// writer.
type Bolt struct {
	db   *bolt.DB
	path string
	opts BoltOptions
	log  *slog.Logger
	hub  *hub

	mu     sync.RWMutex // guards closed and sends on reqs
	closed bool
	reqs   chan *request
	done   chan struct{} // closed when the writer has exited

	rev      int64 // current revision; owned by the writer goroutine
	commits  atomic.Int64
	requests atomic.Int64
}

// BoltStats counts the writer's work since OpenBolt.
type BoltStats struct {
	// Commits is the number of bbolt write transactions (one fsync each).
	Commits int64
	// Requests is the number of Put, Delete and Txn calls they carried.
	Requests int64
}

// OpenBolt opens (creating if needed) the store in the bbolt file at path,
// typically DIR/store.db for `gpusched server --data DIR`; missing parent
// directories are created. If another process holds the file, OpenBolt
// fails after opts.LockTimeout with an error wrapping ErrLocked.
func OpenBolt(path string, opts BoltOptions) (*Bolt, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      opts.LockTimeout,
		FreelistType: bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open store %s: %w (lock not released within %v)", path, ErrLocked, opts.LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	rev, err := initLayout(db)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	b := &Bolt{
		db:   db,
		path: path,
		opts: opts,
		log:  opts.Logger.With("store", path),
		hub:  newHub(rev, opts.WatchHistory, opts.WatchBuffer),
		reqs: make(chan *request, opts.MaxBatchSize),
		done: make(chan struct{}),
		rev:  rev,
	}
	go b.run()
	b.log.Info("store opened", "revision", rev)
	return b, nil
}

// initLayout creates the buckets of a new file, checks the schema of an
// existing one and returns the current revision.
func initLayout(db *bolt.DB) (int64, error) {
	var rev int64
	err := db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists([]byte(bucketKV)); err != nil {
			return fmt.Errorf("create bucket %s: %w", bucketKV, err)
		}
		meta, err := tx.CreateBucketIfNotExists([]byte(bucketMeta))
		if err != nil {
			return fmt.Errorf("create bucket %s: %w", bucketMeta, err)
		}
		switch schema := meta.Get([]byte(metaSchema)); {
		case schema == nil:
			if err := meta.Put([]byte(metaSchema), []byte(schemaLatest)); err != nil {
				return fmt.Errorf("write schema: %w", err)
			}
		case string(schema) != schemaLatest:
			return fmt.Errorf("unsupported schema %q (this build reads %q)", schema, schemaLatest)
		}
		if v := meta.Get([]byte(metaRev)); v != nil {
			rev, err = decodeRev(v)
		}
		return err
	})
	return rev, err
}

// Stats returns the writer's counters.
func (b *Bolt) Stats() BoltStats {
	return BoltStats{Commits: b.commits.Load(), Requests: b.requests.Load()}
}

// Put writes key=value durably and returns the new revision.
func (b *Bolt) Put(ctx context.Context, key string, value []byte) (int64, error) {
	rev, err := b.write(ctx, OpPut(key, value))
	return rev, wrapIf(err, "put %q", key)
}

// Delete removes key durably; a missing key changes nothing.
func (b *Bolt) Delete(ctx context.Context, key string) (int64, error) {
	rev, err := b.write(ctx, OpDelete(key))
	return rev, wrapIf(err, "delete %q", key)
}

// Txn applies ops atomically and durably; see Store.Txn. If ctx ends while
// the write is queued or being committed, Txn returns ctx's error and the
// write may or may not have been applied (as with etcd).
func (b *Bolt) Txn(ctx context.Context, ops ...Op) (int64, error) {
	rev, err := b.write(ctx, ops...)
	return rev, wrapIf(err, "txn")
}

// write validates ops and hands them to the writer goroutine.
func (b *Bolt) write(ctx context.Context, ops ...Op) (int64, error) {
	ops, err := prepareOps(ops)
	if err != nil {
		return 0, err
	}
	return b.submit(ctx, ops)
}

// Get returns key's value (a copy) and revisions.
func (b *Bolt) Get(ctx context.Context, key string) (KV, bool, error) {
	if err := checkKey(key); err != nil {
		return KV{}, false, fmt.Errorf("get: %w", err)
	}
	var (
		kv KV
		ok bool
	)
	err := b.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket([]byte(bucketKV)).Get([]byte(key))
		if v == nil {
			return nil
		}
		rec, err := decodeRecord(v)
		if err != nil {
			return err
		}
		kv, ok = rec.kv(key), true
		return nil
	})
	if err != nil {
		return KV{}, false, fmt.Errorf("get %q: %w", key, err)
	}
	return kv, ok, nil
}

// List returns the keys under prefix, sorted, and the revision of the
// snapshot they were read from.
func (b *Bolt) List(ctx context.Context, prefix string) ([]KV, int64, error) {
	var (
		kvs []KV
		rev int64
	)
	err := b.view(ctx, func(tx *bolt.Tx) error {
		var err error
		if v := tx.Bucket([]byte(bucketMeta)).Get([]byte(metaRev)); v != nil {
			if rev, err = decodeRev(v); err != nil {
				return err
			}
		}
		c := tx.Bucket([]byte(bucketKV)).Cursor()
		for k, v := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
			rec, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
			kvs = append(kvs, rec.kv(string(k)))
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list %q: %w", prefix, err)
	}
	return kvs, rev, nil
}

// view runs fn in a bbolt read transaction, mapping a closed database to
// ErrClosed.
func (b *Bolt) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	err := b.db.View(fn)
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// Watch streams changes under prefix after rev; see Store.Watch. History
// lives in memory only: after OpenBolt, a watch can start at the current
// revision or later, never earlier.
func (b *Bolt) Watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error) {
	return b.hub.watch(ctx, prefix, rev)
}

// Close commits the writes already submitted, answers their callers,
// closes every watch channel and closes the file. Closing twice is
// harmless.
func (b *Bolt) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.reqs)
	b.mu.Unlock()
	<-b.done
	b.hub.close()
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", b.path, err)
	}
	b.log.Info("store closed", "revision", b.rev)
	return nil
}
