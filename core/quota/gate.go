package quota

import (
	"fmt"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Limit implements engine.Gate: the types of ts on which j's queue may ever
// hold n GPUs.
func (p *Policy) Limit(j *model.Job, n int, ts engine.TypeSet) (engine.TypeSet, string) {
	if !p.anyLimit && !p.anyRes && ts != 0 {
		return ts, "" // no queue has a limit
	}
	q := p.queueOf(j)
	if why := p.resourceNever(j, q, n); why != "" {
		return 0, why
	}
	out := ts
	for t := range p.cluster.Types {
		if ts.Has(t) && p.limit[q][t] >= 0 && n > p.limit[q][t] {
			out &^= 1 << uint(t)
		}
	}
	if out != 0 {
		return out, ""
	}
	return 0, fmt.Sprintf("its queue %s's limit is below its minimum of %d GPUs on every GPU type it can use", p.queues[q].Name, n)
}

// Admit implements engine.Gate: the types of ts on which j may take n more
// GPUs within its queue's limit, and, when it claims as a guaranteed job
// (whose claims may reclaim other queues' GPUs), within its quota: under a
// preemptive inner order, on the types where the guaranteed tier counted
// it within its quota (the queue's running jobs that the tier left out may
// lose their place); otherwise counting everything its queue holds. A job
// that is not guaranteed claims only its own queue's candidates (MayTake).
func (p *Policy) Admit(j *model.Job, n int, ts engine.TypeSet, claim bool) engine.TypeSet {
	if !claim && !p.anyLimit && !p.anyRes {
		return ts // no queue has a limit, and only a claim is held to the quota
	}
	q := p.queueOf(j)
	if !p.resourceRoom(j, q, n) {
		return 0
	}
	claim = claim && p.marks(j).guar
	if claim && p.preemptive {
		claim = false // the tier counted it; the running jobs it left out may go
	}
	out := ts
	for t := range p.cluster.Types {
		if !ts.Has(t) {
			continue
		}
		u := p.used[q][t] + n
		if (p.limit[q][t] >= 0 && u > p.limit[q][t]) || (claim && u > p.quota[q][t]) {
			out &^= 1 << uint(t)
		}
	}
	return out
}

// MayTake implements engine.Gate: a guaranteed job may take the GPUs of a
// stop candidate of another queue that held more than its quota of the
// candidate's type when the round began, on a type where the guaranteed
// tier counted the job within its own queue's quota (reclaim; Admit bounds
// it); any job, the GPUs of a candidate of its own queue when the inner
// policy lets it claim (its leading Order.Claim jobs; every job of a
// preemptive order) or when it is guaranteed there: the inner policy's own
// preemption, within a queue.
func (p *Policy) MayTake(c engine.Class, v *model.Job) bool {
	qv, t := p.queueOf(v), p.cluster.TypeOf(v.Alloc[0])
	if qv == c.N/2 {
		return c.N%2 == 1 || c.Types.Has(t)
	}
	return c.Types.Has(t) && p.over[qv][t]
}

// Key implements engine.Gate: MayTake depends on a candidate only through
// its queue and the type of its GPUs.
func (p *Policy) Key(v *model.Job) int {
	return p.queueOf(v)*len(p.cluster.Types) + p.cluster.TypeOf(v.Alloc[0])
}

// Class implements engine.Gate: N is twice the job's queue, plus one when
// the inner policy lets it claim; Types are the types on which it is
// guaranteed (none for a job that is not).
func (p *Policy) Class(j *model.Job) engine.Class {
	m := p.marks(j)
	c := 2 * p.queueOf(j)
	if p.preemptive || m.claim {
		c++
	}
	var ts engine.TypeSet
	if m.guar {
		ts = m.gtypes
	}
	return engine.Class{Types: ts, N: c}
}

// Took implements engine.Gate.
func (p *Policy) Took(j *model.Job, t, n int) {
	q := p.queueOf(j)
	p.used[q][t] += n
	p.tookResources(j, q, n)
}

// Done implements engine.Gate: it counts the round's reclaims — stopped
// candidates whose GPUs a guaranteed job of another queue takes — names them
// in the trace, and records the allocation the plan leaves, which
// the next round charges.
func (p *Policy) Done(s *model.State, plan *engine.Plan, _ model.Time) {
	clear(p.alloc)
	for _, a := range plan.Start {
		if !p.marks(a.Job).guar {
			continue // only a guaranteed job reclaims
		}
		q := int32(1 + p.queueOf(a.Job))
		for _, g := range a.GPUs {
			p.taker[p.gpuBase[g.Node]+int(g.Index)] = q
		}
	}
	clear(p.stop)
	reclaimed := false
	for _, j := range plan.Preempt {
		p.stop[j] = true
		if p.cands[j] && p.takenByOther(j) {
			p.reclaims++
			reclaimed = true
		} else {
			delete(p.cands, j)
		}
	}
	if reclaimed {
		p.renameTrace(plan)
	}
	for _, a := range plan.Start {
		for _, g := range a.GPUs {
			p.taker[p.gpuBase[g.Node]+int(g.Index)] = 0
		}
	}
	for _, a := range plan.Migrate {
		p.alloc[a.Job] = a.GPUs
	}
	for _, a := range plan.Resize {
		p.alloc[a.Job] = a.GPUs
	}
	p.held = p.held[:0]
	add := func(j *model.Job, gpus []model.GPU) {
		t, n := s.Cluster.TypeOf(gpus[0]), len(gpus)
		p.held = append(p.held, held{q: p.queueOf(j), rate: p.rate(s, j, t, n)})
	}
	for _, j := range s.Running() {
		if p.stop[j] {
			continue
		}
		gpus, ok := p.alloc[j]
		if !ok {
			gpus = j.Alloc
		}
		add(j, gpus)
	}
	for _, a := range plan.Start {
		add(a.Job, a.GPUs)
	}
	clear(p.cands)
	clear(p.stop)
	clear(p.alloc)
	clear(p.fallback)
}

// renameTrace gives the preemptions of the reclaimed jobs (the stopped
// candidates left in p.cands) the reason ReasonReclaim in plan's trace.
func (p *Policy) renameTrace(plan *engine.Plan) {
	ids := map[string]bool{}
	for _, j := range plan.Preempt {
		if p.cands[j] {
			ids[j.Spec.ID] = true
		}
	}
	for i := range plan.Trace {
		if d := &plan.Trace[i]; d.Status == engine.Preempted && ids[d.Job] {
			d.Reason = ReasonReclaim
		}
	}
}

// takenByOther reports whether a guaranteed job of another queue starts on
// one of preempted job j's GPUs: the preemption is a reclaim, not the inner
// policy's preemption within a queue (whose leftover GPUs anyone may use).
func (p *Policy) takenByOther(j *model.Job) bool {
	q := p.queueOf(j)
	for _, g := range j.Alloc {
		if t := p.taker[p.gpuBase[g.Node]+int(g.Index)]; t != 0 && int(t)-1 != q {
			return true
		}
	}
	return false
}
