package engine

import "github.com/gpusched/gpusched/core/model"

// MinMoveUp is how many times faster a GPU type must run a running job, at
// its size, for a reclaiming scaler's round to move the job there
// (moveUp); the energy placer's upgrades use the same factor
// (placer.MinUpgrade).
const MinMoveUp = 1.5

// moveUp moves running jobs off slow GPU types onto faster GPUs lent to
// elastic growth, when a reclaiming scaler lends them (issue 28): lent
// GPUs come back at once for a running job as they do for an arriving one
// (reclaim). Reclaim gives an arriving job the type it would get if every
// lent GPU were free, but a type-blind placer's answer there can be a slow
// type, and a job that started when only a slow type was free stays there
// for the rest of its run while faster GPUs sit lent to growth (on the
// robustness grid, rigid jobs ran for weeks on K80s and set the makespan).
// So, when no job is left waiting after the round's placements, every
// settled running job, in arrival order, moves to the fastest type on
// which it runs at least MinMoveUp times as fast at its size and whose
// free and lent GPUs together hold it: the lenders there give replicas
// back (Donor.Donate) until it has enough free GPUs, and the placer
// places the job there; when the placer finds no room (other resources,
// nodes), every give-back is undone. A rigid job moves only to a type
// where elastic jobs hold lent GPUs (Resizer.Surplus > 0): onto free room
// with nothing lent its move would be a plain upgrade, the placer's
// policy (Upgrader), which runs without a scaler as well. An elastic job,
// whose GPUs the scaler manages, moves onto free room as well: otherwise
// it grows only on its own type, and one that started at its minimum on
// a slow type can run there alone, at its maximum, while faster GPUs
// stand idle (on the grid, 8 K80s for 2.3 million s beside 16 idle V100s
// and P100s). The move pays one restart pause, as a migration does. It
// reports whether any job moved. Only with a reclaiming scaler, no Gate,
// and a non-preemptive order (Schedule's walk).
func (e *Engine) moveUp(s *model.State, plan *Plan) bool {
	rc, ok := e.scaler.(Reclaimer)
	if !ok || !rc.Reclaims() || e.gates != nil || len(s.Waiting()) > len(plan.Start)+len(plan.Reject) {
		return false
	}
	moved := false
	for _, j := range s.Running() {
		if !e.pool.Settled(j) {
			continue
		}
		u := e.fasterType(s, j)
		if u < 0 {
			continue
		}
		if gpus := e.moveOnto(s, rc, j, u); gpus != nil {
			e.pool.Release(j)
			e.pool.TakeJob(j, gpus)
			plan.Migrate = append(plan.Migrate, Assignment{Job: j, GPUs: gpus})
			plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Migrated, reasonMovedUp})
			moved = true
		}
	}
	return moved
}

// reasonMovedUp is the trace's reason for a move of moveUp.
const reasonMovedUp = "moved to a much faster GPU type with room, lent GPUs given back"

// fasterType returns the fastest type on which running job j, at its
// size, runs at least MinMoveUp times as fast as where it runs and whose
// free and lent GPUs add up to its size (for a rigid job, only a type on
// which GPUs are lent); -1 when there is none.
func (e *Engine) fasterType(s *model.State, j *model.Job) int {
	n := len(j.Alloc)
	floor := MinMoveUp * s.Profile.Speed(j, e.cluster.TypeOf(j.Alloc[0]), n)
	if !(floor > 0) {
		return -1
	}
	ts := Feasible(s, j, n)
	best, bv := -1, 0.0
	for t := range s.Cluster.Types {
		if v := s.Profile.Speed(j, t, n); ts.Has(t) && v >= floor && v > bv && e.roomUp(j, t, n) {
			best, bv = t, v
		}
	}
	return best
}

// roomUp reports whether type t's free and lent GPUs add up to n, and,
// for a rigid job j, whether any of them are lent (moveUp).
func (e *Engine) roomUp(j *model.Job, t, n int) bool {
	lent := e.resizer.Surplus(t)
	return (lent > 0 || j.Spec.Elastic()) && e.pool.Free(t)+lent >= n
}

// moveOnto frees GPUs of type u for running job j, shrinking the elastic
// jobs lent GPUs there, and returns the placer's GPUs for j on u (as many
// as it holds); nil, with every shrink undone, when it finds none. The
// pool is left with j's GPUs as they were.
func (e *Engine) moveOnto(s *model.State, rc Reclaimer, j *model.Job, u int) []model.GPU {
	r, n, only := e.resizer, len(j.Alloc), TypeSet(1)<<uint(u)
	r.begin()
	for e.pool.Free(u) < n && rc.Donate(s, e.now, r, j, only) {
	}
	if e.pool.Free(u) >= n {
		if pl := e.placeWith(s, j, n, only); pl.GPUs != nil {
			r.commit()
			return pl.GPUs
		}
	}
	r.rollback()
	return nil
}
