package engine

import (
	"cmp"
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// Upgrader is implemented by placers that move a running job to GPUs of a
// much faster type once such GPUs are free after the round's placements
// (issue 28): a job that found only a slow type free when it started does
// not stay there for its whole run. Upgrade returns the job's new GPUs
// (as many as it holds, of a type it may use: Feasible), or nil to leave
// it; it must not change the pool.
type Upgrader interface {
	Upgrade(s *model.State, p *Pool, j *model.Job) []model.GPU
}

// upgrade offers every settled running job to an Upgrader placer after
// the round's placements, and records the moves in plan.Migrate. It does
// so also when jobs are left waiting: the walk placed every job it could,
// and the head of a strict queue that is left fits nowhere even after
// yields, so the free GPUs of a faster type would stay idle while it
// waits; a later round's yield (makeRoom) gives them back when it fits
// with them. Schedule calls it after the walk of a non-preemptive order
// only: preemptive and allocation orders place running jobs again
// themselves.
func (e *Engine) upgrade(s *model.State, plan *Plan) {
	u, ok := e.placer.(Upgrader)
	if !ok {
		return
	}
	for _, j := range s.Running() {
		if !e.pool.Settled(j) {
			continue
		}
		gpus := u.Upgrade(s, e.pool, j)
		if gpus == nil {
			continue
		}
		e.pool.Release(j)
		e.took(j, j.Alloc, -len(j.Alloc))
		e.consume(gpus)
		e.pool.TakeJob(j, gpus)
		e.took(j, gpus, len(gpus))
		plan.Migrate = append(plan.Migrate, Assignment{Job: j, GPUs: gpus})
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Migrated, reasonUpgraded})
	}
}

// reasonUpgraded is the trace's reason for an upgrade.
const reasonUpgraded = "moved to a much faster GPU type that is free"

// Yielder is implemented by upgrading placers whose upgraded jobs give a
// faster type's GPUs back to a waiting job (issue 28): an upgrade borrows
// GPUs that no waiting job can use, and a job that arrives later, or waits
// at the head of the queue, comes first. Target returns the types in ts on which
// running jobs should make room for waiting job j of n GPUs (0: none, j is
// placed as usual); Yield returns GPUs for running job r, as many as it
// holds, on a slower type that has room for them, or nil to leave it.
// Neither may change the pool.
type Yielder interface {
	Target(s *model.State, p *Pool, j *model.Job, n int, ts TypeSet) TypeSet
	Yield(s *model.State, p *Pool, r *model.Job) []model.GPU
}

// yield tries to start waiting job j, of feasible types ts, on a type its
// Yielder placer targets, after moving running jobs there, the last
// started first, to slower types (Yielder.Yield) until j fits (makeRoom).
// When j still does not fit, every move is undone and yield reports false
// (j is then placed as usual). Only without a scaler and without a Gate,
// which both track the running jobs' GPUs through the round.
func (e *Engine) yield(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	y, ok := e.yielder()
	if !ok {
		return false
	}
	sizes, k := e.sizes(j)
	target := y.Target(s, e.pool, j, sizes[0], ts)
	if target == 0 {
		return false
	}
	return e.makeRoom(s, y, target, min(sizes[0], sizes[k-1]), plan, func() bool { return e.tryPlace(s, j, target, plan) })
}

// yieldWhole is yield for an elastic job j that would start below its
// requested size (without a scaler it would keep that size to its end):
// running jobs on the types where j runs at its requested size make room
// for the whole of it (makeRoom), and it starts there at that size. It
// reports false, with nothing moved, when no type holds j at its requested
// size after every move: j is then placed as usual.
func (e *Engine) yieldWhole(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	y, ok := e.yielder()
	sizes, k := e.sizes(j)
	if !ok || k == 1 || sizes[0] < sizes[1] {
		return false
	}
	target := y.Target(s, e.pool, j, sizes[0], fitTypes(s, j, ts, sizes[0]))
	if target == 0 {
		return false
	}
	return e.makeRoom(s, y, target, sizes[0], plan, func() bool { return e.placeOn(s, j, target, plan, sizes[0], false) })
}

// yielder returns the engine's placer as a Yielder when yields apply: no
// scaler and no Gate.
func (e *Engine) yielder() (Yielder, bool) {
	y, ok := e.placer.(Yielder)
	return y, ok && e.scaler == nil && e.gates == nil
}

