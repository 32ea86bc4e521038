package engine

import "github.com/gpusched/gpusched/core/model"

// assigned realises an order whose Types name, for each job, the GPU types
// it may use this round (an allocation-matrix policy's choice; Order.Types).
// Jobs are taken in order and each books its GPU count on a type of its
// set that still has that many GPUs this round, as if the cluster were
// empty (gang: the whole count or nothing):
//
//   - a running job on a type of its set keeps its GPUs while its type has
//     room; otherwise it moves to another type of its set with room (in the
//     plan: preempted and started again, paying the restart pause), or is
//     preempted;
//   - a waiting job books the fastest type of its set with room (its
//     requested count, else its minimum) and is placed there;
//   - a job with an empty set, or whose types are full, does not run.
//
// The GPUs of the running jobs that move or stop are released first; then
// the moving and starting jobs are placed in order. A stopped job none of
// whose GPUs a placement took keeps running (the round leaves no GPU idle
// that a job could use), as does a moving job that found no place.
func (e *Engine) assigned(s *model.State, ord Order, plan *Plan) {
	picks, stops := e.bookAll(s, ord, plan)
	for _, p := range picks {
		if p.move {
			e.pool.Release(p.job)
		}
	}
	for _, j := range stops {
		e.pool.Release(j)
	}
	for _, p := range picks {
		e.short = ""
		pl := e.placeWith(s, p.job, p.n, p.types)
		switch {
		case pl.GPUs == nil && p.move:
			stops = append(stops, p.job)
		case pl.GPUs == nil:
			e.pause = pl.Pause
			e.blocked(p.job, plan, reasonNoFit)
		case p.move:
			// A preemption and a start rather than a migration: the plan's
			// migrations are applied one by one, and a mover may take the
			// GPUs of another mover (two jobs may swap types).
			e.commit(p.job, pl, plan)
			plan.Preempt = append(plan.Preempt, p.job)
			plan.Start = append(plan.Start, Assignment{Job: p.job, GPUs: pl.GPUs})
			plan.Trace = append(plan.Trace, Decision{p.job.Spec.ID, Migrated, reasonAssigned})
		default:
			e.commit(p.job, pl, plan)
			plan.Start = append(plan.Start, Assignment{Job: p.job, GPUs: pl.GPUs})
			if e.scaler != nil {
				e.resizer.addStarted(plan.Start[len(plan.Start)-1])
			}
			plan.Trace = append(plan.Trace, Decision{p.job.Spec.ID, Placed, reasonPlaced})
		}
	}
	for _, j := range stops {
		if e.pool.Retakable(j, j.Alloc) {
			e.pool.TakeJob(j, j.Alloc) // nobody took its GPUs: it keeps running
			continue
		}
		plan.Preempt = append(plan.Preempt, j)
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Preempted, reasonPreempted})
	}
}

// pick is a job that starts or moves this round, on n GPUs of a type in
// types.
type pick struct {
	job   *model.Job
	types TypeSet
	n     int
	move  bool
}

// bookAll walks the order and books GPU counts (assigned's first step): it
// returns the jobs to start or move and the running jobs to stop, and
// records rejections and blocked jobs in plan.
func (e *Engine) bookAll(s *model.State, ord Order, plan *Plan) ([]pick, []*model.Job) {
	c := s.Cluster
	for t := range e.remain {
		e.remain[t] = c.TypeGPUs(t)
	}
	var picks []pick
	var stops []*model.Job
	for i := 0; ; i++ {
		i = keepRunning(s, ord.Jobs, ord.Types, e.remain, i)
		if i == len(ord.Jobs) {
			break
		}
		j, allowed := ord.Jobs[i], ord.Types[i]
		if j.State == model.Running {
			t, k := s.TypeOn(j), len(j.Alloc)
			if bt := e.book(s, j, allowed&^(1<<uint(t)), k); bt >= 0 {
				picks = append(picks, pick{j, 1 << uint(bt), k, true})
			} else {
				stops = append(stops, j)
			}
			continue
		}
		ts := Feasible(s, j, j.Spec.MinGPUs)
		if ts == 0 {
			e.reject(s, j, plan)
			continue
		}
		sizes, nk := e.sizes(j)
		booked := false
		for _, n := range sizes[:nk] {
			if bt := e.book(s, j, allowed&fitTypes(s, j, ts, n), n); bt >= 0 {
				picks, booked = append(picks, pick{j, 1 << uint(bt), n, false}), true
				break
			}
		}
		if !booked {
			plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Blocked, reasonNoCapacity})
		}
	}
	return picks, stops
}

// keepRunning books, from jobs[i] on, the running jobs that keep their GPUs
// (their type is in their set and still has room this round), and returns
// the index of the first job that does not: one that is waiting, or must
// move or stop (bookAll's common case in a small loop of its own).
func keepRunning(s *model.State, jobs []*model.Job, types []TypeSet, remain []int, i int) int {
	types = types[:len(jobs)]
	for ; i < len(jobs); i++ {
		j := jobs[i]
		if j.State != model.Running {
			return i
		}
		t, k := s.TypeOn(j), len(j.Alloc)
		if !types[i].Has(t) || remain[t] < k {
			return i
		}
		remain[t] -= k
	}
	return i
}

// book reserves n GPUs of this round's count for j on the type in ts on
// which j runs fastest with n GPUs and that has n left; it returns the type
// or -1.
func (e *Engine) book(s *model.State, j *model.Job, ts TypeSet, n int) int {
	best, bt := 0.0, -1
	for t := range s.Cluster.Types {
		if !ts.Has(t) || e.remain[t] < n {
			continue
		}
		if v := s.Profile.Speed(j, t, n); v > best {
			best, bt = v, t
		}
	}
	if bt >= 0 {
		e.remain[bt] -= n
	}
	return bt
}
