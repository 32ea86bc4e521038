package engine

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// victimOrder decides, once per round, how the stop candidates
// (Plan.Preempt: the jobs of Order.Stop, then the running jobs that a
// preemptive order left out) are released for a job that claims their GPUs.
// Without a checkpoint among them they are released all at once and the
// placer's choice of GPUs decides which are stopped; with one, they are
// ordered by lost work and released one at a time (claimStepwise).
type victimOrder struct {
	nStop    int   // the leading candidates that came from Order.Stop
	decided  bool  // whether this round's candidates have been looked at
	stepwise bool  // candidates are released one at a time, in order
	force    bool  // Order.Stepwise: one at a time even without checkpoints
	held     []int // stepwise: per GPU type, GPUs of the candidates not yet released
	keys     []victimKey
}

// victimKey sorts stop candidates: least lost work first, then rank.
type victimKey struct {
	lost model.Time
	rank int
	job  *model.Job
}

// reset starts a round on a cluster of types GPU types whose first nStop
// candidates come from Order.Stop.
func (v *victimOrder) reset(nStop, types int, force bool) {
	v.nStop, v.decided, v.stepwise, v.force = nStop, false, false, force
	v.held = slices.Grow(v.held[:0], types)[:types]
	clear(v.held)
}

// order decides how the candidates not yet released, cands =
// all[first:], are released at now and reports whether stepwise. When at
// least one of them has a checkpoint (model.Job.Checkpoint >= 0), it sorts
// cands in place by ascending lost work (model.Job.LostWork), ties by the
// policy's order: the Order.Stop jobs in the order the policy gave them,
// then the jobs a preemptive order left out, lowest-ranked first. Without a
// checkpoint it is stepwise only when the order asks for it
// (Order.Stepwise), in the policy's order alone.
func (v *victimOrder) order(c *model.Cluster, all []*model.Job, first int, now model.Time) bool {
	cands := all[first:]
	ckpt := slices.ContainsFunc(cands, func(j *model.Job) bool { return j.Checkpoint >= 0 })
	if !ckpt && !v.force {
		return false
	}
	v.keys = v.keys[:0]
	for i, j := range cands {
		v.count(c, j, 1)
		rank := first + i
		if rank >= v.nStop {
			rank = v.nStop + len(all) - 1 - rank // left out by a preemptive order: last ranked first
		}
		k := victimKey{rank: rank, job: j}
		if ckpt {
			k.lost = j.LostWork(now)
		}
		v.keys = append(v.keys, k)
	}
	slices.SortFunc(v.keys, func(a, b victimKey) int {
		return cmp.Or(cmp.Compare(a.lost, b.lost), cmp.Compare(a.rank, b.rank))
	})
	for i, k := range v.keys {
		cands[i] = k.job
	}
	clear(v.keys) // hold no job past the round
	return true
}

// count adds d to the held GPUs of each type of candidate j's allocation.
func (v *victimOrder) count(c *model.Cluster, j *model.Job, d int) {
	for _, g := range j.Alloc {
		v.held[c.TypeOf(g)] += d
	}
}

// claim places j, which did not fit on free GPUs, on GPUs that stop
// candidates not yet released (plan.Preempt[e.released:]) give back. The
// first claim of a round decides how (victimOrder.order): all at once, or
// one at a time by lost work.
func (e *Engine) claim(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	v := &e.victims
	if !v.decided {
		v.decided = true
		v.stepwise = v.order(e.cluster, plan.Preempt, e.released, e.now)
	}
	e.claiming = true
	defer func() { e.claiming = false }()
	if !v.stepwise {
		e.releaseAll(plan)
		return e.tryPlace(s, j, ts, plan)
	}
	return e.claimStepwise(s, j, ts, plan)
}

// claimStepwise releases the shortest prefix of the candidates, in
// victimOrder's order, that lets j fit, and places j: a candidate that would
// lose more work is released only when j cannot fit without it. It tries
// j's requested size first, then its minimum. When j fits at neither, the
// candidates stay unreleased, so that they keep running unless a later
// claim needs them; with a Donor scaler they are all released instead, so
// that the donor shrinks jobs for j on top of their GPUs, as it does
// without checkpoints.
func (e *Engine) claimStepwise(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	sizes, k := e.sizes(j)
	first := e.released
	e.usable = e.partition(plan, ts)
	for i := range k {
		n := sizes[i]
		fit := fitTypes(s, j, ts, n)
		if fit == 0 {
			continue
		}
		if end := e.shortestPrefix(s, j, fit, plan, n); end > first {
			e.releaseTo(plan, end)
			if fit := e.admit(j, n, fit); fit != 0 && e.placeOn(s, j, fit, plan, n, i == 1) {
				return true
			}
		}
		e.releaseTo(plan, first)
	}
	if _, ok := e.scaler.(Donor); ok {
		e.releaseTo(plan, len(plan.Preempt))
	}
	return false
}

