package policy

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// fifoAllocate is Gavel's FIFO allocation (policies/fifo.py, FIFOPolicy,
// "base" mode; "perf" mode with Perf), replayed step for step so that the
// same trace gives the same allocations:
//
//  1. Jobs keep the type they were given (base mode; perf mode starts
//     afresh every time). In arrival order of the allocated jobs, each
//     job that ended hands its type to the head of the queue of
//     unallocated jobs (arrival order) if the head fits in what is left of
//     that type and can run there; every job that is still active takes
//     its GPUs from what is left.
//  2. The types with GPUs left, in name order, then serve the queue in
//     order: the head gets a type among those with room for it (none:
//     FIFO stops), its GPUs are taken, and a type with none left is dropped.
//
// Which type: perf mode takes the fastest. Base mode draws an index among
// the types with room with Python's random.randrange (pyRand, seeded like
// Gavel's), but then — Gavel's code uses the loop variable of the scan
// instead of the drawn index — gives the job the last type in the list of
// types with GPUs left, and drops the drawn type when the given one has no
// GPU left. This is what Gavel's `fifo` does, and so what its figures
// measure; gpusched reproduces it rather than Gavel's comment.
func (a *Alloc) fifoAllocate(s *model.State) {
	c := s.Cluster
	avail := make([]int, len(c.Types))
	for t := range avail {
		avail[t] = c.TypeGPUs(t)
	}
	if a.Perf {
		clear(a.fifoType)
	}
	var queue []*model.Job
	for _, j := range a.tracked {
		if _, ok := a.fifoType[j]; !ok {
			queue = append(queue, j)
		}
	}
	allocated := make([]*model.Job, 0, len(a.fifoType))
	for j := range a.fifoType {
		allocated = append(allocated, j)
	}
	slices.SortFunc(allocated, func(x, y *model.Job) int { return x.Seq - y.Seq })
	for _, j := range allocated {
		t := a.fifoType[j]
		if _, active := a.jobs[j]; active {
			avail[t] -= a.size(j)
			continue
		}
		if len(queue) > 0 {
			if h := queue[0]; a.size(h) <= avail[t] && a.jobs[h].speed[t] > 0 {
				queue = queue[1:]
				a.fifoType[h] = t
				avail[t] -= a.size(h)
			}
		}
		delete(a.fifoType, j)
	}
	a.fifoServe(c, queue, avail)
	for _, j := range a.tracked {
		st := a.jobs[j]
		st.x = make([]float64, len(c.Types))
		if t, ok := a.fifoType[j]; ok {
			st.x[t] = 1
		}
	}
}

// fifoServe is step 2 of fifoAllocate.
func (a *Alloc) fifoServe(c *model.Cluster, queue []*model.Job, avail []int) {
	var types []int
	for t := range avail {
		if avail[t] > 0 {
			types = append(types, t)
		}
	}
	slices.SortFunc(types, func(x, y int) int { return cmp.Compare(c.Types[x].Name, c.Types[y].Name) })
	for len(queue) > 0 && len(types) > 0 {
		h := queue[0]
		queue = queue[1:]
		var room, at []int
		for i, t := range types {
			if avail[t] >= a.size(h) {
				room, at = append(room, t), append(at, i)
			}
		}
		if len(room) == 0 {
			return
		}
		st := a.jobs[h]
		var t, drop int
		if a.Perf {
			drop = 0
			t = room[0]
			for i, u := range room {
				if st.speed[u] > st.speed[t] {
					t, drop = u, i
				}
			}
		} else {
			drop = a.rng.randrange(len(room))
			t = types[len(types)-1]
		}
		if st.speed[t] <= 0 {
			continue
		}
		a.fifoType[h] = t
		avail[t] -= a.size(h)
		if avail[t] == 0 {
			types = slices.Delete(types, at[drop], at[drop]+1)
		}
	}
}
