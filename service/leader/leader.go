package leader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Defaults of Config.
const (
	// DefaultTTL is the default lease of the leader's session: a leader
	// killed without resigning is replaced after at most this long.
	DefaultTTL = 3 * time.Second
	// DefaultName is the election's key prefix in the store ("leader/").
	DefaultName = "leader"
)

// Config configures an Elector. Store and Self are required.
type Config struct {
	// Store is the etcd store the servers share; the election's keys live
	// in it, under Name + "/".
	Store *store.Etcd
	// Self is this server's advertised URL, the election's value: what
	// followers redirect to.
	Self string
	// Name is the election's prefix in the store; empty means DefaultName.
	Name string
	// TTL is the session's lease, rounded up to whole seconds (etcd's
	// unit); <= 0 means DefaultTTL. etcd refuses leases shorter than about
	// 1.5 election timeouts of its own.
	TTL time.Duration
	// Logger receives the elector's logs; nil discards them.
	Logger *slog.Logger
}

// Term is one leadership of this server: the store key of its election
// entry and that key's mod revision, which fence every write of the term
// (store.Fence).
type Term struct {
	Key string
	Rev int64
}

// Elector campaigns for leadership on etcd (concurrency.Election) and
// tracks who leads. Run runs the campaigns; Leader answers "who leads?" at
// any time.
type Elector struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	term   *Term // the current term of this server; nil when it does not lead
	info   api.Leader
	known  bool
	leadCh chan struct{} // closed and replaced whenever info changes
}

// New returns an elector; it contacts no one until Run.
func New(cfg Config) (*Elector, error) {
	if cfg.Store == nil || strings.TrimSpace(cfg.Self) == "" {
		return nil, errors.New("leader: a store and this server's URL are required")
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Elector{cfg: cfg, log: cfg.Logger.With("self", cfg.Self), leadCh: make(chan struct{})}, nil
}

// Self returns this server's advertised URL.
func (e *Elector) Self() string { return e.cfg.Self }

// TTL returns the session lease in whole seconds.
func (e *Elector) TTL() int { return int(math.Ceil(e.cfg.TTL.Seconds())) }

// Leader returns who leads as far as this server knows (URL empty when no
// leader is known).
func (e *Elector) Leader() api.Leader {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.info
	if e.term != nil && (out.URL != e.cfg.Self || out.Term != e.term.Rev) {
		// This server has won; the watch has not shown it yet.
		out = api.Leader{URL: e.cfg.Self, Term: e.term.Rev, Since: e.info.Since}
	}
	out.Self = e.term != nil && out.Term == e.term.Rev
	out.Mode = "ha"
	return out
}

// Changed returns a channel closed at the next change of Leader.
func (e *Elector) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leadCh
}

// Run campaigns until ctx ends. Whenever this server wins, it calls lead
// with a context that ends when the leadership is lost (the session's
// lease expired: etcd unreachable or without quorum for the TTL) or ctx
// ends; when lead returns, Run resigns and campaigns again. It also
// watches the election so that Leader stays current. Run returns nil when
// ctx ends.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context, t Term)) error {
	var wg sync.WaitGroup
	wg.Go(func() { e.observe(ctx) })
	defer wg.Wait()
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := e.campaign(ctx, lead)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			e.log.Warn("election: campaign failed; retrying", "err", err, "in", wait)
			sleep(ctx, wait)
			wait = min(2*wait, 2*time.Second)
			continue
		}
		wait = 100 * time.Millisecond
	}
	return nil
}

// campaign runs one session: campaign, lead while it lasts, resign.
func (e *Elector) campaign(ctx context.Context, lead func(ctx context.Context, t Term)) error {
	sess, err := concurrency.NewSession(e.cfg.Store.Client(), concurrency.WithTTL(e.TTL()), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("open an etcd session: %w", err)
	}
	defer sess.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctxOf(sess.Done()), cancel)
	defer stop()
	el := concurrency.NewElection(sess, e.cfg.Store.Key(e.cfg.Name))
	if err := el.Campaign(sctx, e.cfg.Self); err != nil {
		if sctx.Err() != nil && ctx.Err() == nil {
			return errors.New("the etcd session expired while campaigning")
		}
		return fmt.Errorf("campaign: %w", err)
	}
	key := e.cfg.Store.StoreKey(el.Key())
	kv, ok, err := e.cfg.Store.Get(sctx, key)
	if err != nil || !ok {
		return fmt.Errorf("read the election key %s after winning: ok=%v %w", key, ok, err)
	}
	t := Term{Key: key, Rev: kv.ModRev}
	e.setTerm(&t)
	e.log.Info("elected leader", "key", key, "term", t.Rev)
	lead(sctx, t)
	e.setTerm(nil)
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer rcancel()
	if sess.Lease() != 0 && ctxOf(sess.Done()).Err() == nil {
		if err := el.Resign(rctx); err != nil {
			e.log.Warn("resign failed; the lease expires instead", "err", err)
		}
	}
	e.log.Info("leadership ended", "term", t.Rev)
	return nil
}

// setTerm records this server's term and refreshes Self.
func (e *Elector) setTerm(t *Term) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.term = t
	e.refresh(e.info.URL, e.info.Term)
}

// refresh sets the leader info (lock held) and signals a change.
func (e *Elector) refresh(url string, term int64) {
	self := e.term != nil && e.term.Rev == term && url == e.cfg.Self
	if e.info.URL == url && e.info.Term == term && e.info.Self == self && e.info.Since != nil {
		return
	}
	now := time.Now().UTC()
	e.info = api.Leader{URL: url, Term: term, Self: self, Since: &now}
	if url == "" {
		e.info.Since = nil
	}
	close(e.leadCh)
	e.leadCh = make(chan struct{})
}

// ctxOf turns a done channel into a context.
func ctxOf(done <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-done
		cancel()
	}()
	return ctx
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
