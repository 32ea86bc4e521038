package quota

import (
	"fmt"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Limit implements engine.Gate: the types of ts on which j's queue may ever
// hold n GPUs.
func (p *Policy) Limit(j *model.Job, n int, ts engine.TypeSet) (engine.TypeSet, string) {
	q := p.queueOf(j)
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
// GPUs within its queue's limit, and with claim within its quota.
func (p *Policy) Admit(j *model.Job, n int, ts engine.TypeSet, claim bool) engine.TypeSet {
	q := p.queueOf(j)
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

// Took implements engine.Gate.
func (p *Policy) Took(j *model.Job, t, n int) {
	p.used[p.queueOf(j)][t] += n
}

// Done implements engine.Gate: it counts the round's reclaims — stopped
// reclaim candidates whose GPUs a job of another queue takes — names them
// in the trace, and records the allocation the plan leaves, which
// the next round charges.
func (p *Policy) Done(s *model.State, plan *engine.Plan, _ model.Time) {
	clear(p.alloc)
	for _, a := range plan.Start {
		for _, g := range a.GPUs {
			p.taker[g] = p.queueOf(a.Job)
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
	clear(p.taker)
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

// takenByOther reports whether a job of another queue starts on one of
// preempted job j's GPUs: the preemption is a reclaim, not the inner
// policy's preemption within a queue.
func (p *Policy) takenByOther(j *model.Job) bool {
	q := p.queueOf(j)
	for _, g := range j.Alloc {
		if t, ok := p.taker[g]; ok && t != q {
			return true
		}
	}
	return false
}
