package quota

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Order implements engine.QueuePolicy: it charges the queues' usage, asks
// the inner policy for its order and rearranges it by queue in two tiers
// (package doc), with reclaim candidates as stop candidates.
func (p *Policy) Order(s *model.State, now model.Time, buf []*model.Job) engine.Order {
	p.setCluster(s.Cluster)
	p.charge(now)
	p.baseline(s)
	clear(p.cands)
	p.round++
	clear(p.fallback)
	ord := p.inner.Order(s, now, buf)
	p.in = append(p.in[:0], ord.Jobs...)
	p.preemptive = ord.Preemptive
	for _, j := range p.in[:min(ord.Claim, len(p.in))] {
		p.mark(j, false, true, 0)
	}
	for q := range p.lanes {
		p.lanes[q] = p.lanes[q][:0]
	}
	for i, j := range p.in {
		q := p.queueOf(j)
		p.lanes[q] = append(p.lanes[q], i)
	}
	p.rank()
	// The inner order may be the state's own slice (fifo): write a slice
	// of our own (the engine passes it back as buf, which the inner policy
	// may fill; it was copied to p.in first).
	out, lanes, types := p.out[:0], p.laneOf[:0], p.types[:0]
	emit := func(q, i int) {
		out, lanes = append(out, p.in[i]), append(lanes, int32(q))
		if ord.Types != nil { // an allocation policy's types follow their jobs
			types = append(types, ord.Types[i])
		}
	}
	next := p.guaranteed(s, ord.Preemptive, emit)
	guaranteed := len(out)
	for _, j := range out {
		p.mark(j, true, false, 0)
	}
	if ord.Preemptive {
		p.budgeted(next, emit)
		p.borrowing(next, func(j *model.Job) bool { return j.State == model.Running }, emit)
		p.borrowing(next, func(j *model.Job) bool { return j.State != model.Running }, emit)
	} else {
		p.borrowing(next, func(*model.Job) bool { return true }, emit)
	}
	p.out, p.laneOf, p.types = out, lanes, types
	ord.Jobs, ord.Lanes = out, lanes
	if ord.Types != nil {
		ord.Types = types
	}
	// Guaranteed jobs claim first, stop candidates are released one by one
	// (MayTake says whose GPUs each job may take).
	ord.Claim, ord.Stepwise = guaranteed, true
	if !ord.Preemptive && guaranteed > 0 {
		ord.Stop = p.reclaim(s, ord.Stop, now)
	}
	clear(p.in) // hold no job past the call
	return ord
}

// guaranteed emits, queue by queue in fair-share order, the leading jobs of
// each lane that fit in the queue's guaranteed quota, and returns where
// each lane's borrowing part starts.
func (p *Policy) guaranteed(s *model.State, preemptive bool, emit func(q, i int)) []int {
	next := make([]int, len(p.queues))
	for q := range p.tent {
		if preemptive {
			clear(p.tent[q]) // running jobs count as the order reaches them
		} else {
			copy(p.tent[q], p.used[q])
		}
	}
	for _, q := range p.order {
		if !p.hasQuota[q] {
			continue
		}
		for _, i := range p.lanes[q] {
			if !p.entitled(s, q, p.in[i]) {
				break
			}
			emit(q, i)
			next[q]++
		}
	}
	return next
}

// entitled reports whether job j fits in queue q's guaranteed quota on top
// of what the tier has counted, and counts it: a running job on its GPUs, a
// waiting one at its minimum on its fastest type with quota left.
func (p *Policy) entitled(s *model.State, q int, j *model.Job) bool {
	if j.State == model.Running {
		t, n := s.Cluster.TypeOf(j.Alloc[0]), len(j.Alloc)
		if p.tent[q][t]+n > p.quota[q][t] {
			return false
		}
		p.tent[q][t] += n
		return true
	}
	n := j.Spec.MinGPUs
	var ok engine.TypeSet
	for t := range s.Cluster.Types {
		if p.tent[q][t]+n <= p.quota[q][t] {
			ok |= 1 << uint(t)
		}
	}
	if ok == 0 {
		return false
	}
	ok &= engine.Feasible(s, j, n)
	_, t := engine.BestSpeed(s, j, n, ok)
	if t < 0 {
		return false
	}
	p.tent[q][t] += n
	p.mark(j, false, false, ok)
	return true
}

// borrowing emits the rest of every lane, from next[q] on, that keep
// selects, queue by queue in fair-share order. A running job it emits runs
// beyond its quota: it becomes a reclaim candidate.
func (p *Policy) borrowing(next []int, keep func(*model.Job) bool, emit func(q, i int)) {
	for _, q := range p.order {
		for _, i := range p.lanes[q][next[q]:] {
			if j := p.in[i]; keep(j) {
				if j.State == model.Running {
					p.cands[j] = true
				}
				emit(q, i)
			}
		}
	}
}

// budgeted emits, for a preemptive inner order, the leading jobs of each
// lane's borrowing part, queue by queue in fair-share order, while they fit
// in the GPUs the queue's borrowing running jobs hold (waiting jobs at
// their minimum), and advances next past them. A queue thus keeps what it
// borrowed, and the inner policy decides within the queue which of its jobs
// hold it (its own preemption); no queue's borrowing job displaces
// another's (the engine selects preemptive orders by GPU count).
func (p *Policy) budgeted(next []int, emit func(q, i int)) {
	for _, q := range p.order {
		rest := p.lanes[q][next[q]:]
		budget := 0
		for _, i := range rest {
			if j := p.in[i]; j.State == model.Running {
				budget += len(j.Alloc)
			}
		}
		for _, i := range rest {
			j := p.in[i]
			n := j.Spec.MinGPUs
			if j.State == model.Running {
				n = len(j.Alloc)
			}
			if n > budget {
				break
			}
			budget -= n
			if j.State == model.Running {
				p.cands[j] = true
			}
			emit(q, i)
			next[q]++
		}
	}
}

// reclaim appends to stop the running jobs that give guaranteed quota back:
// from the queues that hold more than their quota of a type, the most
// over-served queue first; within a queue, when some of its jobs have
// checkpoints, those that would lose the least work first (the newest
// checkpoint), then the most recently started; as many as the queue's
// excess over its quota covers, so that reclaim never takes a queue below
// its own quota.
func (p *Policy) reclaim(s *model.State, stop []*model.Job, now model.Time) []*model.Job {
	clear(p.stop)
	for _, j := range stop {
		p.stop[j] = true
	}
	nt := len(s.Cluster.Types)
	for k := len(p.order) - 1; k >= 0; k-- {
		q := p.order[k]
		removed := make([]int, nt)
		jobs := p.run[q]
		ckpt := slices.ContainsFunc(jobs, func(j *model.Job) bool { return j.Checkpoint >= 0 })
		slices.SortFunc(jobs, func(a, b *model.Job) int {
			if ckpt {
				if c := cmp.Compare(a.LostWork(now), b.LostWork(now)); c != 0 {
					return c
				}
			}
			return cmp.Or(cmp.Compare(b.LastStart, a.LastStart), cmp.Compare(b.Seq, a.Seq))
		})
		for _, j := range jobs {
			t := s.Cluster.TypeOf(j.Alloc[0])
			if p.used[q][t]-p.quota[q][t]-removed[t] <= 0 || p.stop[j] {
				continue
			}
			removed[t] += len(j.Alloc)
			p.cands[j] = true
			stop = append(stop, j)
		}
	}
	return stop
}
