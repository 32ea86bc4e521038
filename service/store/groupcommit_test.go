package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestGroupCommit: concurrent submissions are all durable, a duplicate
// key fails alone (its batch is retried request by request), and once stop
// is closed nothing more is written.
func TestGroupCommit(t *testing.T) {
	st, err := OpenBolt(filepath.Join(t.TempDir(), "store.db"), BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stopped := fmt.Errorf("%w: stopped", ErrClosed)
	g := &GroupCommit{Stopped: stopped}
	stop := make(chan struct{})
	put := func(key string) error { return g.Commit(st, stop, IfAbsent(key), OpPut(key, []byte(key))) }
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Go(func() { errs[i] = put(fmt.Sprintf("k/%02d", i%40)) }) // 10 keys twice
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrCompareFailed):
			failed++
		default:
			t.Fatalf("commit: %v", err)
		}
	}
	kvs, _, err := st.List(context.Background(), "k/")
	if err != nil {
		t.Fatal(err)
	}
	if len(kvs) != 40 || failed != 10 {
		t.Errorf("%d keys stored, %d duplicates refused; want 40 and 10", len(kvs), failed)
	}
	close(stop)
	if err := put("k/late"); !errors.Is(err, ErrClosed) {
		t.Errorf("commit after stop: %v, want the Stopped error", err)
	}
	if _, found, _ := st.Get(context.Background(), "k/late"); found {
		t.Error("a commit after stop was written")
	}
}
