package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
)

// QueuesSpec is the queue part of a scheduler configuration file
// (docs/CONFIG.md, docs/QUEUES.md): the teams' queues, how fair-share usage
// is measured, and the default queue. It is what `sim --queues FILE`
// reads, and SchedFile embeds it, so the same keys work in --config.
type QueuesSpec struct {
	// Queues are the teams' queues, in order (the order breaks ties of
	// fair share).
	Queues []QueueSpec `json:"queues,omitempty"`
	// FairShare is how usage is measured: "type-weighted" (the default)
	// or "gpu-hours".
	FairShare string `json:"fair_share,omitempty"`
	// DefaultQueue is the queue of jobs that name none; it exists (weight
	// 1, no quota) even when not declared. Empty: "default".
	DefaultQueue string `json:"default_queue,omitempty"`
	// FairShareHalfLife makes usage decay, as a duration ("6h"): a
	// GPU-hour used that long ago counts half. Empty or "0": no decay.
	FairShareHalfLife string `json:"fair_share_half_life,omitempty"`
}

// QueueSpec is one entry of the queues list.
type QueueSpec struct {
	Name string `json:"name"`
	// Quota is the guaranteed GPUs per GPU type, e.g. {v100: 16, k80: 32}.
	Quota map[string]int `json:"quota,omitempty"`
	// Weight is the queue's share of idle GPUs; nil means 1.
	Weight *float64 `json:"weight,omitempty"`
	// Limit caps the GPUs per type the queue may hold (at least its quota).
	Limit map[string]int `json:"limit,omitempty"`
	// ResourceLimit caps what the queue's running jobs ask in all of
	// resources besides GPUs, e.g. {cpu: 256, memory: 2Ti}.
	ResourceLimit map[string]Amount `json:"resource_limit,omitempty"`
	// Users are the users whose jobs go to this queue by default and who
	// may submit to it and see its jobs (the service, docs/SECURITY.md).
	Users []string `json:"users,omitempty"`
}

// ParseQueuesFile decodes a queues file (`sim --queues`): the keys queues,
// fair_share and default_queue of a scheduler configuration file. name is
// used only in error messages.
func ParseQueuesFile(name string, data []byte) (*QueuesSpec, error) {
	f, err := decodeStrict[QueuesSpec](name, data)
	if err != nil {
		return nil, err
	}
	if _, err := f.Quota(name); err != nil {
		return nil, err
	}
	return f, nil
}

// Declared reports whether the spec declares queues or queue settings.
func (q *QueuesSpec) Declared() bool {
	return len(q.Queues) > 0 || q.FairShare != "" || q.DefaultQueue != "" || q.FairShareHalfLife != ""
}

