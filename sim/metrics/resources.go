package metrics

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// ResourceSample is, from T until the next sample, what jobs hold of each
// resource besides GPUs (in the order of Resources.Names), how many GPUs
// are stranded and how many jobs wait.
type ResourceSample struct {
	T        model.Time
	Stranded int
	Waiting  int
	Used     []int64
}

// Resources is a run's use of the resources besides GPUs that its cluster
// models (model.Cluster.Vectored).
//
// A free GPU is stranded when the other resources left on its node cannot
// serve it at the workload's reference request per GPU, PerGPU: on a node
// with f free GPUs whose free amount of resource r serves
// ⌊free_r ÷ PerGPU_r⌋ GPUs, max(0, f − min_r ⌊free_r ÷ PerGPU_r⌋) GPUs are
// stranded (resources with PerGPU_r = 0 do not strand any).
type Resources struct {
	// Names are the cluster's resources besides GPUs, sorted.
	Names []string
	// Capacity is the cluster's total of each resource.
	Capacity []int64
	// PerGPU is the reference request per GPU of each resource.
	PerGPU []float64
	// Structural is the number of GPUs stranded on the empty cluster:
	// those of nodes whose capacity cannot serve all their GPUs.
	Structural int
	// Samples are the change points of the use and the stranded GPUs.
	Samples []ResourceSample
}

// ReferencePerGPU returns, per resource, the median over reqs of each
// request divided by its GPUs (the nearest-rank median, Percentile 0.5):
// reqs[i] is what one replica of job i asks (nil: nothing) and gpus[i]
// its GPUs per replica. n is the number of resources.
func ReferencePerGPU(n int, reqs []model.Vec, gpus []int) []float64 {
	ref := make([]float64, n)
	vals := make([]float64, len(reqs))
	for r := range ref {
		for i, q := range reqs {
			vals[i] = 0
			if q != nil {
				vals[i] = float64(q[r]) / float64(max(gpus[i], 1))
			}
		}
		slices.Sort(vals)
		ref[r] = Percentile(vals, 0.5)
	}
	return ref
}

// StrandedOn returns how many of free GPUs on a node are stranded when
// the node has avail of each resource left (negative amounts count as
// none): free minus the GPUs that avail serves at perGPU, at least 0.
func StrandedOn(free int, avail model.Vec, perGPU []float64) int {
	serve := free
	for r, p := range perGPU {
		if p <= 0 {
			continue
		}
		k := math.Floor(float64(max(avail[r], 0)) / p)
		if k < float64(serve) {
			serve = int(k)
		}
	}
	return free - serve
}

// Averages are a run's resource figures averaged over time.
type Averages struct {
	// Util is each resource's utilisation, held ÷ capacity, by name
	// (resources without capacity left out).
	Util map[string]float64
	// Stranded is the mean number of stranded GPUs.
	Stranded float64
	// StrandedWaiting is the mean number of stranded GPUs while some job
	// waits, and Waiting how long jobs waited in all (model time); 0 and
	// 0 when no job ever waited.
	StrandedWaiting float64
	Waiting         model.Time
}

// Averages returns the figures of r averaged over time between from and
// to: a sample holds until the next, the last one until to. Before the
// first sample nothing is held, nothing stranded and no job waits. It
// returns nil when to is not after from.
func (r *Resources) Averages(from, to model.Time) *Averages {
	if to <= from {
		return nil
	}
	held := make([]float64, len(r.Names))
	var stranded, strandedWaiting float64
	var waiting model.Time
	for i, s := range r.Samples {
		end := to
		if i+1 < len(r.Samples) {
			end = r.Samples[i+1].T
		}
		span := min(end, to) - max(s.T, from)
		if span <= 0 {
			continue
		}
		d := float64(span)
		stranded += d * float64(s.Stranded)
		if s.Waiting > 0 {
			strandedWaiting += d * float64(s.Stranded)
			waiting += span
		}
		for k, u := range s.Used {
			held[k] += d * float64(u)
		}
	}
	total := float64(to - from)
	a := &Averages{Util: make(map[string]float64, len(r.Names)), Stranded: stranded / total, Waiting: waiting}
	for k, name := range r.Names {
		if r.Capacity[k] > 0 {
			a.Util[name] = held[k] / (total * float64(r.Capacity[k]))
		}
	}
	if waiting > 0 {
		a.StrandedWaiting = strandedWaiting / float64(waiting)
	}
	return a
}

// SetResources adds the resource figures of res to s, a summary of recs
// on a cluster of totalGPUs GPUs: over the same window as gpu_util, from
// the first submission to the last finish. Nothing is added when res is
// nil or no job finished.
func SetResources(s *Summary, recs []JobRecord, totalGPUs int, res *Resources) {
	if res == nil || s.Makespan <= 0 {
		return
	}
	first, last := model.Time(math.MaxInt64), model.Time(math.MinInt64)
	for i := range recs {
		first = min(first, recs[i].Submit)
		if recs[i].Completed() {
			last = max(last, recs[i].Finish)
		}
	}
	a := res.Averages(first, last)
	if a == nil {
		return
	}
	share, structural := a.Stranded/float64(totalGPUs), res.Structural
	s.ResourceUtil, s.StrandedGPUs, s.StrandedGPUShare, s.StructuralStrandedGPUs = a.Util, &a.Stranded, &share, &structural
	if a.Waiting > 0 {
		s.StrandedGPUsWaiting = &a.StrandedWaiting
	}
}
