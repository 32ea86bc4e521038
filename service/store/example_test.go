package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/service/store"
)

// Optimistic concurrency: read a job, change it only if nobody else did in
// between (etcd's If(ModRevision(k) == r).Then(Put)).
func ExampleStore_Txn() {
	ctx := context.Background()
	var s store.Store = store.NewMem(store.MemOptions{})
	defer s.Close()

	s.Put(ctx, "jobs/j1", []byte(`{"state":"queued"}`))
	kv, _, _ := s.Get(ctx, "jobs/j1")
	s.Put(ctx, "jobs/j1", []byte(`{"state":"cancelled"}`)) // a concurrent writer

	_, err := s.Txn(ctx,
		store.IfModRev("jobs/j1", kv.ModRev),
		store.OpPut("jobs/j1", []byte(`{"state":"running"}`)))
	fmt.Println(errors.Is(err, store.ErrCompareFailed))
	fmt.Println(err)
	// Output:
	// true
	// txn: store: compare failed: "jobs/j1" has mod revision 2, want 1
}

// List, then Watch from the listed revision: no change is missed, even one
// committed between the two calls.
func ExampleStore_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := store.NewMem(store.MemOptions{})
	defer s.Close()

	s.Put(ctx, "jobs/j1", []byte("a"))
	kvs, rev, _ := s.List(ctx, "jobs/")
	s.Put(ctx, "jobs/j2", []byte("b")) // lands before the watch starts
	events, _ := s.Watch(ctx, "jobs/", rev)
	s.Delete(ctx, "jobs/j1")

	fmt.Println(len(kvs), "job(s) at revision", rev)
	for range 2 {
		ev := <-events
		fmt.Println(ev.Type, ev.KV.Key, ev.KV.ModRev)
	}
	// Output:
	// 1 job(s) at revision 1
	// put jobs/j2 2
	// delete jobs/j1 3
}