// shortestPrefix returns the smallest end such that j fits on n GPUs of a
// type in fit once the candidates plan.Preempt[e.released:end] are
// released, or e.released when it does not fit even with all of them. j
// does not fit on the free GPUs alone (end = e.released). The search
// gallops (1, 2, 4, ... more candidates) and then bisects, since a placer
// that fits a job on some free GPUs fits it on more (for a placer without
// that property it finds some end at which j fits and one candidate fewer
// does not): it costs O(log k) placer calls and O(k) releases for an answer
// of k candidates. The pool is left as it found it.
func (e *Engine) shortestPrefix(s *model.State, j *model.Job, fit TypeSet, plan *Plan, n int) int {
	first := e.released
	defer e.releaseTo(plan, first)
	key := noFitKey{fit, n}
	if first >= e.usable || !e.room(fit, n, e.victims.held) || e.noFit[key] {
		return first // too few GPUs even with every candidate's: release nothing
	}
	lo, hi, last := first, first+1, e.usable
	fits := func(end int) bool {
		e.releaseTo(plan, end)
		if !e.room(fit, n, nil) {
			return false
		}
		pl := e.placer.Place(s, e.pool, j, n, fit)
		if pl.GPUs == nil {
			if pl.Pause != "" {
				e.pause = pl.Pause
			} else if end == last {
				e.noteNoFit(key)
			}
			return false
		}
		// Released candidates of j's queue count no more for its queue.
		if af := e.admit(j, n, fit); af != fit {
			return af != 0 && e.room(af, n, nil) && e.placer.Place(s, e.pool, j, n, af).GPUs != nil
		}
		return true
	}
	for !fits(hi) { // j does not fit at lo
		if hi == last {
			return first
		}
		lo, hi = hi, min(first+2*(hi-first), last)
	}
	for hi-lo > 1 { // j fits at hi, not at lo
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// room reports whether some type in fit has at least n free GPUs, counting
// extra[t] more GPUs of type t when extra is not nil. A placer needs that
// much (Placer), so a prefix of candidates that leaves no such type is
// never tried.
func (e *Engine) room(fit TypeSet, n int, extra []int) bool {
	for t := range e.cluster.Types {
		if !fit.Has(t) {
			continue
		}
		f := e.pool.Free(t)
		if extra != nil {
			f += extra[t]
		}
		if f >= n {
			return true
		}
	}
	return false
}

// releaseTo releases or takes back candidates until exactly
// plan.Preempt[:end] are released. Taking back is safe because no placement
// has used the GPUs of a candidate released since the last commit.
func (e *Engine) releaseTo(plan *Plan, end int) {
	for ; e.released < end; e.released++ {
		v := plan.Preempt[e.released]
		e.pool.Give(v.Alloc)
		e.took(v, v.Alloc, -len(v.Alloc))
		e.victims.count(e.cluster, v, -1)
	}
	for ; e.released > end; e.released-- {
		v := plan.Preempt[e.released-1]
		e.pool.Take(v.Alloc)
		e.took(v, v.Alloc, len(v.Alloc))
		e.victims.count(e.cluster, v, 1)
	}
}

// releaseAll releases the GPUs of every stop candidate not yet released.
func (e *Engine) releaseAll(plan *Plan) {
	for _, v := range plan.Preempt[e.released:] {
		e.pool.Give(v.Alloc)
		e.took(v, v.Alloc, -len(v.Alloc))
	}
	e.released = len(plan.Preempt)
}

// takeBackUnused takes back the released candidates whose GPUs no
// placement took, so that they keep running unless a later claim needs
// them. Under Order.Stepwise the engine does so once the walk leaves the
// claiming jobs (a candidate released for one claim stays free for the
// next claims, not for the jobs that may not claim). The used ones stay
// released, in order, ahead of the others.
func (e *Engine) takeBackUnused(plan *Plan) {
	rel := plan.Preempt[:e.released]
	e.scratch = append(e.scratch[:0], rel...)
	k := 0
	for _, v := range e.scratch {
		if !e.pool.AllFree(v.Alloc) {
			rel[k] = v
			k++
		}
	}
	used := k
	for _, v := range e.scratch {
		if e.pool.AllFree(v.Alloc) {
			rel[k] = v
			k++
		}
	}
	clear(e.scratch)
	e.releaseTo(plan, used)
	e.parted = false
}

// partition moves the candidates not yet released that hold GPUs of a type
// in ts ahead of the others, keeping the order within both groups, and
// returns the end of the first group: the others cannot help a job that
// runs only on the types of ts, so the prefix search skips them.
func (e *Engine) partition(plan *Plan, ts TypeSet) int {
	if e.parted && e.partTS == ts && e.released <= e.usable {
		return e.usable // still in order: releases since came from its front
	}
	e.parted, e.partTS = true, ts
	rest := plan.Preempt[e.released:]
	e.scratch = append(e.scratch[:0], rest...)
	k := 0
	for _, v := range e.scratch {
		if e.helps(v, ts) {
			rest[k] = v
			k++
		}
	}
	end := e.released + k
	for _, v := range e.scratch {
		if !e.helps(v, ts) {
			rest[k] = v
			k++
		}
	}
	clear(e.scratch)
	return end
}

// helps reports whether candidate v holds a GPU of a type in ts.
func (e *Engine) helps(v *model.Job, ts TypeSet) bool {
	for _, g := range v.Alloc {
		if ts.Has(e.cluster.TypeOf(g)) {
			return true
		}
	}
	return false
}

// noFitKey is a placement that failed on the free GPUs plus every usable
// stop candidate's: n GPUs of a type in fit.
type noFitKey struct {
	fit TypeSet
	n   int
}

// noteNoFit remembers, for the rest of the round, that n GPUs of a type in
// fit cannot be placed even with every usable candidate released: the free
// GPUs and the unreleased candidates' only shrink as the round goes on
// (placements take GPUs, released candidates stay free), so a later claim
// of the same shape cannot fit either and is not tried again. Placements
// that move jobs (Placement.Moves) and donations can change the shape of
// the free GPUs, so they forget what was noted (commit), and with a Donor
// scaler nothing is noted.
func (e *Engine) noteNoFit(k noFitKey) {
	if _, donor := e.scaler.(Donor); donor {
		return
	}
	if e.noFit == nil {
		e.noFit = map[noFitKey]bool{}
	}
	e.noFit[k] = true
}
