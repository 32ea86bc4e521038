package policy

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Queues of HLAS (seed 003): new jobs enter Q1; demoted jobs go to Q2.
const (
	Q1 = 0
	Q2 = 1
)

// HLAS is seed 003's heterogeneity-aware least-attained-service policy; with
// Blind set it is LAS, the same two queues with every GPU type weighing 1.
type HLAS struct {
	// PriorityRatio is priority_threshold_ratio: a running job whose
	// attained service exceeds the running jobs' average times this ratio is
	// demoted to Q2 (seed 003, S1).
	PriorityRatio float64
	// StarveRatio is starve_threshold_ratio: a waiting Q2 job whose waiting
	// time over running time exceeds it returns to Q1 with its history
	// cleared (seed 003, S2).
	StarveRatio float64
	// Blind weighs every GPU type 1 (LAS) instead of its rated TFLOPS.
	Blind bool

	keys []hlasKey
}

type hlasKey struct {
	queue  int
	p      float64
	submit model.Time
	job    *model.Job
}

// Name returns "hlas", or "las" when Blind.
func (h *HLAS) Name() string {
	if h.Blind {
		return "las"
	}
	return "hlas"
}

// Order implements engine.QueuePolicy: demotions (stops, seed 003 S1),
// promotions of starving Q2 jobs (S2), then the waiting jobs of Q1 by
// attained service and submit time (S3, skipping jobs that do not fit), and
// after them those of Q2 in the same order so that idle GPUs are used.
func (h *HLAS) Order(s *model.State, now model.Time, buf []*model.Job) engine.Order {
	ord := engine.Order{Backfill: true}
	weight := h.weight(s.Cluster)
	h.demote(s, now, weight, &ord)
	h.keys = h.keys[:0]
	for _, j := range s.Waiting() {
		k := hlasKey{queue: j.Queue, submit: j.Spec.Submit, job: j}
		if k.queue == Q2 && h.starving(j, now) {
			k.queue = Q1 // history cleared: P = 0
			ord.Updates = append(ord.Updates, engine.Update{Job: j, Queue: Q1, Reset: true})
		} else if len(j.Periods) > 0 {
			k.p = j.Attained(now, s.Cluster, weight)
		}
		h.keys = append(h.keys, k)
	}
	slices.SortStableFunc(h.keys, func(a, b hlasKey) int {
		if c := cmp.Compare(a.queue, b.queue); c != 0 {
			return c
		}
		if c := cmp.Compare(a.p, b.p); c != 0 {
			return c
		}
		return cmp.Compare(a.submit, b.submit) // then arrival rank: the sort is stable
	})
	for _, k := range h.keys {
		if k.queue == Q1 {
			ord.Claim++
		}
		buf = append(buf, k.job)
	}
	ord.Jobs = buf
	return ord
}

// demote stops every running job whose attained service exceeds the average
// of the running jobs times PriorityRatio and puts it in Q2 (seed 003, S1).
func (h *HLAS) demote(s *model.State, now model.Time, weight func(int) float64, ord *engine.Order) {
	run := s.Running()
	if len(run) == 0 {
		return
	}
	ps := make([]float64, len(run))
	var sum float64
	for i, j := range run {
		ps[i] = j.Attained(now, s.Cluster, weight)
		sum += ps[i]
	}
	limit := sum / float64(len(run)) * h.PriorityRatio
	for i, j := range run {
		if ps[i] <= limit {
			continue
		}
		ord.Stop = append(ord.Stop, j)
		if j.Queue != Q2 {
			ord.Updates = append(ord.Updates, engine.Update{Job: j, Queue: Q2})
		}
	}
}

// starving reports whether a waiting job's waiting time over its running
// time exceeds StarveRatio (seed 003, S2).
func (h *HLAS) starving(j *model.Job, now model.Time) bool {
	ran := j.RunTime(now)
	return ran > 0 && float64(now-j.Queued) > h.StarveRatio*float64(ran)
}

func (h *HLAS) weight(c *model.Cluster) func(int) float64 {
	if h.Blind {
		return func(int) float64 { return 1 }
	}
	return func(t int) float64 { return c.Types[t].TFLOPS }
}
