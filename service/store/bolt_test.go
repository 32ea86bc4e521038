package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openBolt opens a Bolt store at path and fails the test on error.
func openBolt(t *testing.T, path string, opts BoltOptions) *Bolt {
	t.Helper()
	s, err := OpenBolt(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dump lists everything as "key=value create/mod" lines and the revision.
func dump(t *testing.T, s Store) ([]string, int64) {
	t.Helper()
	kvs, rev, err := s.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range kvs {
		out = append(out, fmt.Sprintf("%s=%s %d/%d", kv.Key, kv.Value, kv.CreateRev, kv.ModRev))
	}
	return out, rev
}

func TestBoltReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "store.db") // parent created
	s := openBolt(t, path, BoltOptions{})
	mustPut(t, s, "jobs/a", "1")
	mustPut(t, s, "jobs/b", "2")
	mustPut(t, s, "jobs/a", "3")
	if _, err := s.Txn(t.Context(), put("jobs/c", "4"), OpDelete("jobs/b")); err != nil {
		t.Fatal(err)
	}
	before, rev := dump(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openBolt(t, path, BoltOptions{})
	defer s.Close()
	after, rev2 := dump(t, s)
	if !slices.Equal(before, after) || rev != rev2 || rev != 4 {
		t.Fatalf("after reopen: %v at %d, want %v at %d", after, rev2, before, rev)
	}
	if got := mustPut(t, s, "jobs/a", "5"); got != 5 {
		t.Fatalf("first put after reopen: rev %d, want 5", got)
	}
	if kv := mustGet(t, s, "jobs/a"); kv.CreateRev != 1 {
		t.Fatalf("create revision lost across reopen: %+v", kv)
	}
	// bbolt keeps no history: after a restart, a watch can start at the
	// revision the store was opened at (4) or later, never earlier.
	if _, err := s.Watch(t.Context(), "", 3); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from before the restart: %v, want ErrCompacted", err)
	}
	ch, err := s.Watch(t.Context(), "", 4)
	if err != nil {
		t.Fatalf("watch from the revision at open: %v", err)
	}
	if got := evString(0, next(t, ch)); got != "put jobs/a=5 @5/1" {
		t.Fatalf("replayed %q", got)
	}
}

func TestBoltLockedSameProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := openBolt(t, path, BoltOptions{})
	defer s.Close()
	start := time.Now()
	_, err := OpenBolt(path, BoltOptions{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "data directory in use by another process") {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("second open took %v", d)
	}
}

func TestBoltSchemaMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := openBolt(t, path, BoltOptions{})
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(metaSchema), []byte("99"))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenBolt(path, BoltOptions{}); err == nil || !strings.Contains(err.Error(), "unsupported schema") {
		t.Fatalf("open with a newer schema: %v", err)
	}
}

// TestBoltGroupCommit: concurrent puts share commits, and all are durable.
func TestBoltGroupCommit(t *testing.T) {
	const writers, perWriter = 32, 25
	path := filepath.Join(t.TempDir(), "store.db")
	s := openBolt(t, path, BoltOptions{})
	revs := make([][]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				rev, err := s.Put(t.Context(), fmt.Sprintf("k/%d/%d", w, i), []byte("v"))
				if err != nil {
					t.Error(err)
					return
				}
				revs[w] = append(revs[w], rev)
			}
		})
	}
	wg.Wait()
	checkRevisions(t, revs, 0, writers*perWriter)
	st := s.Stats()
	t.Logf("%d puts in %d commits", st.Requests, st.Commits)
	if st.Requests != writers*perWriter || st.Commits >= st.Requests {
		t.Fatalf("stats %+v: want %d requests in fewer commits", st, writers*perWriter)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openBolt(t, path, BoltOptions{})
	defer s.Close()
	if keys, rev := dump(t, s); len(keys) != writers*perWriter || rev != writers*perWriter {
		t.Fatalf("after reopen: %d keys at %d", len(keys), rev)
	}
}

// TestBoltBadRequestIsolated: a request that fails inside the transaction
// (here: a corrupt stored record) fails alone; the requests batched with it
// are committed.
func TestBoltBadRequestIsolated(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "store.db"), BoltOptions{MaxBatchDelay: 20 * time.Millisecond})
	defer s.Close()
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketKV)).Put([]byte("corrupt"), []byte{0xee})
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			key := fmt.Sprintf("good/%d", i)
			if i == 3 {
				key = "corrupt"
			}
			_, errs[i] = s.Put(t.Context(), key, []byte("v"))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 3) != (err != nil) {
			t.Errorf("put %d: %v", i, err)
		}
	}
	if kvs, rev, _ := s.List(t.Context(), "good/"); len(kvs) != 7 || rev != 7 {
		t.Fatalf("good puts: %d at rev %d, want 7 at 7", len(kvs), rev)
	}
	if _, _, err := s.Get(t.Context(), "corrupt"); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Fatalf("get corrupt record: %v", err)
	}
}

// TestBoltCloseDrains: Close commits what was submitted before it; every
// put either succeeds (and survives a reopen) or fails with ErrClosed.
func TestBoltCloseDrains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := openBolt(t, path, BoltOptions{MaxBatchDelay: 5 * time.Millisecond})
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []string
	)
	for w := range 32 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("k/%d/%d", w, i)
				_, err := s.Put(t.Context(), key, []byte("v"))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
			}
		})
	}
	time.Sleep(30 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s = openBolt(t, path, BoltOptions{})
	defer s.Close()
	checkAcked(t, s, acked)
}

// checkAcked checks that every acknowledged key is in the store.
func checkAcked(t *testing.T, s Store, acked []string) {
	t.Helper()
	kvs, _, err := s.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(kvs))
	for _, kv := range kvs {
		have[kv.Key] = true
	}
	for _, k := range acked {
		if !have[k] {
			t.Fatalf("acknowledged key %s lost (%d acknowledged, %d stored)", k, len(acked), len(kvs))
		}
	}
	t.Logf("%d acknowledged keys, all present (%d stored)", len(acked), len(kvs))
}
