package engine

import (
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// Resizer lets a scaler change the GPU counts of elastic jobs during one
// round: running jobs that keep their GPUs this round, and jobs the round
// starts. Changes are tentative; at the end of the round the engine turns
// them into Plan.Resize entries (running jobs) or larger or smaller Start
// allocations (jobs the round starts, which therefore start at their new
// size without paying a resize).
//
// A job grows on free GPUs of its own type, on the nodes it already uses
// first; it shrinks by its last replicas (the highest replica indices, as
// seed 000 step 6 removes them). Sizes stay within [MinGPUs, MaxGPUs] in
// steps of the job's replica size, a job is never resized to a GPU count at
// which its profile gives it no speed on its type (a zero entry of the
// throughput matrix: it could make no progress there), and a job either
// grows or shrinks in one round, never both (see Plan for the order shells
// apply them in).
type Resizer struct {
	state *model.State
	pool  *Pool
	jobs  []*model.Job
	alloc map[*model.Job][]model.GPU
	// started marks jobs the round starts; touched the running jobs the
	// resizer changed (the pool holds them, so no placer moves them).
	started, touched map[*model.Job]bool
	// dir is +1 for a job grown this round, -1 for one shrunk: a job moves
	// one way per round, so that shells can apply every shrink before the
	// round's migrations and every growth after them.
	dir  map[*model.Job]int8
	list []*model.Job
	// surplus is, per GPU type, the GPUs the candidates hold above their
	// minimums (an upper bound once jobs are stopped or moved).
	surplus []int
	undo    []undoStep
	txn     bool
	buf     []model.GPU
	// gates is the engine's Gate (a queue's limit bounds growth), or nil.
	gates Gate
	// waitingMin is WaitingMin's answer for the round.
	waitingMin int
}

type undoStep struct {
	job   *model.Job
	dir   int8
	alloc []model.GPU
	taken []model.GPU // GPUs taken from the pool (grow) ...
	given []model.GPU // ... or given back to it (shrink)
}

func newResizer() *Resizer {
	return &Resizer{alloc: map[*model.Job][]model.GPU{}, started: map[*model.Job]bool{}, touched: map[*model.Job]bool{}, dir: map[*model.Job]int8{}}
}

// reset prepares the resizer for a round over the running elastic jobs.
func (r *Resizer) reset(s *model.State, p *Pool) {
	r.state, r.pool, r.jobs, r.undo, r.txn = s, p, r.jobs[:0], r.undo[:0], false
	clear(r.alloc)
	clear(r.started)
	clear(r.touched)
	clear(r.dir)
	r.surplus = slices.Grow(r.surplus[:0], len(s.Cluster.Types))[:len(s.Cluster.Types)]
	clear(r.surplus)
	for _, j := range s.Running() {
		if j.Spec.Elastic() {
			r.jobs = append(r.jobs, j)
			r.alloc[j] = j.Alloc
			r.surplus[s.Cluster.TypeOf(j.Alloc[0])] += len(j.Alloc) - j.Spec.MinGPUs
		}
	}
}

// WaitingMin returns the minimum GPUs of the jobs that wait for GPUs
// after the round's placements: waiting in the state, and neither started
// nor rejected by the round.
func (r *Resizer) WaitingMin() int { return r.waitingMin }

// countWaiting sets WaitingMin for the round's plan.
func (r *Resizer) countWaiting(s *model.State, plan *Plan) {
	r.waitingMin = 0
	for _, j := range s.Waiting() {
		r.waitingMin += j.Spec.MinGPUs
	}
	for _, a := range plan.Start {
		if a.Job.State == model.Waiting {
			r.waitingMin -= a.Job.Spec.MinGPUs
		}
	}
	for _, x := range plan.Reject {
		if x.Job.State == model.Waiting {
			r.waitingMin -= x.Job.Spec.MinGPUs
		}
	}
	r.waitingMin = max(r.waitingMin, 0)
}

// Surplus returns how many GPUs of type t the candidates hold above their
// minimums (at most; jobs this round stops or moves may still count).
func (r *Resizer) Surplus(t int) int { return r.surplus[t] }

// usable reports whether the resizer may change j: a job the round starts,
// or a running job that no stop or move of this round concerns.
func (r *Resizer) usable(j *model.Job) bool {
	return r.started[j] || r.touched[j] || r.pool.Settled(j)
}

// addStarted makes a job that the round starts a candidate.
func (r *Resizer) addStarted(a Assignment) {
	if !a.Job.Spec.Elastic() || r.started[a.Job] {
		return
	}
	r.jobs = append(r.jobs, a.Job)
	r.alloc[a.Job] = a.GPUs
	r.started[a.Job] = true
	r.surplus[r.pool.c.TypeOf(a.GPUs[0])] += len(a.GPUs) - a.Job.Spec.MinGPUs
}

// Jobs returns the elastic jobs the scaler may resize now: the running ones
// that this round neither stops nor moves, by arrival rank, then those the
// round starts, in start order. The slice is valid until the next call.
func (r *Resizer) Jobs() []*model.Job {
	r.list = r.list[:0]
	for _, j := range r.jobs {
		if r.usable(j) {
			r.list = append(r.list, j)
		}
	}
	return r.list
}

// Size returns job j's current tentative GPU count.
func (r *Resizer) Size(j *model.Job) int { return len(r.alloc[j]) }

// Type returns the GPU type index of job j's allocation.
func (r *Resizer) Type(j *model.Job) int { return r.pool.c.TypeOf(r.alloc[j][0]) }

// Pool returns the round's pool of free GPUs (read it; change it only
// through the resizer).
func (r *Resizer) Pool() *Pool { return r.pool }

// Grow gives job j k more GPUs of its type; false (and no change) when that
// would exceed its maximum, break its replica size, give it a size at which
// it cannot run on its type, or there are not k free GPUs of its type.
func (r *Resizer) Grow(j *model.Job, k int) bool {
	cur, ok := r.alloc[j]
	if !ok || !r.usable(j) || r.dir[j] < 0 || k <= 0 || len(cur)+k > j.Spec.MaxGPUs || k%j.Spec.Replica() != 0 {
		return false
	}
	t := r.pool.c.TypeOf(cur[0])
	if r.pool.Free(t) < k || !r.runs(j, t, len(cur)+k) || !r.admit(j, t, k) {
		return false
	}
	add := r.pickFor(j, cur, t, k)
	if add == nil {
		return false
	}
	r.took(j, t, k)
	r.pool.Take(add)
	next := append(slices.Clip(cur), add...)
	r.pool.Rebook(j, cur, next)
	r.record(undoStep{job: j, dir: r.dir[j], alloc: cur, taken: add})
	r.alloc[j] = next
	r.surplus[t] += k
	r.dir[j] = 1
	r.hold(j)
	return true
}

// pickFor is pick for job j: where j asks for resources besides GPUs, only
// among the free GPUs whose nodes have room for its replicas (nil when
// there are fewer than k).
func (r *Resizer) pickFor(j *model.Job, cur []model.GPU, t, k int) []model.GPU {
	hid, hopeless := r.pool.focus(j, k, 1<<uint(t))
	if hopeless {
		return nil
	}
	if hid {
		defer r.pool.unfocus()
	}
	if r.pool.Free(t) < k {
		return nil
	}
	r.pool.vec.quiet = true
	defer func() { r.pool.vec.quiet = false }()
	return r.pick(cur, t, k)
}

// pick chooses k free GPUs of type t: first on the nodes of cur, in order,
// then on the nodes with the most free GPUs. The pool is unchanged.
func (r *Resizer) pick(cur []model.GPU, t, k int) []model.GPU {
	r.buf = r.buf[:0]
	take := func(n int) {
		before := len(r.buf)
		r.buf = r.pool.Lowest(r.buf, n, k-len(r.buf))
		r.pool.Take(r.buf[before:]) // so that later lookups skip them
	}
	for i, g := range cur {
		if len(r.buf) < k && (i == 0 || g.Node != cur[i-1].Node) {
			take(int(g.Node))
		}
	}
	for len(r.buf) < k {
		take(r.pool.Fullest(t))
	}
	r.pool.Give(r.buf)
	return slices.Clone(r.buf)
}

// Shrink takes k GPUs (its last replicas) from job j; false (and no change)
// when that would go below its minimum, break its replica size, or give it a
// size at which it cannot run on its type.
func (r *Resizer) Shrink(j *model.Job, k int) bool {
	cur, ok := r.alloc[j]
	if !ok || !r.usable(j) || r.dir[j] > 0 || k <= 0 || len(cur)-k < j.Spec.MinGPUs || k%j.Spec.Replica() != 0 {
		return false
	}
	if !r.runs(j, r.pool.c.TypeOf(cur[0]), len(cur)-k) {
		return false
	}
	keep, drop := cur[:len(cur)-k:len(cur)-k], cur[len(cur)-k:]
	r.pool.Give(drop)
	r.pool.Rebook(j, cur, keep)
	r.took(j, r.pool.c.TypeOf(cur[0]), -k)
	r.record(undoStep{job: j, dir: r.dir[j], alloc: cur, given: drop})
	r.alloc[j] = keep
	r.surplus[r.pool.c.TypeOf(cur[0])] -= k
	r.dir[j] = -1
	r.hold(j)
	return true
}

// runs reports whether job j makes progress on n GPUs of type t: its
// profile gives it a positive speed there.
func (r *Resizer) runs(j *model.Job, t, n int) bool {
	return r.state.Profile.Speed(j, t, n) > 0
}

// couldFit reports whether free and surplus GPUs of some type in ts add up
// to j's minimum: a necessary condition for donations to make room.
func (r *Resizer) couldFit(j *model.Job, ts TypeSet) bool {
	for t := range r.surplus {
		if ts.Has(t) && r.surplus[t] > 0 && r.pool.Free(t)+r.surplus[t] >= j.Spec.MinGPUs {
			return true
		}
	}
	return false
}

// hold keeps placers from moving a running job the resizer changed.
func (r *Resizer) hold(j *model.Job) {
	if !r.started[j] {
		r.touched[j] = true
		r.pool.Hold(j)
	}
}

func (r *Resizer) record(u undoStep) {
	if r.txn {
		r.undo = append(r.undo, u)
	}
}

// begin starts recording changes so that rollback can undo them.
func (r *Resizer) begin() { r.txn, r.undo = true, r.undo[:0] }

// commit keeps the changes made since begin.
func (r *Resizer) commit() { r.txn, r.undo = false, r.undo[:0] }

// rollback undoes the changes made since begin, newest first.
func (r *Resizer) rollback() {
	for i := len(r.undo) - 1; i >= 0; i-- {
		u := r.undo[i]
		r.pool.Give(u.taken)
		r.pool.Take(u.given)
		r.pool.Rebook(u.job, r.alloc[u.job], u.alloc)
		r.took(u.job, r.pool.c.TypeOf(u.alloc[0]), len(u.given)-len(u.taken))
		r.surplus[r.pool.c.TypeOf(u.alloc[0])] += len(u.given) - len(u.taken)
		r.alloc[u.job] = u.alloc
		r.dir[u.job] = u.dir
	}
	r.txn, r.undo = false, r.undo[:0]
}

// finish writes the round's resizes into plan: new sizes of started jobs
// replace their Start allocations; changed running jobs get a Resize.
func (r *Resizer) finish(plan *Plan) {
	for i, a := range plan.Start {
		if r.started[a.Job] {
			plan.Start[i].GPUs = r.alloc[a.Job]
		}
	}
	for _, j := range r.jobs {
		if r.started[j] || !r.touched[j] || slices.Equal(r.alloc[j], j.Alloc) {
			continue
		}
		plan.Resize = append(plan.Resize, Assignment{Job: j, GPUs: r.alloc[j]})
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Resized, reasonResized})
	}
}

// admit reports whether the gate lets j take k more GPUs of type t.
func (r *Resizer) admit(j *model.Job, t, k int) bool {
	return r.gates == nil || r.gates.Admit(j, k, 1<<uint(t), false) != 0
}

// took tells the gate that j took k more GPUs of type t (k < 0: fewer).
func (r *Resizer) took(j *model.Job, t, k int) {
	if r.gates != nil {
		r.gates.Took(j, t, k)
	}
}
