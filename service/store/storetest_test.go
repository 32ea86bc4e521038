package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
)

// Compile-time checks that every implementation satisfies Store.
var (
	_ Store = (*Mem)(nil)
	_ Store = (*Bolt)(nil)
	_ Store = (*Etcd)(nil)
)

// suiteOptions are the knobs the conformance suite needs from a factory.
type suiteOptions struct {
	watchBuffer  int
	watchHistory int
}

// factory opens a fresh, empty store; the suite closes it.
type factory func(t *testing.T, o suiteOptions) Store

func newMemFactory(t *testing.T, o suiteOptions) Store {
	return NewMem(MemOptions{WatchBuffer: o.watchBuffer, WatchHistory: o.watchHistory})
}

func newBoltFactory(t *testing.T, o suiteOptions) Store {
	s, err := OpenBolt(filepath.Join(t.TempDir(), "store.db"), BoltOptions{
		WatchBuffer:  o.watchBuffer,
		WatchHistory: o.watchHistory,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMemConformance(t *testing.T)  { runConformance(t, newMemFactory) }
func TestBoltConformance(t *testing.T) { runConformance(t, newBoltFactory) }

// TestEtcdConformance runs the suite on a real single-member etcd (Debian's
// etcd-server), each case under a prefix of its own.
func TestEtcdConformance(t *testing.T) {
	c := etcdtest.Start(t, 1)
	n := 0
	runConformance(t, func(t *testing.T, o suiteOptions) Store {
		n++
		s, err := OpenEtcd(EtcdOptions{Endpoints: c.Endpoints(), Prefix: fmt.Sprintf("/suite/%d/", n),
			WatchBuffer: o.watchBuffer})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// runConformance runs every behaviour that all Store implementations share.
func runConformance(t *testing.T, open factory) {
	cases := []struct {
		name string
		run  func(t *testing.T, open factory)
	}{
		{"PutGet", testPutGet},
		{"List", testList},
		{"Delete", testDelete},
		{"Txn", testTxn},
		{"Invalid", testInvalid},
		{"ValuesAreCopied", testValuesAreCopied},
		{"CancelledContext", testCancelledContext},
		{"Concurrent", testConcurrent},
		{"ContendedCompare", testContendedCompare},
		{"WatchOrder", testWatchOrder},
		{"WatchFromListRevision", testWatchFromListRevision},
		{"WatchCompacted", testWatchCompacted},
		{"WatchSlowWatcherDropped", testWatchSlowWatcherDropped},
		{"WatchContextEnds", testWatchContextEnds},
		{"Closed", testClosed},
		{"Fence", testFence},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open) })
	}
}

// openSuite opens a store with default options, closed at cleanup.
func openSuite(t *testing.T, open factory, o suiteOptions) Store {
	t.Helper()
	s := open(t, o)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// mustPut puts and fails the test on error.
func mustPut(t *testing.T, s Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Put(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return rev
}

// mustGet gets a key that must exist.
func mustGet(t *testing.T, s Store, key string) KV {
	t.Helper()
	kv, ok, err := s.Get(t.Context(), key)
	if err != nil || !ok {
		t.Fatalf("get %s: ok=%v err=%v", key, ok, err)
	}
	return kv
}

// currentRev returns the store's revision.
func currentRev(t *testing.T, s Store) int64 {
	t.Helper()
	_, rev, err := s.List(t.Context(), "\xff\xff")
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func testPutGet(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	if _, ok, err := s.Get(t.Context(), "jobs/none"); ok || err != nil {
		t.Fatalf("get missing: ok=%v err=%v", ok, err)
	}
	want := []struct {
		key, value     string
		rev, createRev int64
	}{
		{"jobs/a", "1", 1, 1},
		{"jobs/b", "2", 2, 2},
		{"jobs/a", "3", 3, 1},
		{"jobs/c", "", 4, 4},
	}
	for _, w := range want {
		if rev := mustPut(t, s, w.key, w.value); rev != base+w.rev {
			t.Fatalf("put %s: rev %d, want %d", w.key, rev, base+w.rev)
		}
		got := mustGet(t, s, w.key)
		if string(got.Value) != w.value || got.Value == nil || got.CreateRev != base+w.createRev || got.ModRev != base+w.rev {
			t.Fatalf("get %s = %+v, want value %q create %d mod %d (+%d)", w.key, got, w.value, w.createRev, w.rev, base)
		}
	}
}

func testList(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	for _, k := range []string{"nodes/n1", "jobs/b", "jobs/a", "jobsx", "jobs/c/1"} {
		mustPut(t, s, k, "v-"+k)
	}
	cases := []struct {
		prefix string
		want   []string
	}{
		{"jobs/", []string{"jobs/a", "jobs/b", "jobs/c/1"}},
		{"jobs", []string{"jobs/a", "jobs/b", "jobs/c/1", "jobsx"}},
		{"", []string{"jobs/a", "jobs/b", "jobs/c/1", "jobsx", "nodes/n1"}},
		{"nodes/n1", []string{"nodes/n1"}},
		{"zzz", nil},
	}
	for _, c := range cases {
		kvs, rev, err := s.List(t.Context(), c.prefix)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, kv := range kvs {
			keys = append(keys, kv.Key)
			if string(kv.Value) != "v-"+kv.Key {
				t.Errorf("list %q: %s = %q", c.prefix, kv.Key, kv.Value)
			}
		}
		if !slices.Equal(keys, c.want) || rev != base+5 {
			t.Errorf("list %q = %v at %d, want %v at %d", c.prefix, keys, rev, c.want, base+5)
		}
	}
}

func testDelete(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	mustPut(t, s, "k", "v")
	rev, err := s.Delete(t.Context(), "k")
	if err != nil || rev != base+2 {
		t.Fatalf("delete: rev %d err %v, want 2", rev, err)
	}
	if _, ok, _ := s.Get(t.Context(), "k"); ok {
		t.Fatal("key still there after delete")
	}
	rev, err = s.Delete(t.Context(), "k")
	if err != nil || rev != base+2 {
		t.Fatalf("delete missing: rev %d err %v, want %d (unchanged)", rev, err, base+2)
	}
	mustPut(t, s, "k", "again")
	if kv := mustGet(t, s, "k"); kv.CreateRev != base+3 || kv.ModRev != base+3 {
		t.Fatalf("re-created key = %+v, want create 3 mod 3", kv)
	}
}

func testTxn(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	a := mustPut(t, s, "a", "1") // rev 1
	mustPut(t, s, "b", "2")      // rev 2
	cases := []struct {
		name    string
		ops     []Op
		wantRev int64
		wantErr error
		want    map[string]string // expected contents after the txn
	}{
		{"compare fails on stale rev", []Op{IfModRev("a", a+1), put("a", "x"), OpDelete("b")},
			2, ErrCompareFailed, map[string]string{"a": "1", "b": "2"}},
		{"IfAbsent fails on existing key", []Op{IfAbsent("b"), put("c", "3")},
			2, ErrCompareFailed, map[string]string{"a": "1", "b": "2"}},
		{"compares only", []Op{IfModRev("a", a), IfAbsent("c")},
			2, nil, map[string]string{"a": "1", "b": "2"}},
		{"delete of missing key only", []Op{OpDelete("zz")},
			2, nil, map[string]string{"a": "1", "b": "2"}},
		{"all applied under one revision", []Op{IfModRev("a", a), IfAbsent("c"), put("a", "x"), put("c", "3"), OpDelete("b"), OpDelete("zz")},
			3, nil, map[string]string{"a": "x", "c": "3"}},
	}
	for _, c := range cases {
		rev, err := s.Txn(t.Context(), c.ops...)
		if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) || rev != base+c.wantRev {
			t.Fatalf("%s: rev %d err %v, want %d %v", c.name, rev, err, c.wantRev, c.wantErr)
		}
		kvs, _, _ := s.List(t.Context(), "")
		got := map[string]string{}
		for _, kv := range kvs {
			got[kv.Key] = string(kv.Value)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Fatalf("%s: contents %v, want %v", c.name, got, c.want)
		}
	}
	for key, create := range map[string]int64{"a": base + 1, "c": base + 3} {
		if kv := mustGet(t, s, key); kv.ModRev != base+3 || kv.CreateRev != create {
			t.Errorf("%s = %+v, want mod 3 create %d", key, kv, create)
		}
	}
}

// put is OpPut with a string value, for tables.
func put(key, value string) Op { return OpPut(key, []byte(value)) }

func testInvalid(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	long := strings.Repeat("k", MaxKeySize+1)
	cases := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"put empty key", func(ctx context.Context) error { _, err := s.Put(ctx, "", nil); return err }},
		{"put long key", func(ctx context.Context) error { _, err := s.Put(ctx, long, nil); return err }},
		{"put huge value", func(ctx context.Context) error {
			_, err := s.Put(ctx, "k", make([]byte, MaxValueSize+1))
			return err
		}},
		{"delete empty key", func(ctx context.Context) error { _, err := s.Delete(ctx, ""); return err }},
		{"get empty key", func(ctx context.Context) error { _, _, err := s.Get(ctx, ""); return err }},
		{"txn without ops", func(ctx context.Context) error { _, err := s.Txn(ctx); return err }},
		{"txn zero op", func(ctx context.Context) error { _, err := s.Txn(ctx, put("k", "v"), Op{}); return err }},
		{"txn key written twice", func(ctx context.Context) error {
			_, err := s.Txn(ctx, put("k", "v"), OpDelete("k"))
			return err
		}},
		{"txn negative compare", func(ctx context.Context) error { _, err := s.Txn(ctx, IfModRev("k", -1)); return err }},
		{"watch negative revision", func(ctx context.Context) error { _, err := s.Watch(ctx, "", -1); return err }},
	}
	for _, c := range cases {
		if err := c.call(t.Context()); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", c.name, err)
		}
	}
	if rev := currentRev(t, s); rev != base {
		t.Errorf("revision %d after invalid requests, want %d", rev, base)
	}
	mustPut(t, s, strings.Repeat("k", MaxKeySize), strings.Repeat("v", 1024))
}

func testValuesAreCopied(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	buf := []byte("original")
	if _, err := s.Put(t.Context(), "k", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	kv := mustGet(t, s, "k")
	copy(kv.Value, "YYYYYYYY")
	kvs, _, _ := s.List(t.Context(), "k")
	copy(kvs[0].Value, "ZZZZZZZZ")
	if got := mustGet(t, s, "k"); string(got.Value) != "original" {
		t.Fatalf("stored value changed through a caller's buffer: %q", got.Value)
	}
}

func testCancelledContext(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Put(ctx, "k", []byte("v")); !errors.Is(err, context.Canceled) {
		t.Fatalf("put with cancelled context: %v", err)
	}
	if _, err := s.Watch(ctx, "", 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("watch with cancelled context: %v", err)
	}
	if _, _, err := s.Get(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with cancelled context: %v", err)
	}
	if _, ok, _ := s.Get(t.Context(), "k"); ok {
		t.Fatal("put with a cancelled context was applied")
	}
}

// testConcurrent: 32 writers; every acknowledged put is readable and every
// revision is used exactly once.
func testConcurrent(t *testing.T, open factory) {
	const writers, perWriter = 32, 40
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	revs := make([][]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				rev, err := s.Put(t.Context(), fmt.Sprintf("jobs/%02d/%03d", w, i), []byte{byte(w), byte(i)})
				if err != nil {
					t.Error(err)
					return
				}
				revs[w] = append(revs[w], rev)
			}
		})
	}
	wg.Wait()
	checkRevisions(t, revs, base, writers*perWriter)
	kvs, rev, err := s.List(t.Context(), "jobs/")
	if err != nil || len(kvs) != writers*perWriter || rev != base+writers*perWriter {
		t.Fatalf("list: %d keys at %d (err %v), want %d at %d", len(kvs), rev, err, writers*perWriter, base+writers*perWriter)
	}
}

