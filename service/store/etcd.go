package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Defaults of EtcdOptions.
const (
	// DefaultEtcdPrefix is the etcd key prefix of a gpusched store.
	DefaultEtcdPrefix = "/gpusched/"
	// DefaultEtcdDialTimeout bounds how long OpenEtcd waits for the
	// cluster before it gives up.
	DefaultEtcdDialTimeout = 5 * time.Second
	// DefaultEtcdMaxTxnOps is etcd's default --max-txn-ops.
	DefaultEtcdMaxTxnOps = 128
)

// Keys under the prefix (docs/STORE.md, "Data layout (etcd)").
const (
	etcdSchemaKey = "schema" // "1": the prefix holds a gpusched store
	etcdDataDir   = "kv/"    // store key k is etcd key PREFIX + "kv/" + k
)

// ErrUnavailable means the store cannot be reached or cannot commit (etcd
// without a quorum, a request timeout); the request may or may not have
// been applied when it was a write.
var ErrUnavailable = errors.New("store unavailable")

// EtcdOptions configures an Etcd store. Endpoints is required.
type EtcdOptions struct {
	// Endpoints are the cluster's client URLs or host:port pairs
	// (ParseEtcdURL turns "etcd://h1:2379,h2:2379" into them).
	Endpoints []string
	// Prefix is the etcd key prefix of the store; it must end with "/".
	// Empty means DefaultEtcdPrefix.
	Prefix string
	// TLS is the client's TLS configuration (nil: plain connections).
	TLS *tls.Config
	// DialTimeout bounds the wait for the cluster in OpenEtcd; <= 0 means
	// DefaultEtcdDialTimeout.
	DialTimeout time.Duration
	// WatchBuffer is how many events a watcher may fall behind before it is
	// dropped; <= 0 means DefaultWatchBuffer.
	WatchBuffer int
	// MaxTxnOps is the etcd cluster's --max-txn-ops: the most compares,
	// and the most puts and deletes, in one transaction; <= 0 means etcd's
	// default, DefaultEtcdMaxTxnOps. A larger Txn fails with ErrInvalid.
	MaxTxnOps int
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
}

// Etcd is a Store on an etcd cluster (go.etcd.io/etcd/client/v3). Every
// write is acknowledged after etcd committed it (a majority of the members
// persisted it). Revisions are etcd's: they advance with every write to the
// cluster, including writes outside the store's prefix, so callers must
// treat them as opaque increasing numbers, as for every Store.
type Etcd struct {
	cli    *clientv3.Client
	prefix string // ends with "/"
	data   string // prefix + etcdDataDir
	opts   EtcdOptions
	log    *slog.Logger

	mu     sync.Mutex
	closed bool
	ctx    context.Context // ended by Close: watches stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // watch goroutines
}

// ParseEtcdURL parses `--store etcd://host1:2379,host2:2379` into the
// endpoints of the cluster (http://host:port each). It rejects anything
// but a non-empty list of host:port pairs.
func ParseEtcdURL(raw string) ([]string, error) {
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		return nil, fmt.Errorf("store URL %q: want etcd://HOST:PORT[,HOST:PORT...]", raw)
	}
	rest = strings.TrimRight(rest, "/")
	if rest == "" {
		return nil, fmt.Errorf("store URL %q: no etcd member named, want etcd://HOST:PORT[,HOST:PORT...]", raw)
	}
	var eps []string
	for _, hp := range strings.Split(rest, ",") {
		hp = strings.TrimSpace(hp)
		host, port, found := strings.Cut(hp, ":")
		if strings.HasPrefix(hp, "[") { // [::1]:2379
			i := strings.LastIndex(hp, "]:")
			host, port, found = hp[:max(i+1, 0)], "", i > 0
			if found {
				port = hp[i+2:]
			}
		}
		if !found || host == "" || port == "" || strings.ContainsAny(hp, "/?#@ ") || !digits(port) {
			return nil, fmt.Errorf("store URL %q: member %q: want HOST:PORT", raw, hp)
		}
		eps = append(eps, "http://"+hp)
	}
	return eps, nil
}

// digits reports whether s is a non-empty string of decimal digits.
func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// checkPrefix validates an etcd key prefix.
func checkPrefix(p string) error {
	switch {
	case p == "" || p == "/":
		return fmt.Errorf("etcd prefix %q: want a non-empty prefix such as %s", p, DefaultEtcdPrefix)
	case !strings.HasSuffix(p, "/"):
		return fmt.Errorf("etcd prefix %q: must end with /", p)
	case strings.ContainsAny(p, " \t\n\x00"):
		return fmt.Errorf("etcd prefix %q: must not hold white space or NUL", p)
	}
	return nil
}

