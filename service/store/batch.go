package store

import "context"

// DeleteKeys deletes keys in transactions of at most most deletes, or
// fewer where the store allows fewer (TxnWriteLimit), in order; it returns
// how many it deleted before any error. Each transaction is atomic, the
// whole is not: for clean-ups (retention) where a failure part-way leaves
// only fewer keys deleted, never a half-written record.
func DeleteKeys(ctx context.Context, st Store, keys []string, most int) (int, error) {
	if l := TxnWriteLimit(st); l > 0 && (most <= 0 || l < most) {
		most = l
	}
	if most <= 0 {
		most = len(keys)
	}
	n := 0
	for len(keys) > 0 {
		batch := keys[:min(most, len(keys))]
		ops := make([]Op, len(batch))
		for i, k := range batch {
			ops[i] = OpDelete(k)
		}
		if _, err := st.Txn(ctx, ops...); err != nil {
			return n, err
		}
		n += len(batch)
		keys = keys[len(batch):]
	}
	return n, nil
}
