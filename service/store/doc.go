// Package store is the scheduler service's durable, revisioned key-value
// store: the place where the server keeps jobs, nodes and allocations so that
// a restart loses nothing it has acknowledged.
//
// The model is etcd's, reduced to what gpusched needs:
//
//   - one global revision counter; every write (Put, Delete, or Txn that
//     changes something) advances it by one, and every key records the
//     revision that created it (CreateRev) and last modified it (ModRev);
//   - Txn applies puts and deletes atomically, optionally guarded by compares
//     on keys' mod revisions (optimistic concurrency, like etcd's
//     If(ModRevision(k) == r).Then(...));
//   - Watch streams committed changes under a key prefix, in revision order.
//
// Three implementations share one conformance test suite:
//
//   - Bolt, on a go.etcd.io/bbolt file. A write returns only after it is on
//     disk (fsync). Concurrent writes are group-committed: a single writer
//     goroutine gathers the pending writes (lingering at most
//     BoltOptions.MaxBatchDelay, up to BoltOptions.MaxBatchSize operations),
//     applies them in one bbolt transaction (one fsync) and then answers
//     every caller.
//   - Mem, in memory, for unit tests of code that uses a Store.
//   - Etcd, on an etcd cluster through go.etcd.io/etcd/client/v3 (the keys
//     under a prefix; a write is acknowledged once etcd committed it), which
//     several servers may share. Fence guards every write of a leader with
//     its election key; TxnLimit sizes batches to etcd's --max-txn-ops.
//
// bbolt keeps no history, so Watch can replay only the recent events still
// held in memory (BoltOptions.WatchHistory); older starting revisions give
// ErrCompacted. See docs/STORE.md for the data layout and the guarantees.
package store