// OpenEtcd connects to the cluster and opens the store under opts.Prefix.
// It waits at most opts.DialTimeout for the cluster to answer; an empty
// prefix is initialised (the schema marker is written), and a prefix that
// holds other keys but no gpusched marker is refused (a wrong
// --etcd-prefix). Errors caused by the options or the cluster's contents
// wrap ErrInvalid; an unreachable cluster wraps ErrUnavailable.
func OpenEtcd(opts EtcdOptions) (*Etcd, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultEtcdPrefix
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultEtcdDialTimeout
	}
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultEtcdMaxTxnOps
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, fmt.Errorf("open etcd store: %w: %w", ErrInvalid, err)
	}
	if len(opts.Endpoints) == 0 {
		return nil, fmt.Errorf("open etcd store: %w: no endpoint", ErrInvalid)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: opts.Endpoints, DialTimeout: opts.DialTimeout, TLS: opts.TLS,
		Logger: zap.NewNop(), DialKeepAliveTime: 5 * time.Second, DialKeepAliveTimeout: 3 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("open etcd store %s: %w", strings.Join(opts.Endpoints, ","), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Etcd{cli: cli, prefix: opts.Prefix, data: opts.Prefix + etcdDataDir, opts: opts,
		log: opts.Logger.With("store", "etcd", "prefix", opts.Prefix), ctx: ctx, cancel: cancel}
	if err := e.initPrefix(); err != nil {
		cancel()
		_ = cli.Close()
		return nil, fmt.Errorf("open etcd store %s (prefix %s): %w", strings.Join(opts.Endpoints, ","), opts.Prefix, err)
	}
	e.log.Info("store opened", "endpoints", strings.Join(opts.Endpoints, ","))
	return e, nil
}

// initPrefix checks (or writes) the schema marker within DialTimeout.
func (e *Etcd) initPrefix() error {
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.DialTimeout)
	defer cancel()
	key := e.prefix + etcdSchemaKey
	resp, err := e.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpGet(e.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: no answer from the etcd cluster within %v (%v)", ErrUnavailable, e.opts.DialTimeout, err)
		}
		return etcdErr(err)
	}
	if !resp.Succeeded {
		got := resp.Responses[0].GetResponseRange().Kvs[0].Value
		if string(got) != schemaLatest {
			return fmt.Errorf("%w: unsupported schema %q under %s (this build reads %q)", ErrInvalid, got, key, schemaLatest)
		}
		return nil
	}
	if n := resp.Responses[0].GetResponseRange().Count; n > 0 {
		return fmt.Errorf("%w: the prefix holds %d keys but no gpusched schema marker (%s): not a gpusched store; wrong --etcd-prefix?",
			ErrInvalid, n, key)
	}
	_, err = e.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, schemaLatest)).Commit()
	return etcdErr(err)
}

// Client returns the etcd client (for etcd's concurrency primitives, such
// as the leader election of several servers).
func (e *Etcd) Client() *clientv3.Client { return e.cli }

// Key returns the etcd key of store key k.
func (e *Etcd) Key(k string) string { return e.data + k }

// StoreKey returns the store key of etcd key k ("" when k is outside the
// store).
func (e *Etcd) StoreKey(k string) string {
	s, ok := strings.CutPrefix(k, e.data)
	if !ok {
		return ""
	}
	return s
}

// MaxTxnOps returns the most compares, and the most writes, one Txn may
// hold (TxnLimit).
func (e *Etcd) MaxTxnOps() int { return e.opts.MaxTxnOps }

// Endpoints returns the cluster's endpoints.
func (e *Etcd) Endpoints() []string { return e.opts.Endpoints }

// begin fails a call on a closed store or an ended context.
func (e *Etcd) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	return nil
}

// Put writes key=value and returns the revision of the write.
func (e *Etcd) Put(ctx context.Context, key string, value []byte) (int64, error) {
	ops, err := prepareOps([]Op{OpPut(key, value)})
	if err != nil {
		return 0, fmt.Errorf("put %q: %w", key, err)
	}
	if err := e.begin(ctx); err != nil {
		return 0, fmt.Errorf("put %q: %w", key, err)
	}
	resp, err := e.cli.Put(ctx, e.Key(key), string(ops[0].value))
	if err != nil {
		return 0, fmt.Errorf("put %q: %w", key, etcdErr(err))
	}
	return resp.Header.Revision, nil
}

// Delete removes key; a missing key changes nothing.
func (e *Etcd) Delete(ctx context.Context, key string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, fmt.Errorf("delete %q: %w", key, err)
	}
	if err := e.begin(ctx); err != nil {
		return 0, fmt.Errorf("delete %q: %w", key, err)
	}
	resp, err := e.cli.Delete(ctx, e.Key(key))
	if err != nil {
		return 0, fmt.Errorf("delete %q: %w", key, etcdErr(err))
	}
	return resp.Header.Revision, nil
}

