package engine

import (
	"errors"

	"github.com/gpusched/gpusched/core/model"
)

// Engine runs scheduling rounds. Build it with New.
type Engine struct {
	policy QueuePolicy
	placer Placer
	scaler Scaler

	pool    *Pool
	cluster *model.Cluster
	order   []*model.Job
	// selected, with their types and ranks, are preemptive's scratch.
	selected []*model.Job
	sets     []TypeSet
	ranks    []int
	remain   []int
	// remainRes is preemptive's budget of other resources per type.
	remainRes []int64
	resizer   *Resizer
	now       model.Time
	// released counts the stop candidates (plan.Preempt) whose GPUs are
	// already free in the pool, a prefix of plan.Preempt: candidates are
	// released only when a placement cannot be made without their GPUs.
	released int
	// pause is the reason a placer gave for holding back the job being
	// placed, or ""; short names the resource besides GPUs that kept it
	// from GPUs that were free (placeWith), or "".
	pause, short string
	shortReasons map[string]string // shortReason's
	// victims orders the stop candidates by lost work (victims.go).
	victims victimOrder
	// gates is the policy's Gate (gate.go), or nil; claiming is set while a
	// job is placed on the GPUs of stop candidates; blockedLanes marks the
	// lanes of a strict order that a blocked job closed this round.
	gates        Gate
	claiming     bool
	blockedLanes []bool
	scratch      []*model.Job
	yieldBuf     []*model.Job // yield's candidates
	yieldRoom    []int        // yield's free GPUs per type, moves included
	usedBuf      []bool
	// usable ends the stop candidates that can help the job being claimed
	// for (partition); noFit holds the claims that cannot fit this round.
	usable   int
	noFit    map[noFitKey]bool
	noFitVec map[noFitKey][]vecShape // noFit for jobs that ask for resources
	// parted says that the unreleased candidates are partitioned for the
	// types partTS (partition), which later claims for them reuse.
	parted    bool
	partTS    TypeSet
	partClass Class
	// owner maps the free GPUs of released candidates to them, and
	// consumed holds the candidates a placement took GPUs of (with a Gate:
	// own, consume).
	owner    owners
	consumed map[*model.Job]bool
	// none remembers, per (types, 0, class), the version of the set of
	// unreleased candidates (setVersion) at which none of them could help
	// a claiming job of that class (partition).
	none       map[noFitKey]int64
	setVersion int64
	// cands caches what partition asks of each stop candidate (cands.go).
	cands candCache
	// sizes are the lengths of the last round's plan (cands.go).
	lastSizes planSizes
	// pastClaims is set once the walk has left the leading Claim jobs of
	// a Stepwise order (leaveClaims).
	pastClaims bool
	// plan is the round's plan while Schedule builds it (a field, so that
	// the stages' pointers to it do not move it to the heap every round).
	plan Plan
}

// New assembles an engine from its stages; scaler may be nil (no resizing).
func New(policy QueuePolicy, placer Placer, scaler Scaler) (*Engine, error) {
	if policy == nil || placer == nil {
		return nil, errors.New("engine: a queue policy and a placer are required")
	}
	e := &Engine{policy: policy, placer: placer, scaler: scaler, resizer: newResizer()}
	e.gates = e.gate()
	e.resizer.gates = e.gates
	return e, nil
}

// Policy returns the engine's queue policy (the queue layer, package
// quota, when queues are configured).
func (e *Engine) Policy() QueuePolicy { return e.policy }

// Names returns the names of the engine's policy, placer and scaler
// ("none" when there is no scaler).
func (e *Engine) Names() (policy, placer, scaler string) {
	scaler = "none"
	if e.scaler != nil {
		scaler = e.scaler.Name()
	}
	return e.policy.Name(), e.placer.Name(), scaler
}

