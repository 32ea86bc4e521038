package policy

import "container/heap"

// GangEvenJobs is how many gangs and how many single-GPU jobs must have
// finished before Gittins compares their sizes for Alloc.GangProbeEven.
const GangEvenJobs = 10

// sizeClasses keeps the upper medians of the finished jobs' sizes
// (seconds at their best speed) apart by class: gangs (more than one GPU)
// and single-GPU jobs. Gittins keeps it only with Alloc.GangProbeEven.
type sizeClasses struct {
	gangs, singles upperMedian
}

// add records a finished job of the given size, a gang or not.
func (c *sizeClasses) add(size float64, gang bool) {
	if gang {
		c.gangs.add(size)
		return
	}
	c.singles.add(size)
}

// even reports whether the gangs finished so far are no longer than the
// single-GPU jobs: at least GangEvenJobs of each, and the gangs' upper
// median size at most the single-GPU jobs'.
func (c *sizeClasses) even() bool {
	if c.gangs.n() < GangEvenJobs || c.singles.n() < GangEvenJobs {
		return false
	}
	return c.gangs.get() <= c.singles.get()
}

// upperMedian keeps the upper median of the values added so far — the
// value at index ⌊n/2⌋ of the n values sorted ascending — in O(log n) per
// value: low holds the ⌊n/2⌋ smallest, negated (a min-heap of the
// negations is a max-heap of the values), and high the rest, whose least
// is the upper median. Values must not be NaN.
type upperMedian struct {
	low, high floatHeap
}

// add records v.
func (m *upperMedian) add(v float64) {
	if len(m.high) > 0 && v < m.high[0] {
		heap.Push(&m.low, -v)
	} else {
		heap.Push(&m.high, v)
	}
	half := m.n() / 2
	switch {
	case len(m.low) > half:
		heap.Push(&m.high, -heap.Pop(&m.low).(float64))
	case len(m.low) < half:
		heap.Push(&m.low, -heap.Pop(&m.high).(float64))
	}
}

// n is the number of values added.
func (m *upperMedian) n() int { return len(m.low) + len(m.high) }

// get returns the upper median; there must be at least one value.
func (m *upperMedian) get() float64 { return m.high[0] }

// floatHeap is a min-heap of float64 for container/heap.
type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push appends x, a float64 (container/heap).
func (h *floatHeap) Push(x any) { *h = append(*h, x.(float64)) }

// Pop removes and returns the last value (container/heap).
func (h *floatHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// probeLight returns the gang probe's quantile while every job fits (the
// priority backlog's β = 0): GangProbeEven where Gittins has it and the
// gangs finished so far are no longer than the single-GPU jobs
// (sizeClasses.even), GangProbeLight otherwise.
//
// Where a gang's GPU count says nothing of its size (Gavel's generator
// draws a job's duration independently of its GPU count), a longer probe
// gives more gangs of moderate size the chance to finish before they fall
// behind the single-GPU jobs; where gangs are longer (Philly's and
// Pollux's traces, whose gangs' median is 7 to 14 times the single-GPU
// jobs') it would only keep single-GPU jobs waiting behind long gangs, and
// the probe is left as it is (docs/EXPERIMENTS.md, issue 29, eighth
// session).
func (a *Alloc) probeLight() float64 {
	if a.Objective == Gittins && a.GangProbeEven > 0 && a.sizes.even() {
		return a.GangProbeEven
	}
	return a.GangProbeLight
}

// AdvantageCap bounds a job's comparative advantage (advantage).
const AdvantageCap = 8

// advantage returns a job's comparative advantage from its speeds per
// type: its best speed over its second-best, at most AdvantageCap
// (AdvantageCap where it runs on one type only).
func advantage(speed []float64) float64 {
	var b1, b2 float64
	for _, v := range speed {
		if v > b1 {
			b1, b2 = v, b1
		} else if v > b2 {
			b2 = v
		}
	}
	if b2 <= 0 {
		return AdvantageCap
	}
	return min(b1/b2, AdvantageCap)
}

// advantageOn reports whether Gittins's advantage weight (AdvantageEven)
// applies in a computation at priority backlog power beta: only while
// every job fits (beta 0) and the gangs finished so far are no longer than
// the single-GPU jobs (sizeClasses.even). Gavel's max-sum gains on the
// gavel-multi families by running the type-bound gangs first; where gangs
// are longer (Philly's and Pollux's traces) the gate stays shut and the
// Gittins order is kept (docs/EXPERIMENTS.md, issue 29, ninth session).
func (a *Alloc) advantageOn(beta float64) bool {
	return a.Objective == Gittins && a.AdvantageEven > 0 && beta == 0 && a.sizes.even()
}
