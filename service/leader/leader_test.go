package leader

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
	"github.com/gpusched/gpusched/service/store"
)

// candidate runs an elector that records its terms.
type cand struct {
	e      *Elector
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	terms  []Term
}

func run(t *testing.T, c *etcdtest.Cluster, self string) *cand {
	t.Helper()
	st, err := store.OpenEtcd(store.EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/el/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e, err := New(Config{Store: st, Self: self, TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &cand{e: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		e.Run(ctx, func(ctx context.Context, term Term) {
			k.mu.Lock()
			k.terms = append(k.terms, term)
			k.mu.Unlock()
			<-ctx.Done()
		})
	}()
	t.Cleanup(func() { cancel(); <-k.done })
	return k
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestElection: of two candidates one leads and both name it; when it
// stops (and resigns) the other takes over at once with a later term.
func TestElection(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := run(t, c, "http://a")
	waitFor(t, "a leads", func() bool { return a.e.Leader().Self })
	b := run(t, c, "http://b")
	waitFor(t, "b names a", func() bool { l := b.e.Leader(); return l.URL == "http://a" && !l.Self })
	first := a.e.Leader().Term
	start := time.Now()
	a.cancel()
	<-a.done
	waitFor(t, "b leads", func() bool { return b.e.Leader().Self })
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("takeover after a resignation took %v", d)
	}
	l := b.e.Leader()
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.URL != "http://b" || l.Term <= first || len(b.terms) != 1 || b.terms[0].Rev != l.Term {
		t.Fatalf("after the takeover: %+v, terms %+v (first term %d)", l, b.terms, first)
	}
}
