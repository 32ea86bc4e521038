package engine

import "github.com/gpusched/gpusched/core/model"

// candInfo is what partition asks of a stop candidate, computed once per
// round: the GPU types it holds and its Gate key (Gate.Key; -1: none).
type candInfo struct {
	job   *model.Job
	types TypeSet
	key   int32
}

// maxGateKey bounds the Gate keys that partition memoises; a candidate
// with a larger key is asked about (Gate.MayTake) one by one.
const maxGateKey = 1 << 20

// candCache holds a candInfo per stop candidate, at the candidate's index
// in plan.Preempt (an entry whose job is not the candidate there is stale
// and computed again), and partition's memo of Gate.MayTake by key for
// the class it partitions for (valid while its gen is the cache's).
type candCache struct {
	info    []candInfo
	scratch []candInfo
	helps   []bool // partition's answers, by candidate
	memo    []keyMemo
	gen     uint32
}

// keyMemo is Gate.MayTake's answer for one key, valid at generation gen.
type keyMemo struct {
	gen uint32
	ok  bool
}

// reset forgets every candidate (at the end of a round: it holds no job
// past it, and a job's allocation may differ in the next).
func (c *candCache) reset() {
	clear(c.info)
	c.info = c.info[:0]
	clear(c.scratch[:cap(c.scratch)])
}

// infos returns the candInfo of every candidate of plan.Preempt, valid
// from index from on.
func (e *Engine) infos(plan *Plan, from int) []candInfo {
	c := &e.cands
	if n := len(plan.Preempt); len(c.info) < n {
		c.info = append(c.info, make([]candInfo, n-len(c.info))...)
	}
	info := c.info[:len(plan.Preempt)]
	for i := from; i < len(info); i++ {
		if v := plan.Preempt[i]; info[i].job != v {
			info[i] = e.candInfo(v)
		}
	}
	return info
}

// candInfo computes stop candidate v's info.
func (e *Engine) candInfo(v *model.Job) candInfo {
	ci := candInfo{job: v, key: -1}
	for _, g := range v.Alloc {
		ci.types |= 1 << uint(e.cluster.TypeOf(g))
	}
	if e.gates != nil {
		if k := e.gates.Key(v); k >= 0 && k < maxGateKey {
			ci.key = int32(k)
		}
	}
	return ci
}

// newClass starts partition's memo of Gate.MayTake for a new class.
func (c *candCache) newClass() {
	c.gen++
	if c.gen == 0 { // wrapped: forget every answer
		clear(c.memo)
		c.gen = 1
	}
}

// helpsInfo reports whether candidate ci holds a GPU of a type in ts that
// a job of class cl may take (Gate.MayTake, memoised by the candidate's
// key within the class).
func (e *Engine) helpsInfo(cl Class, ci candInfo, ts TypeSet) bool {
	if ci.types&ts == 0 {
		return false
	}
	if e.gates == nil {
		return true
	}
	if ci.key < 0 {
		return e.gates.MayTake(cl, ci.job)
	}
	c := &e.cands
	if int(ci.key) >= len(c.memo) {
		c.memo = append(c.memo, make([]keyMemo, int(ci.key)+1-len(c.memo))...)
	}
	m := &c.memo[ci.key]
	if m.gen != c.gen {
		m.gen, m.ok = c.gen, e.gates.MayTake(cl, ci.job)
	}
	return m.ok
}

// planSizes are the lengths of a round's start and trace lists: the next
// round, whose plan is usually alike, allocates them at once rather than
// growing them (the plan is the caller's, so each round allocates its own).
type planSizes struct{ start, trace int }

// presize gives plan's lists the capacity of the last round's.
func (ps planSizes) presize(plan *Plan) {
	if ps.start > 0 {
		plan.Start = make([]Assignment, 0, ps.start)
	}
	if ps.trace > 0 {
		plan.Trace = make([]Decision, 0, ps.trace)
	}
}

// record notes plan's sizes and leaves an empty list nil, as a round that
// did not presize it does.
func (ps *planSizes) record(plan *Plan) {
	ps.start, ps.trace = len(plan.Start), len(plan.Trace)
	if len(plan.Start) == 0 {
		plan.Start = nil
	}
	if len(plan.Trace) == 0 {
		plan.Trace = nil
	}
}