// Schedule computes one round's plan for state s at time now. It does not
// change s.
func (e *Engine) Schedule(s *model.State, now model.Time) Plan {
	changed := e.cluster != s.Cluster
	if changed {
		e.pool, e.cluster = NewPool(s.Cluster), s.Cluster
		e.remain = make([]int, len(s.Cluster.Types))
	}
	if e.gates != nil {
		e.owner.reset(s.Cluster, changed)
	}
	e.pool.Reset(s)
	e.now = now
	ord := e.policy.Order(s, now, e.order[:0])
	e.order = ord.Jobs[:0]
	e.plan = Plan{Updates: ord.Updates, Wake: -1}
	plan := &e.plan
	e.lastSizes.presize(plan)
	if e.scaler != nil {
		e.resizer.reset(s, e.pool)
	}
	e.released = 0
	e.victims.reset(len(ord.Stop), len(s.Cluster.Types), ord.Stepwise)
	clear(e.noFit)
	clear(e.noFitVec)
	clear(e.consumed)
	clear(e.none)
	e.parted, e.pastClaims = false, false
	clear(e.blockedLanes)
	if len(s.Waiting()) > 0 {
		// A stop only makes room for a waiting job; with none, every stop
		// would be cancelled, and the job stays free to be resized.
		for _, j := range ord.Stop {
			e.stop(j, plan)
		}
	}
	movedUp := false
	switch {
	case ord.Types != nil:
		e.assigned(s, ord, plan)
	case ord.Preemptive:
		e.preemptive(s, ord.Jobs, ord.Claim, plan)
	default:
		e.walk(s, ord, plan)
		e.cancelIdlePreemptions(plan)
		e.upgrade(s, plan)
		movedUp = e.moveUp(s, plan)
	}
	if e.scaler != nil {
		e.scale(s, now, plan)
	}
	if movedUp {
		// A moved job is no resize candidate this round: a round at once
		// lets the scaler see it on its new GPUs.
		plan.Wake = now
	}
	if w, ok := e.policy.(Waker); ok {
		if next := w.Next(now); next >= 0 && (plan.Wake < 0 || next < plan.Wake) {
			plan.Wake = next
		}
	}
	if e.gates != nil {
		e.gates.Done(s, plan, now)
	}
	e.cands.reset()
	e.lastSizes.record(plan)
	out := *plan
	e.plan = Plan{} // the caller's now: not kept alive here
	return out
}

// scale runs the scaler over the running and newly started elastic jobs and
// records the resizes in plan.
func (e *Engine) scale(s *model.State, now model.Time, plan *Plan) {
	r := e.resizer
	r.countWaiting(s, plan)
	e.scaler.Scale(s, now, r)
	r.finish(plan)
	if w, ok := e.scaler.(Waker); ok {
		plan.Wake = w.Next(now)
	}
}

// walk places waiting jobs in order; without backfill it stops at the first
// job that does not fit, once a Yielder placer could not make room for it
// (yield). Without backfill, an elastic job that would start below its
// requested size first has running jobs make room for the whole of it
// (yieldWhole).
func (e *Engine) walk(s *model.State, ord Order, plan *Plan) {
	for i, j := range ord.Jobs {
		if i == ord.Claim {
			e.leaveClaims(plan)
		}
		if j.State != model.Waiting || e.laneBlocked(ord, i) {
			continue
		}
		ts := e.feasible(s, j, plan)
		if ts == 0 {
			continue
		}
		if !ord.Backfill && ord.Lanes == nil && e.yieldWhole(s, j, ts, plan) {
			continue // the head of a strict queue at its requested size, after upgraded jobs yielded
		}
		// With a Gate every job may claim; the gate says whose GPUs.
		if e.place(s, j, ts, plan, i < ord.Claim || e.gates != nil) {
			continue
		}
		if !ord.Backfill && ord.Lanes == nil && e.yield(s, j, ts, plan) {
			continue // the head of a strict queue, after upgraded jobs yielded
		}
		e.blocked(j, plan, reasonNoFit)
		if !ord.Backfill && !e.blockLane(ord, i) {
			return
		}
	}
}

// feasible returns the types on which waiting job j can ever run at its
// minimum (Feasible, and its queue's limit when the policy is a Gate); when
// there is none it rejects the job and returns 0.
func (e *Engine) feasible(s *model.State, j *model.Job, plan *Plan) TypeSet {
	ts := Feasible(s, j, j.Spec.MinGPUs)
	if ts == 0 {
		e.reject(s, j, plan)
		return 0
	}
	if e.gates == nil {
		return ts
	}
	lim, why := e.gates.Limit(j, j.Spec.MinGPUs, ts)
	if lim == 0 {
		plan.Reject = append(plan.Reject, Rejection{Job: j, Reason: why})
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Unschedulable, why})
	}
	return lim
}

// stop makes running job j a candidate for preemption: it may no longer be
// moved, and its GPUs are released when a placement needs them.
func (e *Engine) stop(j *model.Job, plan *Plan) {
	plan.Preempt = append(plan.Preempt, j)
	e.pool.Hold(j)
}

// place places j on free GPUs if it can; otherwise, when j may claim them,
// it releases the GPUs of stop candidates and tries again (claim); and
// then, with a donor scaler, it shrinks elastic jobs for j.
func (e *Engine) place(s *model.State, j *model.Job, ts TypeSet, plan *Plan, claim bool) bool {
	e.pause, e.short = "", ""
	// Under Order.Stepwise, released candidates' GPUs are free in the pool
	// for the leading claiming jobs: only within their quota (Gate).
	e.claiming = claim && e.victims.force && !e.pastClaims && e.released > 0
	placed := e.reclaim(s, j, ts, plan) || e.tryPlace(s, j, ts, plan)
	e.claiming = false
	if placed {
		return true
	}
	if claim && e.released < len(plan.Preempt) && e.claim(s, j, ts, plan) {
		return true
	}
	return e.donate(s, j, ts, plan)
}