// Txn applies ops in one etcd transaction: If(ModRevision(k) == r ...)
// .Then(puts, deletes). A failed compare is reported with the key's actual
// mod revision (read in the transaction's Else branch).
func (e *Etcd) Txn(ctx context.Context, ops ...Op) (int64, error) {
	ops, err := prepareOps(ops)
	if err != nil {
		return 0, fmt.Errorf("txn: %w", err)
	}
	if err := e.begin(ctx); err != nil {
		return 0, fmt.Errorf("txn: %w", err)
	}
	var (
		cmps        []clientv3.Cmp
		cmpOps      []Op
		thens, gets []clientv3.Op
	)
	for _, op := range ops {
		switch op.typ {
		case opCompare:
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(e.Key(op.key)), "=", op.rev))
			cmpOps = append(cmpOps, op)
			gets = append(gets, clientv3.OpGet(e.Key(op.key), clientv3.WithKeysOnly()))
		case opPut:
			thens = append(thens, clientv3.OpPut(e.Key(op.key), string(op.value)))
		case opDelete:
			thens = append(thens, clientv3.OpDelete(e.Key(op.key)))
		}
	}
	if len(cmps) > e.opts.MaxTxnOps || len(thens) > e.opts.MaxTxnOps {
		return 0, fmt.Errorf("txn: %w: %d compares and %d writes: etcd takes at most %d of each in one transaction (--max-txn-ops)",
			ErrInvalid, len(cmps), len(thens), e.opts.MaxTxnOps)
	}
	resp, err := e.cli.Txn(ctx).If(cmps...).Then(thens...).Else(gets...).Commit()
	if err != nil {
		return 0, fmt.Errorf("txn: %w", etcdErr(err))
	}
	if !resp.Succeeded {
		return resp.Header.Revision, fmt.Errorf("txn: %w", failedCompare(cmpOps, resp))
	}
	return resp.Header.Revision, nil
}

// failedCompare finds the first compare that did not hold in the Else
// branch's reads.
func failedCompare(cmps []Op, resp *clientv3.TxnResponse) error {
	for i, op := range cmps {
		have := int64(0)
		if i < len(resp.Responses) {
			if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
				have = kvs[0].ModRevision
			}
		}
		if have != op.rev {
			return compareError(op, have)
		}
	}
	return fmt.Errorf("%w (the keys changed back since)", ErrCompareFailed)
}

// Get returns key's value and revisions (a linearizable read).
func (e *Etcd) Get(ctx context.Context, key string) (KV, bool, error) {
	if err := checkKey(key); err != nil {
		return KV{}, false, fmt.Errorf("get: %w", err)
	}
	if err := e.begin(ctx); err != nil {
		return KV{}, false, fmt.Errorf("get %q: %w", key, err)
	}
	resp, err := e.cli.Get(ctx, e.Key(key))
	if err != nil {
		return KV{}, false, fmt.Errorf("get %q: %w", key, etcdErr(err))
	}
	if len(resp.Kvs) == 0 {
		return KV{}, false, nil
	}
	kv := resp.Kvs[0]
	return KV{Key: key, Value: append([]byte{}, kv.Value...), CreateRev: kv.CreateRevision, ModRev: kv.ModRevision}, true, nil
}

// List returns the keys under prefix, sorted, from one snapshot, and its
// revision.
func (e *Etcd) List(ctx context.Context, prefix string) ([]KV, int64, error) {
	if err := e.begin(ctx); err != nil {
		return nil, 0, fmt.Errorf("list %q: %w", prefix, err)
	}
	resp, err := e.cli.Get(ctx, e.Key(prefix), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, 0, fmt.Errorf("list %q: %w", prefix, etcdErr(err))
	}
	var kvs []KV
	for _, kv := range resp.Kvs {
		kvs = append(kvs, KV{Key: e.StoreKey(string(kv.Key)), Value: append([]byte{}, kv.Value...),
			CreateRev: kv.CreateRevision, ModRev: kv.ModRevision})
	}
	return kvs, resp.Header.Revision, nil
}

// Compact discards etcd's history before rev (etcd's Compact): a watch
// that would need an older event then fails with ErrCompacted. etcd
// servers usually compact by themselves (--auto-compaction-retention).
func (e *Etcd) Compact(ctx context.Context, rev int64) error {
	if err := e.begin(ctx); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if _, err := e.cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact at %d: %w", rev, etcdErr(err))
	}
	return nil
}

// Close ends every watch (closing its channel) and closes the client;
// later calls return ErrClosed. Closing twice is harmless.
func (e *Etcd) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
	if err := e.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("close etcd store: %w", err)
	}
	e.log.Info("store closed")
	return nil
}

// etcdErr maps etcd's errors onto the store's: a cluster that cannot
// commit or answer becomes ErrUnavailable (with etcd's message), a
// compacted revision ErrCompacted; a context's own error stays as it is.
func etcdErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w: %v", ErrCompacted, err)
	case errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost), errors.Is(err, rpctypes.ErrNoLeader),
		errors.Is(err, rpctypes.ErrLeaderChanged), errors.Is(err, rpctypes.ErrNotCapable),
		errors.Is(err, rpctypes.ErrStopped), errors.Is(err, rpctypes.ErrTooManyRequests):
		return fmt.Errorf("%w: etcd: %v (is a majority of the etcd members up?)", ErrUnavailable, err)
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.ResourceExhausted:
			return fmt.Errorf("%w: etcd: %v", ErrUnavailable, s.Message())
		case codes.Canceled:
			return context.Canceled
		case codes.Unknown:
			if strings.Contains(s.Message(), "deadline exceeded") { // etcd 3.4's own request timeout
				return fmt.Errorf("%w: etcd: %v (is a majority of the etcd members up?)", ErrUnavailable, s.Message())
			}
		}
	}
	return err
}