// makeRoom moves running jobs on the types in target, the last started
// first, to slower types (Yielder.Yield) until some type in target has
// least free GPUs and start succeeds; the moves that room does not need
// are undone first (prune). The moves kept are recorded in plan.Migrate.
// When start never succeeds every move is undone and makeRoom reports
// false.
func (e *Engine) makeRoom(s *model.State, y Yielder, target TypeSet, least int, plan *Plan, start func() bool) bool {
	cands := e.yieldBuf[:0]
	room := e.yieldRoom[:0]
	for t := range e.cluster.Types {
		room = append(room, 0)
		if target.Has(t) {
			room[t] = e.pool.Free(t)
		}
	}
	for _, r := range s.Running() {
		if t := e.cluster.TypeOf(r.Alloc[0]); e.pool.Settled(r) && target.Has(t) {
			cands = append(cands, r)
			room[t] += len(r.Alloc)
		}
	}
	e.yieldBuf, e.yieldRoom = cands, room
	if slices.Max(room) < least {
		return false // not even every move together would make room
	}
	slices.SortStableFunc(cands, func(a, b *model.Job) int {
		return cmp.Or(cmp.Compare(b.FirstStart, a.FirstStart), cmp.Compare(b.Seq, a.Seq))
	})
	e.byCost(s, y, cands)
	var moves []Assignment
	for _, r := range cands {
		gpus := y.Yield(s, e.pool, r)
		if gpus == nil {
			continue
		}
		e.pool.GiveJob(r, r.Alloc)
		e.pool.TakeJob(r, gpus)
		moves = append(moves, Assignment{Job: r, GPUs: gpus})
		if !e.fits(least, target) {
			continue
		}
		if moves = e.prune(moves, least, target); start() {
			for _, m := range moves {
				e.pool.Hold(m.Job)
				plan.Migrate = append(plan.Migrate, m)
				plan.Trace = append(plan.Trace, Decision{m.Job.Spec.ID, Migrated, reasonYielded})
			}
			return true
		}
	}
	for k := len(moves) - 1; k >= 0; k-- {
		m := moves[k]
		e.pool.GiveJob(m.Job, m.GPUs)
		e.pool.TakeJob(m.Job, m.Job.Alloc)
	}
	return false
}

// prune undoes, the last made first, every move of makeRoom without which
// some type in target still has least free GPUs: the job goes back to its
// GPUs rather than pay a restart pause to run slower for nothing. It
// decides by the types' free GPU counts alone, before the start, so that
// which moves are kept does not depend on which nodes hold the GPUs (with
// no contention, asleep or on, the same moves): a move is kept, without a
// look at its GPUs, when a later move kept went to the type it left (and
// may have taken its GPUs). It returns the moves kept, in their order, in
// moves' backing array.
func (e *Engine) prune(moves []Assignment, least int, target TypeSet) []Assignment {
	kept := len(moves)
	var landed TypeSet // the types the moves kept went to
	for k := len(moves) - 1; k >= 0; k-- {
		m := moves[k]
		to := TypeSet(1) << uint(e.cluster.TypeOf(m.GPUs[0]))
		if !landed.Has(e.cluster.TypeOf(m.Job.Alloc[0])) {
			e.pool.GiveJob(m.Job, m.GPUs)
			if e.pool.Fits(m.Job, m.Job.Alloc) {
				e.pool.TakeJob(m.Job, m.Job.Alloc)
				if e.fits(least, target) {
					copy(moves[k:], moves[k+1:kept])
					kept--
					continue
				}
				e.pool.GiveJob(m.Job, m.Job.Alloc)
			}
			e.pool.TakeJob(m.Job, m.GPUs)
		}
		landed |= to
	}
	return moves[:kept]
}

// reasonYielded is the trace's reason for a move that makes room for a
// waiting job.
const reasonYielded = "moved to a slower GPU type to make room for a waiting job"

// fits reports whether some type in ts has n free GPUs: without them no
// placement of n GPUs there is possible (Placer).
func (e *Engine) fits(n int, ts TypeSet) bool {
	for t := range e.cluster.Types {
		if ts.Has(t) && e.pool.Free(t) >= n {
			return true
		}
	}
	return false
}

// byCost orders the yield candidates by the run time a yield adds to each,
// cheapest first (stably: ties keep the last started first): its remaining
// work at the speed of the type Yield offers it now, less that at its
// present speed. A candidate that Yield has nowhere to move comes last.
func (e *Engine) byCost(s *model.State, y Yielder, cands []*model.Job) {
	cost := make(map[*model.Job]float64, len(cands))
	for _, r := range cands {
		cost[r] = math.Inf(1)
		if gpus := y.Yield(s, e.pool, r); gpus != nil {
			cost[r] = e.moveCost(s, r, gpus)
		}
	}
	slices.SortStableFunc(cands, func(a, b *model.Job) int { return cmp.Compare(cost[a], cost[b]) })
}

// moveCost returns the run time, in seconds, that moving running job j to
// gpus adds to it: its remaining work at the speed there less that at its
// present speed (+Inf when it cannot run there).
func (e *Engine) moveCost(s *model.State, j *model.Job, gpus []model.GPU) float64 {
	from := s.Profile.Speed(j, e.cluster.TypeOf(j.Alloc[0]), len(j.Alloc))
	to := s.Profile.Speed(j, e.cluster.TypeOf(gpus[0]), len(gpus))
	if from <= 0 || to <= 0 {
		return math.Inf(1)
	}
	w := j.Remaining(e.now)
	return w/to - w/from
}