// Quota returns the queue layer's configuration, checked; errors name the
// file and the field ("NAME: queues[1].weight: ...").
func (q *QueuesSpec) Quota(name string) (quota.Config, error) {
	var cfg quota.Config
	u, err := quota.ParseUsage(q.FairShare)
	if err != nil {
		return cfg, fieldError(name, "fair_share", "%q: want type-weighted or gpu-hours", q.FairShare)
	}
	cfg.Usage, cfg.Default = u, q.DefaultQueue
	if q.FairShareHalfLife != "" {
		d, err := time.ParseDuration(q.FairShareHalfLife)
		if err != nil || d < 0 {
			return cfg, fieldError(name, "fair_share_half_life", "%q: want a duration such as 6h, or 0 for no decay", q.FairShareHalfLife)
		}
		cfg.HalfLife = model.Time(d.Milliseconds())
	}
	if q.DefaultQueue != "" {
		if err := quota.CheckName(q.DefaultQueue); err != nil {
			return cfg, fieldError(name, "default_queue", "%v", err)
		}
	}
	seen := map[string]int{}
	for i, qs := range q.Queues {
		field := fmt.Sprintf("queues[%d]", i)
		if err := quota.CheckName(qs.Name); err != nil {
			return cfg, fieldError(name, field+".name", "%v", err)
		}
		if j, ok := seen[qs.Name]; ok {
			return cfg, fieldError(name, field+".name", "%q is also queues[%d]", qs.Name, j)
		}
		seen[qs.Name] = i
		w := 1.0
		if qs.Weight != nil {
			w = *qs.Weight
		}
		if !(w > 0) || math.IsInf(w, 1) {
			return cfg, fieldError(name, field+".weight", "must be a positive number, got %v", w)
		}
		if err := checkGPUCounts(name, field+".quota", qs.Quota); err != nil {
			return cfg, err
		}
		if err := checkGPUCounts(name, field+".limit", qs.Limit); err != nil {
			return cfg, err
		}
		for t, l := range qs.Limit {
			if l < qs.Quota[t] {
				return cfg, fieldError(name, field+".limit."+t, "%d is below the quota of %d", l, qs.Quota[t])
			}
		}
		for k, u := range qs.Users {
			if err := CheckUserName(u); err != nil {
				return cfg, fieldError(name, fmt.Sprintf("%s.users[%d]", field, k), "%v", err)
			}
		}
		rl, err := resourceLimit(name, field+".resource_limit", qs.ResourceLimit)
		if err != nil {
			return cfg, err
		}
		cfg.Queues = append(cfg.Queues, quota.Queue{Name: qs.Name, Quota: qs.Quota, Weight: w, Limit: qs.Limit, ResourceLimit: rl})
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, nil
}

// checkGPUCounts checks a map of GPU counts per type name.
func checkGPUCounts(name, field string, m map[string]int) error {
	for _, t := range slices.Sorted(mapKeys(m)) {
		if t == "" || strings.ToLower(t) != t {
			return fieldError(name, field, "GPU type %q: want a lower-case type name such as v100", t)
		}
		if n := m[t]; n < 0 || n > 1<<20 {
			return fieldError(name, field+"."+t, "%d GPUs: want 0..%d", n, 1<<20)
		}
	}
	return nil
}

// mapKeys iterates the keys of m.
func mapKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// QueueUsers returns the users queue name lists (nil for a queue that
// lists none or is not declared, and without queues).
func (q *QueuesSpec) QueueUsers(name string) []string {
	if q == nil {
		return nil
	}
	for _, qs := range q.Queues {
		if qs.Name == name {
			return qs.Users
		}
	}
	return nil
}

// UserQueues returns, per user, the queues that list them, in file order:
// the first is the user's default queue.
func (q *QueuesSpec) UserQueues() map[string][]string {
	out := map[string][]string{}
	for _, qs := range q.Queues {
		for _, u := range qs.Users {
			if !slices.Contains(out[u], qs.Name) {
				out[u] = append(out[u], qs.Name)
			}
		}
	}
	return out
}

// CheckUserName reports whether s is a valid user name: 1–64 letters,
// digits, '.', '_', '-' or '@'.
func CheckUserName(s string) error {
	if s == "" {
		return fmt.Errorf("empty user name")
	}
	if len(s) > 64 {
		return fmt.Errorf("user name longer than 64 bytes")
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@", r))
	}); i >= 0 {
		return fmt.Errorf("user name %q: only letters, digits, '.', '_', '-' and '@' are allowed", s)
	}
	return nil
}

// resourceLimit reads a queue's resource_limit: amounts by resource name
// (not a GPU: those are limit's), each in its unit.
func resourceLimit(file, field string, m map[string]Amount) (map[string]int64, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]int64, len(m))
	for _, r := range slices.Sorted(maps.Keys(m)) {
		if err := CheckResourceName(r); err != nil {
			return nil, fieldError(file, field+"."+r, "%v", err)
		}
		v, err := m[r].Value(r)
		if err != nil {
			return nil, fieldError(file, field+"."+r, "%v", err)
		}
		out[r] = v
	}
	return out, nil
}
