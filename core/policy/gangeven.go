package policy

import "slices"

// GangEvenJobs is how many gangs and how many single-GPU jobs must have
// finished before Gittins compares their sizes for Alloc.GangProbeEven.
const GangEvenJobs = 10

// sizeClasses keeps the sizes of the finished jobs (seconds at their best
// speed) apart by class, each list ascending: gangs (more than one GPU)
// and single-GPU jobs. Gittins keeps it only with Alloc.GangProbeEven.
type sizeClasses struct {
	gangs, singles []float64
}

// add records a finished job of the given size, a gang or not.
func (c *sizeClasses) add(size float64, gang bool) {
	l := &c.singles
	if gang {
		l = &c.gangs
	}
	i, _ := slices.BinarySearch(*l, size)
	*l = slices.Insert(*l, i, size)
}

// even reports whether the gangs finished so far are no longer than the
// single-GPU jobs: at least GangEvenJobs of each, and the gangs' median
// size (the upper one of an even count) at most the single-GPU jobs'.
func (c *sizeClasses) even() bool {
	if len(c.gangs) < GangEvenJobs || len(c.singles) < GangEvenJobs {
		return false
	}
	return c.gangs[len(c.gangs)/2] <= c.singles[len(c.singles)/2]
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
