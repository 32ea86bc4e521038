package engine

import "github.com/gpusched/gpusched/core/model"

// preemptive selects jobs by GPU counts as if the cluster were empty, in
// order — and, on a cluster that models other resources, by what the
// nodes of each type offer of them in all (bookRes); preempts running jobs that were not selected; places the selected
// waiting jobs; and cancels preemptions whose GPUs no placement used. Every
// selected job may claim the GPUs of the preempted ones (a Gate says whose);
// under Stepwise, the candidates released for the first claims jobs of the
// order and not used are taken back before the others are placed.
func (e *Engine) preemptive(s *model.State, jobs []*model.Job, claims int, plan *Plan) {
	for t := range e.remain {
		e.remain[t] = s.Cluster.TypeGPUs(t)
	}
	e.resetRemainRes(s)
	c := s.Cluster
	selected, sets, ranks := e.selected[:0], e.sets[:0], e.ranks[:0]
	defer func() { // keep the buffers, not the jobs
		clear(selected)
		e.selected, e.sets, e.ranks = selected[:0], sets, ranks
	}()
	for i, j := range jobs {
		if j.State == model.Running {
			t, k := c.TypeOf(j.Alloc[0]), len(j.Alloc)
			if e.remain[t] >= k && e.bookRes(s, j, t, model.Replicas(k, j.Spec.ReplicaGPUs)) {
				e.remain[t] -= k
				continue
			}
			e.stop(j, plan)
			continue
		}
		ts := e.feasible(s, j, plan)
		if ts == 0 {
			continue
		}
		if t := e.reserve(s, j, ts); t >= 0 {
			selected, sets, ranks = append(selected, j), append(sets, ts), append(ranks, i)
			continue
		}
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Blocked, reasonNoCapacity})
	}
	for i, j := range selected {
		if ranks[i] >= claims {
			e.leaveClaims(plan)
		}
		if !e.place(s, j, sets[i], plan, true) {
			e.blocked(j, plan, reasonNoFit)
		}
	}
	e.cancelIdlePreemptions(plan)
}

// reserve books the job's minimum GPUs on its fastest feasible type that
// still has room; it returns the type or -1.
func (e *Engine) reserve(s *model.State, j *model.Job, ts TypeSet) int {
	n := j.Spec.MinGPUs
	best, bt := 0.0, -1
	reps := model.Replicas(n, j.Spec.ReplicaGPUs)
	for t := range s.Cluster.Types {
		if !ts.Has(t) || e.remain[t] < n || !e.resRoom(s, j, t, reps) {
			continue
		}
		if v := s.Profile.Speed(j, t, n); v > best {
			best, bt = v, t
		}
	}
	if bt >= 0 {
		e.remain[bt] -= n
		e.bookRes(s, j, bt, reps)
	}
	return bt
}

// cancelIdlePreemptions keeps every stop candidate whose GPUs were never
// released, or were released but nobody took, and records the remaining
// preemptions in the trace.
func (e *Engine) cancelIdlePreemptions(plan *Plan) {
	kept := plan.Preempt[:0]
	for i, j := range plan.Preempt {
		if i >= e.released {
			continue // never released: it keeps its GPUs
		}
		if e.pool.Retakable(j, j.Alloc) {
			e.pool.TakeJob(j, j.Alloc)
			continue
		}
		kept = append(kept, j)
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Preempted, reasonPreempted})
	}
	plan.Preempt = kept
}

// resetRemainRes sets, per GPU type, what its nodes offer in all of each
// resource besides GPUs: preemptive's budget (bookRes).
func (e *Engine) resetRemainRes(s *model.State) {
	res := len(s.Cluster.Resources())
	e.remainRes = e.remainRes[:0]
	if res == 0 {
		return
	}
	for range len(s.Cluster.Types) * res {
		e.remainRes = append(e.remainRes, 0)
	}
	for n, node := range s.Cluster.Nodes {
		capa := s.Cluster.Capacity(n)
		for r, v := range capa {
			e.remainRes[node.Type*res+r] += v
		}
	}
}

// resRoom reports whether the nodes of type t have left, in all, what reps
// replicas of j ask: preemptive selects a job only then, and stops a
// running job that does not fit the budget, so that a job kept waiting by
// CPU or memory, not GPUs, may still claim what lower jobs hold.
func (e *Engine) resRoom(s *model.State, j *model.Job, t, reps int) bool {
	req := s.Request(j)
	if len(e.remainRes) == 0 || req == nil {
		return true
	}
	left := e.remainRes[t*len(req):]
	for r, q := range req {
		if left[r] < int64(reps)*q {
			return false
		}
	}
	return true
}

// bookRes books reps replicas of j against type t's budget when it has
// room, and reports whether it had.
func (e *Engine) bookRes(s *model.State, j *model.Job, t, reps int) bool {
	if !e.resRoom(s, j, t, reps) {
		return false
	}
	if req := s.Request(j); len(e.remainRes) > 0 && req != nil {
		left := e.remainRes[t*len(req):]
		for r, q := range req {
			left[r] -= int64(reps) * q
		}
	}
	return true
}
