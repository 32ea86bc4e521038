package engine

import (
	"math"
	"math/bits"

	"github.com/gpusched/gpusched/core/model"
)

// A node starves this round when what it has free of some resource is
// less than the least that any job of the round asks of it per replica
// (the floor): no job can use its free GPUs until something there ends,
// shrinks or moves. The pool keeps those GPUs out of its free masks and
// indexes (Pool.starved), so that placers and the per-job focus never
// look at them — on a cluster whose CPU or memory runs out first, most
// free GPUs are such, and a round would otherwise visit each of them for
// every waiting job. charge and Give reconsider a node whenever what it
// has free changes; Take and AllFree see starved GPUs as free.

// resetFloor computes the round's floor from every waiting and running job
// of s and sets aside the free GPUs of starving nodes. When some job asks
// for nothing the cluster models, the floor is zero and no node starves.
func (p *Pool) resetFloor(s *model.State) {
	v := &p.vec
	v.floor, v.ceil = v.floor[:0], v.ceil[:0]
	clear(v.starvedOf)
	clear(v.starvedBy)
	if v.res == 0 {
		return
	}
	for range v.res {
		v.floor, v.ceil = append(v.floor, math.MaxInt64), append(v.ceil, 0)
	}
	for _, jobs := range [2][]*model.Job{s.Waiting(), s.Running()} {
		for _, j := range jobs {
			req := s.Request(j)
			if req == nil {
				v.floor, v.ceil = v.floor[:0], v.ceil[:0]
				return
			}
			for r, q := range req {
				v.floor[r], v.ceil[r] = min(v.floor[r], q), max(v.ceil[r], q)
			}
		}
	}
	for n := range p.c.Nodes {
		v.starveRes[n] = -1
		p.reconsider(n)
	}
}

// reconsider sets node n's free GPUs aside when it starves and gives them
// back when it no longer does.
func (p *Pool) reconsider(n int) {
	v := &p.vec
	if len(v.floor) == 0 || v.quiet {
		return
	}
	p.unhide(n)
	free, starve := p.NodeFreeVec(n), -1
	for r, f := range v.floor {
		if f > 0 && free[r] < f {
			starve = r
			break
		}
	}
	switch {
	case starve >= 0 && p.free[n] != 0:
		m := p.free[n]
		p.set(n, 0)
		p.setStarved(n, p.starved[n]|m, starve)
	case starve < 0 && p.starved[n] != 0:
		m := p.starved[n]
		p.setStarved(n, 0, -1)
		p.set(n, p.free[n]|m)
	default:
		p.setStarved(n, p.starved[n], starve)
	}
	p.setRich(n, starve < 0 && covers(free, v.ceil))
}

// setRich records whether node n's free resources cover a replica of any
// job of the round (rich), moving its free GPUs between the tight index
// and the rich counts.
func (p *Pool) setRich(n int, rich bool) {
	if p.rich[n] == rich {
		return
	}
	t, k := p.c.Nodes[n].Type, bits.OnesCount64(p.free[n])
	switch {
	case rich:
		p.richOf[t][k]++
		if k > 0 {
			p.tight[t].remove(n)
		}
	default:
		p.richOf[t][k]--
		if k > 0 {
			p.tight[t].add(n)
		}
	}
	p.rich[n] = rich
}

// moveTight follows a change of node n's free GPUs (of type t) from
// before to after in the tight index or the rich counts.
func (p *Pool) moveTight(n, t, before, after int) {
	if p.rich[n] {
		p.richOf[t][before]--
		p.richOf[t][after]++
		return
	}
	switch {
	case before == 0 && after > 0:
		p.tight[t].add(n)
	case before > 0 && after == 0:
		p.tight[t].remove(n)
	}
}

// richUsable returns how many of the rich nodes' free GPUs of type t a
// job of n GPUs could use, where each node holds at most one of its
// replicas: min(free, n) per node.
func (p *Pool) richUsable(t, n int) int {
	u := 0
	for k, c := range p.richOf[t] {
		u += c * min(k, n)
	}
	return u
}

// setStarved records node n's starved GPUs and the resource it lacks,
// keeping the per-type and per-resource counts.
func (p *Pool) setStarved(n int, mask uint64, res int) {
	v := &p.vec
	before, after := bits.OnesCount64(p.starved[n]), bits.OnesCount64(mask)
	if r := v.starveRes[n]; r >= 0 {
		v.starvedBy[r] -= before
	}
	if res >= 0 {
		v.starvedBy[res] += after
	}
	v.starvedOf[p.c.Nodes[n].Type] += after - before
	p.starved[n], v.starveRes[n] = mask, int8(res)
}

// starvedShort returns the resource that starves the most GPUs when the
// free GPUs of the types in fit, counting the starved ones, number n or
// more (so that the starved nodes are why a placement of n failed), else
// "".
func (p *Pool) starvedShort(n int, fit TypeSet) string {
	v := &p.vec
	if len(v.floor) == 0 {
		return ""
	}
	p.settle()
	total, starved := 0, 0
	for t := range p.c.Types {
		if fit.Has(t) {
			total += p.typeFree[t] + v.starvedOf[t]
			starved += v.starvedOf[t]
		}
	}
	if starved == 0 || total < n {
		return ""
	}
	best, name := 0, ""
	for r, k := range v.starvedBy {
		if k > best {
			best, name = k, p.c.Resources()[r]
		}
	}
	return name
}

// Starved returns how many free GPUs of type t starve for other resources
// this round (the pool's Free does not count them).
func (p *Pool) Starved(t int) int {
	if len(p.vec.starvedOf) == 0 {
		return 0
	}
	return p.vec.starvedOf[t]
}