// checkRevisions checks that each writer's revisions increase and that all
// of them together are exactly base+1..base+n.
func checkRevisions(t *testing.T, revs [][]int64, base int64, n int) {
	t.Helper()
	var all []int64
	for w, rs := range revs {
		if !slices.IsSorted(rs) {
			t.Errorf("writer %d: revisions not increasing: %v", w, rs)
		}
		all = append(all, rs...)
	}
	slices.Sort(all)
	for i, r := range all {
		if r != base+int64(i+1) {
			t.Fatalf("revisions are not %d+1..%d: position %d holds %d", base, n, i, r)
		}
	}
	if len(all) != n {
		t.Fatalf("%d revisions, want %d", len(all), n)
	}
}

// testContendedCompare: writers race to create the same key; exactly one
// wins, the losers get ErrCompareFailed, and plain puts committed alongside
// them (often in the same batch) succeed.
func testContendedCompare(t *testing.T, open factory) {
	const writers = 32
	s := openSuite(t, open, suiteOptions{})
	base := currentRev(t, s)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		winner []int
		lost   int
	)
	for w := range writers {
		wg.Go(func() {
			if _, err := s.Put(t.Context(), fmt.Sprintf("plain/%d", w), []byte("v")); err != nil {
				t.Error(err)
			}
			_, err := s.Txn(t.Context(), IfAbsent("leader"), put("leader", fmt.Sprint(w)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winner = append(winner, w)
			case errors.Is(err, ErrCompareFailed):
				lost++
			default:
				t.Errorf("writer %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	if len(winner) != 1 || lost != writers-1 {
		t.Fatalf("winners %v, losers %d; want one winner", winner, lost)
	}
	if kv := mustGet(t, s, "leader"); string(kv.Value) != fmt.Sprint(winner[0]) {
		t.Fatalf("leader = %q, winner %d", kv.Value, winner[0])
	}
	if kvs, rev, _ := s.List(t.Context(), "plain/"); len(kvs) != writers || rev != base+writers+1 {
		t.Fatalf("plain puts: %d at rev %d, want %d at %d", len(kvs), rev, writers, base+writers+1)
	}
}

// testFence: writes through a Fenced store apply while the fence key keeps
// its revision and fail with ErrFenced (writing nothing) once it changed
// or is gone; reads pass through.
func testFence(t *testing.T, open factory) {
	s := openSuite(t, open, suiteOptions{})
	rev := mustPut(t, s, "leader/a", "me")
	f := Fence(s, "leader/a", rev)
	if _, err := f.Put(t.Context(), "jobs/1", []byte("x")); err != nil {
		t.Fatalf("fenced put: %v", err)
	}
	if _, err := f.Txn(t.Context(), IfAbsent("jobs/2"), put("jobs/2", "y"), OpDelete("jobs/1")); err != nil {
		t.Fatalf("fenced txn: %v", err)
	}
	_, err := f.Txn(t.Context(), IfAbsent("jobs/2"), put("jobs/2", "z"))
	if !errors.Is(err, ErrCompareFailed) || errors.Is(err, ErrFenced) {
		t.Fatalf("fenced txn with a failing compare of its own: %v, want ErrCompareFailed only", err)
	}
	for name, depose := range map[string]func(){
		"replaced": func() { mustPut(t, s, "leader/a", "someone else") },
		"deleted":  func() { _, _ = s.Delete(t.Context(), "leader/a") },
	} {
		depose()
		before := currentRev(t, s)
		calls := map[string]func() error{
			"put":    func() error { _, err := f.Put(t.Context(), "jobs/3", []byte("v")); return err },
			"delete": func() error { _, err := f.Delete(t.Context(), "jobs/2"); return err },
			"txn":    func() error { _, err := f.Txn(t.Context(), put("jobs/4", "v")); return err },
		}
		for call, do := range calls {
			if err := do(); !errors.Is(err, ErrFenced) {
				t.Errorf("%s fence, %s: %v, want ErrFenced", name, call, err)
			}
		}
		if rev := currentRev(t, s); rev != before {
			t.Errorf("%s fence: revision moved from %d to %d", name, before, rev)
		}
	}
	if kv := mustGet(t, f, "jobs/2"); string(kv.Value) != "y" {
		t.Fatalf("read through the fence: %q", kv.Value)
	}
}
