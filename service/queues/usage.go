package queues

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/service/store"
)

// UsageKey holds the queues' fair-share usage in the store (normalised
// GPU-hours by queue name), so that a restarted server remembers it.
const UsageKey = "queues/usage"

// UsageEvery is how often the queues' usage is written.
const UsageEvery = 30 * time.Second

// Usage keeps the fair-share usage of a queue layer in the store: Load
// restores it, Due and Write store it at most every UsageEvery. A Usage of
// no queue layer does nothing.
type Usage struct {
	p     *quota.Policy
	st    store.Store
	log   *slog.Logger
	saved time.Time
}

// NewUsage returns the usage of queue layer p (nil: none) kept in st.
func NewUsage(p *quota.Policy, st store.Store, log *slog.Logger) *Usage {
	return &Usage{p: p, st: st, log: log}
}

// Load restores the usage from the store; a stored value that cannot be
// read is ignored (and logged).
func (u *Usage) Load(ctx context.Context) error {
	if u.p == nil {
		return nil
	}
	kv, ok, err := u.st.Get(ctx, UsageKey)
	if err != nil || !ok {
		return err
	}
	var m map[string]float64
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		u.log.Warn("ignoring the stored queue usage", "err", err)
		return nil
	}
	u.p.Restore(m)
	return nil
}

// Due returns the usage to write at now, nil when there are no queues or
// the last write is more recent than UsageEvery (with force: always
// due). Call it under the lock that guards the queue layer; Write the
// result outside it.
func (u *Usage) Due(now time.Time, force bool) []byte {
	if u.p == nil || (!force && now.Sub(u.saved) < UsageEvery) {
		return nil
	}
	u.saved = now
	data, err := json.Marshal(u.p.Usage())
	if err != nil {
		u.log.Warn("cannot store the queue usage", "err", err)
		return nil
	}
	return data
}

// Write stores usage data from Due (nothing for nil); a failure is logged.
func (u *Usage) Write(ctx context.Context, data []byte) {
	if data == nil {
		return
	}
	if _, err := u.st.Put(ctx, UsageKey, data); err != nil {
		u.log.Warn("cannot store the queue usage", "err", err)
	}
}
