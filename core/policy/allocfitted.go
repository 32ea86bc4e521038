package policy

import (
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// fittedRound reports whether choose's pairs have an order known without
// their keys this round: Gittins, X bestFits's for the tracked jobs in s
// (fitted: each job that can run has share 1 on its best type, 0
// elsewhere, and weight 0) and every job's credits the last reset's
// (uniform). Then on each type t every pair with a share has the same
// priority, x_jt over credit/(the type's credits), +Inf for a gang taken
// first (gangFirst, which is gangShare here: the yield is 0), and every
// pair without one the keys (0, 0, 0): the stable sort of choosePairs puts a type's gangs with a share first, then
// its other jobs with a share, then the jobs without one, each in arrival
// order (Seq, the order of tracked).
func (a *Alloc) fittedRound(s *model.State) bool {
	return a.Objective == Gittins && a.fitted == s && a.uniform
}

// chooseFitted is choosePairs in a fittedRound, after pinned chose sel:
// the same pairs taken in the same order, without laying them out. The
// jobs with a share on t are a.shared[t], kept from round to round. Such
// a job has its best type t (share 1), so it is never deferred; a job
// without one is deferred exactly when it runs slower on t than on its
// best type (sharedFaster), and the deferred pass takes, per type in
// a.order, the jobs without a share there that fit, in arrival order. A
// pair choosePairs leaves out (its job chosen, the type's room too small)
// fails fits here: the room only shrinks. So does a job whose pair with a
// share on t was passed because it did not fit: the scans of the jobs
// without a share on t need not skip it.
//
// When every type has room for all the jobs that ask for it (allFit),
// the lists take every such job, and the scans of the others are skipped:
// they would take none (see allFit).
func (a *Alloc) chooseFitted(sel []*model.Job, types []engine.TypeSet) ([]*model.Job, []engine.TypeSet) {
	if a.sharedDup {
		a.rebuildShared() // in tracked's order, which the kept lists may not follow among equal Seqs
	}
	if a.allFit() {
		for _, t := range a.order {
			sel, types = a.takeShared(a.shared[t][0], t, sel, types)
			sel, types = a.takeShared(a.shared[t][1], t, sel, types)
		}
		return sel, types
	}
	a.open = a.open[:0]
	built := false // a.open holds the jobs not chosen yet
	deferred := false
	for _, t := range a.order {
		if len(sel) == len(a.tracked) {
			break // every job chosen
		}
		if a.remain[t] <= 0 {
			continue // the type is full
		}
		sel, types = a.takeShared(a.shared[t][0], t, sel, types)
		sel, types = a.takeShared(a.shared[t][1], t, sel, types)
		a.openJobs(&built)
		for _, st := range a.open {
			if a.remain[t] <= 0 {
				break
			}
			if !a.fits(st, t) {
				continue
			}
			if a.sharedFaster(st, t) {
				deferred = true
				continue
			}
			sel, types = a.take(st, t, sel, types)
		}
	}
	if !deferred {
		return sel, types
	}
	for _, t := range a.order {
		a.openJobs(&built)
		for _, st := range a.open {
			if a.fits(st, t) {
				sel, types = a.take(st, t, sel, types)
			}
		}
	}
	return sel, types
}

// allFit reports whether, after pinned, each type has more GPUs left than
// the jobs that ask for it (Alloc.demand, no GPU count negative) ask for
// in all. Then takeShared takes every job of a type's lists not chosen
// yet, and the room never runs out. A job not chosen after a type's lists
// either cannot run anywhere (best 0: it fits no type) or asks for a type
// u later in a.order, where it runs faster than on the type t at hand
// (bestT is the first of a.order with its best speed): its share is on u,
// so sharedFaster defers it on t, and it is taken on u. The deferred pass
// then finds every job that can run chosen.
func (a *Alloc) allFit() bool {
	if a.negative > 0 {
		return false
	}
	for t, d := range a.demand {
		if d >= a.remain[t] {
			return false
		}
	}
	return true
}

// openJobs sets a.open to the tracked jobs not chosen yet, by Seq: from
// a.states the first time (built false), then by dropping those chosen
// since.
func (a *Alloc) openJobs(built *bool) {
	if !*built {
		for _, st := range a.states {
			if !a.chosen(st) {
				a.open = append(a.open, st)
			}
		}
		*built = true
		return
	}
	kept := a.open[:0]
	for _, st := range a.open {
		if !a.chosen(st) {
			kept = append(kept, st)
		}
	}
	a.open = kept
}

// takeShared takes, in order, the jobs of list (their share on t) not
// chosen yet that fit on t, until t is full. t is their best type, where
// they can run: only whether they are chosen and the room are tested.
func (a *Alloc) takeShared(list []*allocJob, t int, sel []*model.Job, types []engine.TypeSet) ([]*model.Job, []engine.TypeSet) {
	for _, st := range list {
		if a.remain[t] <= 0 {
			break
		}
		if !a.chosen(st) && st.gpus <= a.remain[t] {
			sel, types = a.take(st, t, sel, types)
		}
	}
	return sel, types
}

// sharedList returns the list of a.shared that st belongs in while it
// asks for its best type: by gangShare, which is gangFirst in every
// fittedRound, where the yield is 0.
func (a *Alloc) sharedList(st *allocJob) *[]*allocJob {
	if a.gangShare(st, 1) {
		return &a.shared[st.bestT][0]
	}
	return &a.shared[st.bestT][1]
}

// share puts st, which now asks for its best type, into a.shared (Gittins
// only; not while sharedStale).
func (a *Alloc) share(st *allocJob) {
	if a.Objective != Gittins || a.sharedStale {
		return
	}
	l := a.sharedList(st)
	if n := len(*l); n == 0 || (*l)[n-1].job.Seq < st.job.Seq {
		*l = append(*l, st) // the common case: it arrived last
		return
	}
	i, found := slices.BinarySearchFunc(*l, st.job.Seq, bySeq)
	a.sharedDup = a.sharedDup || found
	*l = slices.Insert(*l, i, st)
}

// unshare takes st, which no longer asks for its best type as it did,
// out of a.shared (Gittins only; not while sharedStale).
func (a *Alloc) unshare(st *allocJob) {
	if a.Objective != Gittins || a.sharedStale {
		return
	}
	l := a.sharedList(st)
	i, _ := slices.BinarySearchFunc(*l, st.job.Seq, bySeq)
	for i < len(*l) && (*l)[i] != st && (*l)[i].job.Seq == st.job.Seq {
		i++ // another job of the same Seq
	}
	if i == len(*l) || (*l)[i] != st {
		panic("policy: job " + st.job.Spec.ID + " missing from its type's list")
	}
	*l = slices.Delete(*l, i, i+1)
}

// rebuildShared sets a.shared afresh from the tracked jobs, in their
// order, after compute's pass over every job's speeds, and when two of a
// list's jobs have the same Seq (sharedDup).
func (a *Alloc) rebuildShared() {
	a.sharedStale, a.sharedDup = false, false
	if a.Objective != Gittins {
		return
	}
	for t := range a.shared {
		a.shared[t][0], a.shared[t][1] = a.shared[t][0][:0], a.shared[t][1][:0]
	}
	for _, st := range a.states {
		if st.asks {
			l := a.sharedList(st)
			if n := len(*l); n > 0 && (*l)[n-1].job.Seq == st.job.Seq {
				a.sharedDup = true
			}
			*l = append(*l, st)
		}
	}
}

func bySeq(st *allocJob, seq int) int { return st.job.Seq - seq }
