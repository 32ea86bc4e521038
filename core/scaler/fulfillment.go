package scaler

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// DefaultMaxLoad is seed 001's example desired maximum load.
const DefaultMaxLoad = 0.97

// Fulfillment is seed 001's scaler. Build it with NewFulfillment.
type Fulfillment struct {
	maxLoad float64
	reclaim bool
	h       growHeap
}

// NewFulfillment returns a fulfillment scaler that never fills the cluster
// beyond maxLoad, a fraction in (0, 1]. With reclaim, a waiting job that
// would go to GPUs lent to elastic growth takes them back at once
// (engine.Reclaimer) even when it could run elsewhere; without, it takes
// replicas only when it fits nowhere (seed 001 as written).
func NewFulfillment(maxLoad float64, reclaim bool) (*Fulfillment, error) {
	if !(maxLoad > 0 && maxLoad <= 1) {
		return nil, fmt.Errorf("fulfillment scaler: maximum load must be in (0, 1], got %g", maxLoad)
	}
	return &Fulfillment{maxLoad: maxLoad, reclaim: reclaim}, nil
}

// Reclaims implements engine.Reclaimer.
func (f *Fulfillment) Reclaims() bool { return f.reclaim }

// Name returns "fulfillment".
func (*Fulfillment) Name() string { return "fulfillment" }

// Score is seed 001's fulfillment score of a job at size cur:
// (cur − min)/(max − min), and 1 when min == max.
func Score(spec *model.JobSpec, cur int) float64 {
	if spec.MaxGPUs == spec.MinGPUs {
		return 1
	}
	return float64(cur-spec.MinGPUs) / float64(spec.MaxGPUs-spec.MinGPUs)
}

// Scale implements engine.Scaler: idle GPUs go one replica at a time to the
// job with the lowest score, within the maximum load.
func (f *Fulfillment) Scale(s *model.State, _ model.Time, r *engine.Resizer) {
	total, free := s.Cluster.TotalGPUs(), r.Pool().FreeAll()
	used, limit := total-free, int(math.Floor(f.maxLoad*float64(total)+1e-9))
	f.h.items = f.h.items[:0]
	for _, j := range r.Jobs() {
		if n := r.Size(j); n < j.Spec.MaxGPUs {
			f.h.items = append(f.h.items, growItem{job: j, score: Score(&j.Spec, n)})
		}
	}
	heap.Init(&f.h)
	// Every replica is at least one GPU: stop once none fits.
	for f.h.Len() > 0 && used < limit && free > 0 {
		it := &f.h.items[0]
		j, r1 := it.job, it.job.Spec.Replica()
		if used+r1 > limit || !r.Grow(j, r1) {
			heap.Pop(&f.h) // cannot take one more replica now
			continue
		}
		used, free = used+r1, free-r1
		if n := r.Size(j); n >= j.Spec.MaxGPUs {
			heap.Pop(&f.h)
		} else {
			it.score = Score(&j.Spec, n)
			heap.Fix(&f.h, 0)
		}
	}
}

// Donate implements engine.Donor: one replica from the job with the highest
// score above its minimum among those on a GPU type in types.
func (f *Fulfillment) Donate(_ *model.State, _ model.Time, r *engine.Resizer, _ *model.Job, types engine.TypeSet) bool {
	var best *model.Job
	bestScore := 0.0
	for _, j := range r.Jobs() {
		n := r.Size(j)
		if n-j.Spec.Replica() < j.Spec.MinGPUs || !types.Has(r.Type(j)) {
			continue
		}
		// Highest score, then the later arrival.
		if sc := Score(&j.Spec, n); best == nil || sc > bestScore || (sc == bestScore && j.Seq > best.Seq) {
			best, bestScore = j, sc
		}
	}
	return best != nil && r.Shrink(best, best.Spec.Replica())
}

// growItem is a growth candidate with its current score.
type growItem struct {
	job   *model.Job
	score float64
}

// growHeap orders candidates for growth: lowest score first, then the
// larger per-replica GPU, CPU and memory request, then the earlier arrival.
type growHeap struct{ items []growItem }

func (h *growHeap) Len() int      { return len(h.items) }
func (h *growHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *growHeap) Less(i, j int) bool {
	a, b := h.items[i].job, h.items[j].job
	return cmp.Or(cmp.Compare(h.items[i].score, h.items[j].score),
		cmp.Compare(b.Spec.Replica(), a.Spec.Replica()),
		cmp.Compare(b.Spec.Requests.Get(model.ResourceCPU), a.Spec.Requests.Get(model.ResourceCPU)),
		cmp.Compare(b.Spec.Requests.Get(model.ResourceMemory), a.Spec.Requests.Get(model.ResourceMemory)),
		cmp.Compare(a.Seq, b.Seq)) < 0
}
func (h *growHeap) Push(x any) { h.items = append(h.items, x.(growItem)) }
func (h *growHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}
