package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
)

// TestFencedTxnWriteLimit: on a real etcd (default --max-txn-ops, 128), a
// fenced store takes 127 compares of its own (the fence is the 128th) but
// 128 puts in one transaction, since etcd bounds compares and writes each;
// 129 puts are refused as invalid, and nothing of them is written.
func TestFencedTxnWriteLimit(t *testing.T) {
	c := etcdtest.Start(t, 1)
	s, err := OpenEtcd(EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/txnlimit/"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fenceRev := mustPut(t, s, "leader", "me")
	f := Fence(s, "leader", fenceRev)
	if got, want := TxnLimit(f), DefaultEtcdMaxTxnOps-1; got != want {
		t.Errorf("TxnLimit(fenced) = %d, want %d", got, want)
	}
	if got, want := TxnWriteLimit(f), DefaultEtcdMaxTxnOps; got != want {
		t.Errorf("TxnWriteLimit(fenced) = %d, want %d", got, want)
	}
	if got, want := TxnWriteLimit(s), DefaultEtcdMaxTxnOps; got != want {
		t.Errorf("TxnWriteLimit(etcd) = %d, want %d", got, want)
	}
	if got := TxnWriteLimit(NewMem(MemOptions{})); got != 0 {
		t.Errorf("TxnWriteLimit(mem) = %d, want 0 (no limit)", got)
	}
	puts := func(prefix string, n int) []Op {
		ops := make([]Op, n)
		for i := range ops {
			ops[i] = OpPut(fmt.Sprintf("%s/%03d", prefix, i), []byte("x"))
		}
		return ops
	}
	ctx := context.Background()
	if _, err := f.Txn(ctx, puts("full", TxnWriteLimit(f))...); err != nil {
		t.Fatalf("fenced txn of %d puts: %v", TxnWriteLimit(f), err)
	}
	if kvs, _, err := s.List(ctx, "full/"); err != nil || len(kvs) != TxnWriteLimit(f) {
		t.Fatalf("after the full txn: %d keys, %v", len(kvs), err)
	}
	if _, err := f.Txn(ctx, puts("over", TxnWriteLimit(f)+1)...); !errors.Is(err, ErrInvalid) {
		t.Fatalf("fenced txn of %d puts: %v, want ErrInvalid", TxnWriteLimit(f)+1, err)
	}
	if kvs, _, err := s.List(ctx, "over/"); err != nil || len(kvs) != 0 {
		t.Fatalf("after the refused txn: %d keys, %v", len(kvs), err)
	}
}
