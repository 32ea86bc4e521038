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
	e.usable = e.partition(plan, j, ts)
	for i := range k {
		n := sizes[i]
		fit := fitTypes(s, j, ts, n)
		if fit == 0 {
			continue
		}
		if end := e.shortestPrefix(s, j, fit, plan, n); end > first {
			e.releaseTo(plan, end)
			if e.placeOn(s, j, fit, plan, n, i == 1) {
				if e.pastClaims {
					e.takeBackUnused(plan, first) // those this claim released
				}
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
	key := noFitKey{fit, n, e.partClass}
	if first >= e.usable || !e.room(fit, n, e.victims.held) || e.knownNoFit(key, j) {
		return first // too few GPUs even with every candidate's: release nothing
	}
	lo, hi, last := first, first+1, e.usable
	fits := func(end int) bool {
		e.releaseTo(plan, end)
		if !e.room(fit, n, nil) {
			return false
		}
		pl := e.placeWith(s, j, n, fit)
		if pl.GPUs == nil {
			if pl.Pause != "" {
				e.pause = pl.Pause
			} else if end == last {
				e.noteNoFit(key, j)
			}
			return false
		}
		return e.admitOn(j, n, pl.GPUs)
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
			// Releasing candidates may also end a node's starving.
			f += extra[t] + e.pool.Starved(t)
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
	if e.released != end {
		e.setVersion++ // the unreleased candidates change
	}
	for ; e.released < end; e.released++ {
		v := plan.Preempt[e.released]
		e.pool.GiveJob(v, v.Alloc)
		e.own(v, v)
		e.victims.count(e.cluster, v, -1)
	}
	for ; e.released > end; e.released-- {
		v := plan.Preempt[e.released-1]
		e.pool.TakeJob(v, v.Alloc)
		e.own(v, nil)
		e.victims.count(e.cluster, v, 1)
	}
}

// releaseAll releases the GPUs of every stop candidate not yet released.
func (e *Engine) releaseAll(plan *Plan) {
	e.setVersion++
	for _, v := range plan.Preempt[e.released:] {
		e.pool.GiveJob(v, v.Alloc)
		e.own(v, v)
	}
	e.released = len(plan.Preempt)
}

// own records (owner v) or forgets (nil) that the free GPUs of released
// candidate v are v's, so that a placement on them stops v (consume). Only
// with a Gate, which counts a candidate's GPUs as its queue's until then.
func (e *Engine) own(v, owner *model.Job) {
	if e.gates == nil {
		return
	}
	for _, g := range v.Alloc {
		e.owner.set(g, owner)
	}
}

// owners maps GPUs to the released candidates that hold them, by the GPU's
// flat index in the cluster.
type owners struct {
	base []int // per node: the flat index of its GPU 0
	of   []*model.Job
	n    int // GPUs with an owner
}

// reset sizes the map for cluster c (when it changed) and empties it.
func (o *owners) reset(c *model.Cluster, changed bool) {
	if changed || o.base == nil {
		o.base = make([]int, len(c.Nodes))
		total := 0
		for i, n := range c.Nodes {
			o.base[i] = total
			total += n.GPUs
		}
		o.of, o.n = make([]*model.Job, total), 0
	}
	if o.n > 0 {
		clear(o.of)
		o.n = 0
	}
}

func (o *owners) get(g model.GPU) *model.Job {
	if o.n == 0 {
		return nil
	}
	return o.of[o.base[g.Node]+int(g.Index)]
}

func (o *owners) set(g model.GPU, v *model.Job) {
	i := o.base[g.Node] + int(g.Index)
	switch {
	case o.of[i] == nil && v != nil:
		o.n++
	case o.of[i] != nil && v == nil:
		o.n--
	}
	o.of[i] = v
}

// consume tells the gate, for every released candidate on whose GPUs a
// placement (gpus) lands and that it has not been told of, that the
// candidate gives its GPUs back: it will be stopped. The gate counts a
// released candidate as running until then, so that a job is never
// admitted on the strength of a release that is taken back.
func (e *Engine) consume(gpus []model.GPU) {
	if e.owner.n == 0 {
		return // nothing released (or no Gate)
	}
	for _, g := range gpus {
		if v := e.owner.get(g); v != nil && !e.consumed[v] {
			if e.consumed == nil {
				e.consumed = map[*model.Job]bool{}
			}
			e.consumed[v] = true
			e.took(v, v.Alloc, -len(v.Alloc))
		}
	}
}

// admitOn reports whether the gate admits j on placement gpus (n GPUs of
// their type), counting the released candidates the placement would stop
// as gone.
func (e *Engine) admitOn(j *model.Job, n int, gpus []model.GPU) bool {
	if e.gates == nil {
		return true
	}
	if e.owner.n == 0 {
		return e.gates.Admit(j, n, 1<<uint(e.cluster.TypeOf(gpus[0])), e.claiming) != 0
	}
	var undo []*model.Job
	for _, g := range gpus {
		if v := e.owner.get(g); v != nil && !e.consumed[v] && !slices.Contains(undo, v) {
			undo = append(undo, v)
			e.took(v, v.Alloc, -len(v.Alloc))
		}
	}
	ok := e.gates.Admit(j, n, 1<<uint(e.cluster.TypeOf(gpus[0])), e.claiming) != 0
	for _, v := range undo {
		e.took(v, v.Alloc, len(v.Alloc))
	}
	return ok
}

// takeBackUnused takes back the released candidates from plan.Preempt[from]
// on whose GPUs no placement took, so that they keep running unless a later claim needs
// them. Under Order.Stepwise the engine does so once the walk leaves the
// claiming jobs (a candidate released for one claim stays free for the
// next claims, not for the jobs that may not claim), and after each later
// claim for the candidates that claim released (from its first): those
// come from the front of the claiming job's part of the candidates
// (partition), which the unused ones rejoin in order. The used ones stay
// released, in order, ahead of the others.
func (e *Engine) takeBackUnused(plan *Plan, from int) {
	rel := plan.Preempt[from:e.released]
	e.scratch = append(e.scratch[:0], rel...)
	used := e.usedMarks(e.scratch)
	k := 0
	for i, v := range e.scratch {
		if used[i] {
			rel[k] = v
			k++
		}
	}
	end := from + k
	for i, v := range e.scratch {
		if !used[i] {
			rel[k] = v
			k++
		}
	}
	clear(e.scratch)
	e.releaseTo(plan, end)
}

// usedMarks says, for each released candidate of cands, whether a
// placement used what it released: one of its GPUs, or (with resources
// besides GPUs) so much of a node's other resources that it no longer fits
// there once the unused candidates after it are taken back (releaseTo
// takes them back from the last).
func (e *Engine) usedMarks(cands []*model.Job) []bool {
	used := e.usedBuf[:0]
	for _, v := range cands {
		used = append(used, !e.pool.Retakable(v, v.Alloc))
	}
	e.usedBuf = used
	if e.pool.vec.res == 0 {
		return used
	}
	var back []*model.Job
	for i := len(cands) - 1; i >= 0; i-- {
		if v := cands[i]; !used[i] {
			if e.pool.Fits(v, v.Alloc) {
				e.pool.TakeJob(v, v.Alloc)
				back = append(back, v)
			} else {
				used[i] = true
			}
		}
	}
	for _, v := range back {
		e.pool.GiveJob(v, v.Alloc)
	}
	return used
}

// partition moves the candidates not yet released that hold GPUs of a type
// in ts, and that job j may take (Gate), ahead of the others, keeping the
// order within both groups, and returns the end of the first group: the
// others cannot help j, so the prefix search skips them.
func (e *Engine) partition(plan *Plan, j *model.Job, ts TypeSet) int {
	var class Class
	if e.gates != nil {
		class = e.gates.Class(j)
	}
	if e.parted && e.partTS == ts && e.partClass == class && e.released <= e.usable {
		return e.usable // still in order: releases since came from its front
	}
	key := noFitKey{ts, 0, class}
	if v, ok := e.none[key]; ok && v == e.setVersion {
		return e.released // none of the unreleased candidates helps, as before
	}
	e.parted, e.partTS, e.partClass = true, ts, class
	rest := plan.Preempt[e.released:]
	info := e.infos(plan, e.released)[e.released:]
	c := &e.cands
	c.newClass()
	// Which candidates help, and whether a helper follows one that does
	// not (otherwise the helpers are a prefix already: nothing moves).
	c.helps = c.helps[:0]
	k, inOrder := 0, true
	for _, ci := range info {
		h := e.helpsInfo(class, ci, ts)
		c.helps = append(c.helps, h)
		if h {
			inOrder = inOrder && k == len(c.helps)-1
			k++
		}
	}
	end := e.released + k
	if !inOrder {
		// A stable partition in place: helpers move forward (never past
		// an entry not yet read), the others wait in scratch for the tail.
		c.scratch = c.scratch[:0]
		k = 0
		for i, ci := range info {
			if c.helps[i] {
				rest[k], info[k] = ci.job, ci
				k++
			} else {
				c.scratch = append(c.scratch, ci)
			}
		}
		for _, ci := range c.scratch {
			rest[k], info[k] = ci.job, ci
			k++
		}
	}
	if end == e.released {
		if e.none == nil {
			e.none = map[noFitKey]int64{}
		}
		e.none[key] = e.setVersion
	}
	return end
}

// noFitKey is a placement that failed on the free GPUs plus every usable
// stop candidate's: n GPUs of a type in fit.
type noFitKey struct {
	fit   TypeSet
	n     int
	class Class // Gate.Class of the claiming job
}

// noteNoFit remembers, for the rest of the round, that n GPUs of a type in
// fit cannot be placed for job j even with every usable candidate
// released: the free GPUs and resources and the unreleased candidates'
// only shrink as the round goes on (placements take them, released
// candidates stay free), so a later claim of the same shape cannot fit
// either and is not tried again — nor, where jobs ask for resources
// besides GPUs, one whose replicas are as large and ask at least as much
// of every resource (knownNoFit). Placements that move jobs
// (Placement.Moves) and donations can change the shape of the free GPUs,
// so they forget what was noted (commit), and with a Donor scaler nothing
// is noted.
func (e *Engine) noteNoFit(k noFitKey, j *model.Job) {
	if _, donor := e.scaler.(Donor); donor {
		return
	}
	req := e.pool.request(j)
	if req == nil {
		if e.noFit == nil {
			e.noFit = map[noFitKey]bool{}
		}
		e.noFit[k] = true
		return
	}
	if e.noFitVec == nil {
		e.noFitVec = map[noFitKey][]vecShape{}
	}
	shapes := e.noFitVec[k]
	if len(shapes) == shortMemo {
		shapes = shapes[1:]
	}
	e.noFitVec[k] = append(shapes, vecShape{rg: j.Spec.Replica(), req: append(model.Vec(nil), req...)})
}

// knownNoFit reports whether noteNoFit noted k for j or for a job that j
// dominates.
func (e *Engine) knownNoFit(k noFitKey, j *model.Job) bool {
	req := e.pool.request(j)
	if req == nil {
		return e.noFit[k]
	}
	rg := j.Spec.Replica()
	for _, sh := range e.noFitVec[k] {
		if sh.rg == rg && covers(req, sh.req) {
			return true
		}
	}
	return false
}

// vecShape is a replica's size in GPUs and its request of the other
// resources.
type vecShape struct {
	rg  int
	req model.Vec
}

// leaveClaims marks that the walk leaves the leading Claim jobs of a
// Stepwise order: the candidates released for them and not used are taken
// back, so that later jobs take only what their own claims release.
func (e *Engine) leaveClaims(plan *Plan) {
	if !e.victims.force || e.pastClaims {
		return
	}
	e.pastClaims = true
	if e.released > 0 {
		e.takeBackUnused(plan, 0)
		e.parted = false // candidates of every class came back
	}
}
