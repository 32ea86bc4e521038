package quota

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// DefaultQueue is the queue of jobs that name none (Config.Default's
// default).
const DefaultQueue = "default"

// MaxQueues bounds the number of queues of a configuration.
const MaxQueues = 1024

// Queue is one team's queue.
type Queue struct {
	// Name identifies the queue: 1–63 letters, digits, '.', '_' or '-'.
	Name string
	// Quota is the guaranteed number of GPUs per GPU type name, e.g.
	// {"v100": 16, "k80": 32}: the queue's jobs may always use that many
	// GPUs of the type, reclaiming them from borrowers. A type the cluster
	// does not have is ignored.
	Quota map[string]int
	// Weight is the queue's share of what is idle (fair share): queues
	// borrow in proportion to their weights. It must be positive.
	Weight float64
	// Limit, when it has an entry for a type, caps the GPUs of that type
	// the queue's jobs may hold, borrowed ones included. It is at least
	// the quota.
	Limit map[string]int
	// ResourceLimit, when it has an entry for a resource besides GPUs
	// that the cluster models (model.ResourceCPU in millicores,
	// model.ResourceMemory in bytes, a named resource), caps what the
	// queue's running jobs ask of it in all: each job its request per
	// replica times its GPUs over its replica's GPUs. A resource the
	// cluster does not model is not limited.
	ResourceLimit map[string]int64
}

// Usage says how a queue's fair-share usage is measured.
type Usage uint8

// Usage measures.
const (
	// UsageTypeWeighted weighs each GPU-hour by the GPU type's speed for
	// the job over the job's speed on the cluster's fastest type.
	UsageTypeWeighted Usage = iota
	// UsageGPUHours counts every GPU-hour alike.
	UsageGPUHours
)

// String returns the usage's name as the configuration file spells it.
func (u Usage) String() string {
	if u == UsageGPUHours {
		return "gpu-hours"
	}
	return "type-weighted"
}

// ParseUsage reads a usage name: "type-weighted" (or "") or "gpu-hours".
func ParseUsage(s string) (Usage, error) {
	switch s {
	case "", "type-weighted":
		return UsageTypeWeighted, nil
	case "gpu-hours":
		return UsageGPUHours, nil
	}
	return 0, fmt.Errorf("fair-share usage %q: want type-weighted or gpu-hours", s)
}

// Config is the queue layer's configuration.
type Config struct {
	// Queues are the declared queues, in order (the order breaks ties of
	// fair share).
	Queues []Queue
	// Usage is how fair-share usage is measured.
	Usage Usage
	// Default is the queue of jobs whose queue is not declared; empty
	// means DefaultQueue. It is added, with weight 1 and neither quota nor
	// limit, when Queues does not declare it.
	Default string
	// HalfLife, when positive, makes usage decay: a GPU-hour used HalfLife
	// ago counts half (Slurm's PriorityDecayHalfLife). Zero: usage never
	// decays.
	HalfLife model.Time
}

// Validate reports the first problem of c, naming the queue and field.
func (c Config) Validate() error {
	if len(c.Queues) > MaxQueues {
		return fmt.Errorf("queues: %d declared, at most %d", len(c.Queues), MaxQueues)
	}
	seen := map[string]bool{}
	for i, q := range c.Queues {
		where := fmt.Sprintf("queues[%d]", i)
		if q.Name != "" {
			where = "queue " + q.Name
		}
		if err := CheckName(q.Name); err != nil {
			return fmt.Errorf("%s: name: %w", where, err)
		}
		if seen[q.Name] {
			return fmt.Errorf("%s: declared twice", where)
		}
		seen[q.Name] = true
		if !(q.Weight > 0) || math.IsInf(q.Weight, 1) {
			return fmt.Errorf("%s: weight %v: want a positive number", where, q.Weight)
		}
		if err := checkCounts(q.Quota); err != nil {
			return fmt.Errorf("%s: quota: %w", where, err)
		}
		if err := checkCounts(q.Limit); err != nil {
			return fmt.Errorf("%s: limit: %w", where, err)
		}
		for t, l := range q.Limit {
			if l < q.Quota[t] {
				return fmt.Errorf("%s: limit %s: %d is below its quota of %d", where, t, l, q.Quota[t])
			}
		}
		for _, r := range slices.Sorted(maps.Keys(q.ResourceLimit)) {
			if r == "" || q.ResourceLimit[r] < 0 {
				return fmt.Errorf("%s: resource limit %q: want a resource name and an amount ≥ 0", where, r)
			}
		}
	}
	if c.HalfLife < 0 || c.HalfLife > model.Horizon {
		return fmt.Errorf("fair-share half-life %ss: want 0 (no decay) or a positive duration", c.HalfLife.SecondsString())
	}
	if c.Default != "" {
		if err := CheckName(c.Default); err != nil {
			return fmt.Errorf("default queue: %w", err)
		}
	}
	return nil
}

// CheckName reports whether s is a valid queue name.
func CheckName(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > 63 {
		return fmt.Errorf("%q: longer than 63 bytes", s[:63]+"…")
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}); i >= 0 {
		return fmt.Errorf("%q: only letters, digits, '.', '_' and '-' are allowed", s)
	}
	return nil
}

// checkCounts checks a map of GPU counts per type.
func checkCounts(m map[string]int) error {
	for _, t := range slices.Sorted(maps.Keys(m)) {
		if t == "" {
			return errors.New("empty GPU type name")
		}
		if n := m[t]; n < 0 || n > 1<<20 {
			return fmt.Errorf("%s: %d GPUs, want 0..%d", t, n, 1<<20)
		}
	}
	return nil
}

// withDefault returns the queues with the default queue appended when it
// is not declared, and its index.
func (c Config) withDefault() ([]Queue, int) {
	def := c.Default
	if def == "" {
		def = DefaultQueue
	}
	qs := slices.Clone(c.Queues)
	if i := slices.IndexFunc(qs, func(q Queue) bool { return q.Name == def }); i >= 0 {
		return qs, i
	}
	return append(qs, Queue{Name: def, Weight: 1}), len(qs)
}
