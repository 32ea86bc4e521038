package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// next receives one event or fails after a timeout.
func next(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event within 5s")
	}
	return Event{}
}

// expectClosed waits for ch to be closed, discarding events.
func expectClosed(t *testing.T, ch <-chan Event) int {
	t.Helper()
	n := 0
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return n
			}
			n++
		case <-timeout:
			t.Fatal("watch channel not closed within 5s")
		}
	}
}

// evString is a compact form for comparing events: "put k=v @rev/create",
// with revisions counted from base (the store's revision when the test
// began).
func evString(base int64, ev Event) string {
	if ev.Type == EventDelete {
		return fmt.Sprintf("delete %s @%d", ev.KV.Key, ev.KV.ModRev-base)
	}
	return fmt.Sprintf("%v %s=%s @%d/%d", ev.Type, ev.KV.Key, ev.KV.Value, ev.KV.ModRev-base, ev.KV.CreateRev-base)
}

// trimHistory makes s forget the watch history before its last keep events
// where the store does not do it by itself (etcd: Compact); Mem and Bolt
// were opened with suiteOptions.watchHistory = keep instead.
func trimHistory(t *testing.T, s Store, keep int64) {
	t.Helper()
	c, ok := s.(interface {
		Compact(ctx context.Context, rev int64) error
	})
	if !ok {
		return
	}
	rev := currentRev(t, s)
	if err := c.Compact(t.Context(), min(rev, rev-keep+1)); err != nil {
		t.Fatal(err)
	}
}

func testWatchOrder(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	mustPut(t, s, "jobs/old", "0") // rev 1, before the watch
	ch, err := s.Watch(t.Context(), "jobs/", 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := s.Put(t.Context(), "jobs/a", []byte("1")); return err },  // 2
		func() error { _, err := s.Put(t.Context(), "nodes/n", []byte("x")); return err }, // 3, not watched
		func() error { _, err := s.Put(t.Context(), "jobs/a", []byte("2")); return err },  // 4
		func() error { _, err := s.Delete(t.Context(), "jobs/old"); return err },          // 5
		func() error { _, err := s.Delete(t.Context(), "jobs/none"); return err },         // no event
		func() error { // 6: two events, one revision, in op order
			_, err := s.Txn(t.Context(), put("jobs/c", "3"), OpDelete("jobs/a"), put("nodes/m", "y"))
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []string{
		"put jobs/a=1 @2/2",
		"put jobs/a=2 @4/2",
		"delete jobs/old @5",
		"put jobs/c=3 @6/6",
		"delete jobs/a @6",
	}
	for i, w := range want {
		if got := evString(base, next(t, ch)); got != w {
			t.Fatalf("event %d = %q, want %q", i, got, w)
		}
	}
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %s", evString(base, ev))
	case <-time.After(20 * time.Millisecond):
	}
}

// testWatchFromListRevision: the List-then-Watch pattern misses nothing even
// when writes land between the two calls.
func testWatchFromListRevision(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	mustPut(t, s, "jobs/a", "1")
	_, rev, err := s.List(t.Context(), "jobs/")
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "jobs/b", "2")
	mustPut(t, s, "jobs/a", "3")
	ch, err := s.Watch(t.Context(), "jobs/", rev)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "jobs/c", "4")
	for i, w := range []string{"put jobs/b=2 @2/2", "put jobs/a=3 @3/1", "put jobs/c=4 @4/4"} {
		if got := evString(base, next(t, ch)); got != w {
			t.Fatalf("event %d = %q, want %q", i, got, w)
		}
	}
	// A watch that starts in the future sees only later events.
	later, err := s.Watch(t.Context(), "jobs/", base+5)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "jobs/d", "5") // rev 5: not after 5
	mustPut(t, s, "jobs/e", "6")
	if got := evString(base, next(t, later)); got != "put jobs/e=6 @6/6" {
		t.Fatalf("future watch got %q", got)
	}
}

func testWatchCompacted(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{watchHistory: 2})
	base := currentRev(t, s)
	for i := range 6 {
		mustPut(t, s, fmt.Sprintf("k%d", i), "v")
	}
	trimHistory(t, s, 2)
	// History keeps at least the last 2 events: revisions 5 and 6.
	if _, err := s.Watch(t.Context(), "", base+1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from 1: %v, want ErrCompacted", err)
	}
	ch, err := s.Watch(t.Context(), "", base+4)
	if err != nil {
		t.Fatalf("watch from 4: %v", err)
	}
	if got := evString(base, next(t, ch)); got != "put k4=v @5/5" {
		t.Fatalf("replayed %q", got)
	}
	noHistory := openSuite(t, open, suiteOptions{watchHistory: -1})
	base = currentRev(t, noHistory)
	for range 3 {
		mustPut(t, noHistory, "k", "v")
	}
	trimHistory(t, noHistory, 0)
	if _, err := noHistory.Watch(t.Context(), "", base+1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from 1 without history: %v, want ErrCompacted", err)
	}
	if _, err := noHistory.Watch(t.Context(), "", base+3); err != nil {
		t.Fatalf("watch from the current revision: %v", err)
	}
}

// testWatchSlowWatcherDropped: a watcher that does not read is dropped
// (channel closed, ctx still live) instead of blocking writers.
func testWatchSlowWatcherDropped(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{watchBuffer: 4})
	ch, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustPut(t, s, fmt.Sprintf("k%d", i), "v")
	}
	// etcd delivers watch events asynchronously: give the fifth event time
	// to arrive before reading makes room.
	time.Sleep(100 * time.Millisecond)
	if n := expectClosed(t, ch); n != 4 {
		t.Fatalf("dropped watcher delivered %d events, want its buffer of 4", n)
	}
}

func testWatchContextEnds(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.Watch(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	expectClosed(t, ch)
	mustPut(t, s, "k", "v") // publishing after the watcher left is fine
}

func testClosed(t *testing.T, open factory) {
	s := open(t, suiteOptions{})
	ch, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "k", "v")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, ch)
	ctx := t.Context()
	calls := map[string]func() error{
		"put":    func() error { _, err := s.Put(ctx, "k", nil); return err },
		"delete": func() error { _, err := s.Delete(ctx, "k"); return err },
		"txn":    func() error { _, err := s.Txn(ctx, IfAbsent("k")); return err },
		"get":    func() error { _, _, err := s.Get(ctx, "k"); return err },
		"list":   func() error { _, _, err := s.List(ctx, ""); return err },
		"watch":  func() error { _, err := s.Watch(ctx, "", 0); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after close: %v, want ErrClosed", name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}