// donate asks a Donor scaler for one replica at a time until j fits; it
// undoes every donation when j still does not fit.
func (e *Engine) donate(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	d, ok := e.scaler.(Donor)
	if !ok {
		return false
	}
	r := e.resizer
	if !r.couldFit(j, ts) {
		return false
	}
	r.begin()
	for d.Donate(s, e.now, r, j, ts) {
		if e.tryPlace(s, j, ts, plan) {
			r.commit()
			return true
		}
	}
	r.rollback()
	return false
}

// tryPlace tries the job's requested size, then its minimum. With a scaler,
// an elastic job starts at its minimum (gang) and the scaler decides the
// rest (seed 000: a job starts once its minimum replicas can run).
func (e *Engine) tryPlace(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	sizes, k := e.sizes(j)
	for i := range k {
		if fit := e.admit(j, sizes[i], fitTypes(s, j, ts, sizes[i])); fit != 0 && e.placeOn(s, j, fit, plan, sizes[i], i == 1) {
			return true
		}
	}
	return false
}

// sizes returns the GPU counts that tryPlace attempts for j, in order, and
// how many of them there are (1 or 2).
func (e *Engine) sizes(j *model.Job) ([2]int, int) {
	sizes := [2]int{j.Spec.GPUs, j.Spec.MinGPUs}
	if e.scaler != nil && j.Spec.Elastic() {
		sizes[0] = j.Spec.MinGPUs
	}
	if sizes[1] == sizes[0] {
		return sizes, 1
	}
	return sizes, 2
}

// fitTypes returns the types on which j can run with n GPUs, given ts, its
// feasible types at its minimum.
func fitTypes(s *model.State, j *model.Job, ts TypeSet, n int) TypeSet {
	if n == j.Spec.MinGPUs {
		return ts
	}
	return Feasible(s, j, n)
}

// placeOn places j on n GPUs of a type in fit if the placer finds them and
// records the start in plan; minOnly says that n is j's fallback minimum.
func (e *Engine) placeOn(s *model.State, j *model.Job, fit TypeSet, plan *Plan, n int, minOnly bool) bool {
	pl := e.placeWith(s, j, n, fit)
	if pl.GPUs == nil {
		if pl.Pause != "" {
			e.pause = pl.Pause
		}
		return false
	}
	if !e.admitOn(j, n, pl.GPUs) {
		return false
	}
	e.commit(j, pl, plan)
	e.took(j, pl.GPUs, len(pl.GPUs))
	plan.Start = append(plan.Start, Assignment{Job: j, GPUs: pl.GPUs})
	if e.scaler != nil {
		e.resizer.addStarted(plan.Start[len(plan.Start)-1])
	}
	reason := reasonPlaced
	if minOnly {
		reason = reasonMinOnly
	}
	plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Placed, reason})
	return true
}

// blocked records that waiting job j was not placed: paused when the placer
// held it back in any attempt to place it this round (Placement.Pause),
// otherwise blocked for reason.
func (e *Engine) blocked(j *model.Job, plan *Plan, reason string) {
	if e.pause != "" {
		plan.Paused = append(plan.Paused, Pause{Job: j, Reason: e.pause})
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Paused, e.pause})
		return
	}
	if reason == reasonNoFit && e.short != "" {
		reason = e.shortReason(e.short)
	}
	plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Blocked, reason})
}

// commit applies a placement of job j to the pool: moved jobs leave their
// GPUs and take their new ones, then j takes its own.
func (e *Engine) commit(j *model.Job, pl Placement, plan *Plan) {
	if len(pl.Moves) > 0 {
		clear(e.noFit)
		clear(e.noFitVec)
	}
	for _, m := range pl.Moves {
		e.pool.Release(m.Job)
		e.took(m.Job, m.Job.Alloc, -len(m.Job.Alloc))
	}
	for _, m := range pl.Moves {
		e.consume(m.GPUs)
		e.pool.TakeJob(m.Job, m.GPUs)
		e.took(m.Job, m.GPUs, len(m.GPUs))
		plan.Migrate = append(plan.Migrate, m)
		plan.Trace = append(plan.Trace, Decision{m.Job.Spec.ID, Migrated, reasonMigrated})
	}
	e.consume(pl.GPUs)
	e.pool.TakeJob(j, pl.GPUs)
}

// reject records that waiting job j can never run here, and why (Unfit).
func (e *Engine) reject(s *model.State, j *model.Job, plan *Plan) {
	why := Unfit(s, j, j.Spec.MinGPUs)
	plan.Reject = append(plan.Reject, Rejection{Job: j, Reason: why})
	plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Unschedulable, why})
}
