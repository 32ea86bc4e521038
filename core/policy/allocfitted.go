package policy

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// fittedRound reports whether choose's pairs have an order known without
// their keys this round: Gittins, X bestFits's for the tracked jobs in s
// (fitted: each job that can run has share 1 on its best type, 0
// elsewhere, and weight 0) and every job's credits the last reset's
// (uniform). Then on each type t every pair with a share has the same
// priority, x_jt over credit/(the type's credits), +Inf for a gang taken
// first (gangFirst), and every pair without one the keys (0, 0, 0): the
// stable sort of choosePairs puts a type's gangs with a share first, then
// its other jobs with a share, then the jobs without one, each in arrival
// order (Seq, the order of tracked).
func (a *Alloc) fittedRound(s *model.State) bool {
	return a.Objective == Gittins && a.fitted == s && a.uniform
}

// chooseFitted is choosePairs in a fittedRound, after pinned chose sel:
// the same pairs taken in the same order, without laying them out. A job
// with a share on t has its best type t (share 1), so it is never
// deferred; a job without one is deferred exactly when it runs slower on
// t than on its best type (sharedFaster), and the deferred pass takes, per
// type in a.order, the jobs without a share there that fit, in arrival
// order. A pair choosePairs leaves out (its job chosen, the type's room
// too small) fails fits here: the room only shrinks. So does a job whose
// pair with a share on t was passed because it did not fit: the scans of
// the jobs without a share on t need not skip it.
func (a *Alloc) chooseFitted(sel []*model.Job, types []engine.TypeSet) ([]*model.Job, []engine.TypeSet) {
	a.bucketFitted()
	deferred := false
	for _, t := range a.order {
		if len(sel) == len(a.tracked) {
			break // every job chosen
		}
		if a.remain[t] <= 0 {
			continue // the type is full
		}
		sel, types = a.takeShared(a.firsts[t], t, sel, types)
		sel, types = a.takeShared(a.seconds[t], t, sel, types)
		a.compactOpen()
		for _, i := range a.open {
			if a.remain[t] <= 0 {
				break
			}
			st := a.states[i]
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
		a.compactOpen()
		for _, i := range a.open {
			if st := a.states[i]; a.fits(st, t) {
				sel, types = a.take(st, t, sel, types)
			}
		}
	}
	return sel, types
}

// bucketFitted sorts the tracked jobs not chosen yet into a.firsts and
// a.seconds by the type of their share, in arrival order, and lists them
// all in a.open.
func (a *Alloc) bucketFitted() {
	k := len(a.order)
	if len(a.firsts) != k {
		a.firsts, a.seconds = make([][]int32, k), make([][]int32, k)
	}
	for t := range k {
		a.firsts[t], a.seconds[t] = a.firsts[t][:0], a.seconds[t][:0]
	}
	a.open = a.open[:0]
	for i, st := range a.states {
		if st.picked {
			continue
		}
		a.open = append(a.open, int32(i))
		if !st.asks {
			continue // no share anywhere (it can run nowhere)
		}
		if a.gangFirst(st, 1) {
			a.firsts[st.bestT] = append(a.firsts[st.bestT], int32(i))
		} else {
			a.seconds[st.bestT] = append(a.seconds[st.bestT], int32(i))
		}
	}
}

// takeShared takes, in order, the jobs of list (their share on t) that
// fit on t, until t is full. t is their best type, where they can run:
// only whether they are chosen and the room are tested.
func (a *Alloc) takeShared(list []int32, t int, sel []*model.Job, types []engine.TypeSet) ([]*model.Job, []engine.TypeSet) {
	for _, i := range list {
		if a.remain[t] <= 0 {
			break
		}
		if st := a.states[i]; !st.picked && st.gpus <= a.remain[t] {
			sel, types = a.take(st, t, sel, types)
		}
	}
	return sel, types
}

// compactOpen drops the jobs chosen since from a.open, keeping its order.
func (a *Alloc) compactOpen() {
	kept := a.open[:0]
	for _, i := range a.open {
		if !a.states[i].picked {
			kept = append(kept, i)
		}
	}
	a.open = kept
}
