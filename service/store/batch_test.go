package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// countingStore records the size of every transaction; limit, when
// positive, is its limit on a transaction's writes (as etcd's).
type countingStore struct {
	Store
	limit int
	txns  []int
}

func (c *countingStore) MaxTxnOps() int { return c.limit }

func (c *countingStore) Txn(ctx context.Context, ops ...Op) (int64, error) {
	c.txns = append(c.txns, len(ops))
	return c.Store.Txn(ctx, ops...)
}

// TestDeleteKeys: the keys are deleted in transactions of at most the
// smaller of the caller's cap and the store's limit; others are kept.
func TestDeleteKeys(t *testing.T) {
	for _, tc := range []struct {
		name        string
		limit, most int
		keys        int
		txns        []int
	}{
		{"caller's cap", 0, 2, 5, []int{2, 2, 1}},
		{"store's limit is smaller", 3, 4, 7, []int{3, 3, 1}},
		{"no cap, no limit: one transaction", 0, 0, 4, []int{4}},
		{"nothing to delete", 3, 2, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := NewMem(MemOptions{})
			defer mem.Close()
			st := &countingStore{Store: mem, limit: tc.limit}
			var keys []string
			for i := range tc.keys + 1 {
				k := fmt.Sprintf("k/%02d", i)
				if _, err := mem.Put(ctx, k, []byte("v")); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
			n, err := DeleteKeys(ctx, st, keys[:tc.keys], tc.most)
			if err != nil || n != tc.keys || !slices.Equal(st.txns, tc.txns) {
				t.Fatalf("deleted %d in transactions %v, %v; want %d in %v", n, st.txns, err, tc.keys, tc.txns)
			}
			if kvs, _, _ := mem.List(ctx, "k/"); len(kvs) != 1 || kvs[0].Key != keys[tc.keys] {
				t.Errorf("left %v, want only %s", kvs, keys[tc.keys])
			}
		})
	}
}
