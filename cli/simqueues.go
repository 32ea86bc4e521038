package cli

import (
	"os"
	"slices"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/metrics"
)

// fairShareNone is --fair-share none: the run's queues are measured (the
// summary's per-queue figures and Jain's index) but not scheduled: no queue
// layer, a baseline.
const fairShareNone = "none"

// Values of sim's --queue-from: where a job's queue comes from.
const (
	queueFromQueue = "queue" // the trace's own queue field (jsonl "queue")
	queueFromVC    = "vc"    // Philly's virtual cluster column
	queueFromUser  = "user"  // the job's user
)

// simQueues sets up the teams' queues of a run (docs/QUEUES.md): it reads
// --queues (which wins over queues in --config), names every job's queue
// by --queue-from, and, when no queue is declared, declares one per queue
// name the jobs use (weight 1, no quota). It returns nil when the run has
// no queues: neither a queues file, queues in --config, nor --queue-from.
func simQueues(o *simOptions, jobs []model.JobSpec) (*quota.Config, error) {
	cfg := o.opts.Queues // from --config
	if o.queues != "" {
		data, err := os.ReadFile(o.queues)
		if err != nil {
			return nil, badInput("--queues: %w", err)
		}
		f, err := config.ParseQueuesFile(o.queues, data)
		if err != nil {
			return nil, usageError{err}
		}
		q, err := f.Quota(o.queues)
		if err != nil {
			return nil, usageError{err}
		}
		cfg = &q
	}
	switch o.queueFrom {
	case "", queueFromQueue:
	case queueFromVC, queueFromUser:
		for i := range jobs {
			if o.queueFrom == queueFromVC {
				jobs[i].Queue = jobs[i].Group
			} else {
				jobs[i].Queue = jobs[i].User
			}
		}
	default:
		return nil, badInput("--queue-from %q: want queue, vc or user", o.queueFrom)
	}
	if cfg == nil && o.queueFrom == "" {
		if o.given("fair-share") || o.given("fair-share-half-life") {
			return nil, badInput("--fair-share: the run has no queues; give --queues, queues in --config, or --queue-from")
		}
		return nil, nil
	}
	if cfg == nil {
		cfg = &quota.Config{Queues: namedQueues(jobs)}
	}
	if o.given("fair-share") && o.fairShare != fairShareNone {
		u, err := quota.ParseUsage(o.fairShare)
		if err != nil {
			return nil, badInput("--fair-share %q: want type-weighted, gpu-hours or none", o.fairShare)
		}
		cfg.Usage = u
	}
	if o.given("fair-share-half-life") {
		if o.halfLife < 0 {
			return nil, badInput("--fair-share-half-life %s: must not be negative", o.halfLife)
		}
		cfg.HalfLife = model.Time(o.halfLife.Milliseconds())
	}
	if err := cfg.Validate(); err != nil {
		return nil, badInput("queues: %w", err)
	}
	return cfg, nil
}

// namedQueues declares one queue (weight 1, no quota) per valid queue name
// the jobs use, sorted by name; jobs without one, or with a name that is no
// valid queue name, go to the default queue.
func namedQueues(jobs []model.JobSpec) []quota.Queue {
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Queue != "" && quota.CheckName(j.Queue) == nil {
			seen[j.Queue] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]quota.Queue, len(names))
	for i, n := range names {
		out[i] = quota.Queue{Name: n, Weight: 1}
	}
	return out
}

// setQueues adds the queues' figures to the summary of a run with queues.
func setQueues(sum *metrics.Summary, res *sim.Result) {
	f := res.Fairness
	if f == nil {
		return
	}
	sum.Reclaims = &f.Reclaims
	if f.Valid {
		sum.JainIndex = &f.Jain
	}
	names, weights := make([]string, len(f.Queues)), make([]float64, len(f.Queues))
	for i, q := range f.Queues {
		names[i], weights[i] = q.Name, q.Weight
	}
	sum.Queues = metrics.SummarizeQueues(res.Records, names, weights)
	sum.Queues = slices.DeleteFunc(sum.Queues, func(q metrics.QueueSummary) bool {
		return q.Jobs == 0 && q.Name == quota.DefaultQueue // the implicit default, unused
	})
}
