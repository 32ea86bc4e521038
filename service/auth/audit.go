package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// auditPrefix is where the audit log lives in the store: one key per entry,
// "audit/<20-digit Unix nanoseconds>-<random>", so keys sort by time.
const auditPrefix = "audit/"

// Audit is the audit log of mutations, kept in the store. Safe for
// concurrent use.
type Audit struct {
	st  store.Store
	now func() time.Time
}

// NewAudit returns the audit log of st; now is the clock (nil: time.Now).
func NewAudit(st store.Store, now func() time.Time) *Audit {
	if now == nil {
		now = time.Now
	}
	return &Audit{st: st, now: now}
}

// Record writes one entry durably; its Time is set when zero.
func (a *Audit) Record(ctx context.Context, e api.AuditEntry) error {
	op, err := a.Op(e)
	if err != nil {
		return err
	}
	if _, err := a.st.Txn(ctx, op); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Op returns the store write of entry e (its Time set when zero), for a
// caller that writes it in the same transaction as the mutation it
// records.
func (a *Audit) Op(e api.AuditEntry) (store.Op, error) {
	if e.Time.IsZero() {
		e.Time = a.now().UTC()
	}
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return store.Op{}, fmt.Errorf("audit: %w", err)
	}
	key := fmt.Sprintf("%s%020d-%s", auditPrefix, e.Time.UnixNano(), hex.EncodeToString(r[:]))
	data, err := json.Marshal(e)
	if err != nil {
		return store.Op{}, fmt.Errorf("audit: %w", err)
	}
	return store.OpPut(key, data), nil
}

// List returns the latest limit entries (all when limit ≤ 0), oldest first.
func (a *Audit) List(ctx context.Context, limit int) ([]api.AuditEntry, error) {
	kvs, _, err := a.st.List(ctx, auditPrefix)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if limit > 0 && len(kvs) > limit {
		kvs = kvs[len(kvs)-limit:]
	}
	out := make([]api.AuditEntry, 0, len(kvs))
	for _, kv := range kvs {
		var e api.AuditEntry
		if err := json.Unmarshal(kv.Value, &e); err != nil {
			return nil, fmt.Errorf("audit entry %s: %w", kv.Key, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// pruneBatch caps the deletes of one pruning transaction on a store
// without a limit of its own (bbolt): one write lock held for long would
// stall the mutations being audited.
const pruneBatch = 1000

// Prune deletes the entries recorded before cutoff, oldest first, in
// transactions no larger than the store allows (store.DeleteKeys), and
// returns how many it deleted. An entry is judged by the time in its key,
// so a key that does not parse (written by hand) is kept.
func (a *Audit) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	kvs, _, err := a.st.List(ctx, auditPrefix)
	if err != nil {
		return 0, fmt.Errorf("audit: prune: %w", err)
	}
	var old []string
	for _, kv := range kvs {
		at, ok := entryTime(kv.Key)
		if !ok {
			continue
		}
		if !at.Before(cutoff) {
			break // keys sort by time
		}
		old = append(old, kv.Key)
	}
	n, err := store.DeleteKeys(ctx, a.st, old, pruneBatch)
	if err != nil {
		return n, fmt.Errorf("audit: prune: %w", err)
	}
	return n, nil
}

// entryTime returns the time in an audit key ("audit/<20-digit Unix
// nanoseconds>-<random>").
func entryTime(key string) (time.Time, bool) {
	const digits = 20
	if len(key) < len(auditPrefix)+digits {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(key[len(auditPrefix):len(auditPrefix)+digits], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
