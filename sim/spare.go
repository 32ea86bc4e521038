package sim

import (
	"container/heap"
	"math"
	"math/bits"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Spare nodes (Config.Spare, issue 28, docs/ENERGY.md#spare-nodes): the
// power manager keeps a few idle power-managed nodes of each kind on, so
// that the jobs that arrive rarely wait for a wake-up, and it makes the
// placers' choice of a node not up (asleep, or waking with no job), where
// an idle node of the same kind is up sooner, the choice of that node
// (standIn). A wake-up that delays one job
// shifts every later event of a strict queue, and which GPU types the
// long jobs find free diverges from the run with nodes on; with spares the
// run's schedule stays the one it would have with every node on, while
// nodes beyond the spares still sleep.
//
//   - Kinds: nodes are interchangeable when they have the same GPU type and
//     count, capacity, power description and links to storage (nodeKinds);
//     every power-managed node has a kind.
//   - Spares: an idle node due to suspend itself stays on (held) while
//     fewer than the kind's spares other idle nodes of its kind are on or
//     waking; when a job takes a node, sleeping nodes of its kind are
//     woken, with no job, until that many idle ones are on or waking again
//     (replenish). At the first submission that many nodes of each kind
//     are on.
//   - Gang: a kind's spares are Spare, or the nodes of the kind that the
//     largest gang of the workload that can run on the kind's GPU type
//     fills if more (largestGangs, gangNodes): a job's GPUs, or its maximum
//     when it is elastic and a scaler may grow it, taken from the trace as
//     an operator knows the largest job the cluster admits. A growth comes
//     soon after a start, often sooner than a wake-up, and in one step, and
//     a rigid gang may need more nodes at once than Spare; with spares for
//     the whole gang it finds its nodes up, as it does with every node on.
//     An elastic gang that a scaler may grow fills the nodes of its start
//     (its minimum) and, apart, those of its growth (maximum − minimum):
//     the jobs that arrive before the growth fill the rest of its start's
//     last node, so the growth finds whole nodes only (issue 28, seventh
//     session).
//   - Demand: spares are kept only while jobs keep coming: until
//     keepGaps(k) mean gaps between submissions after the last submission,
//     k gaps known (about spareGaps once there are many; far more while
//     there are few, whose mean says little of the rate); then they
//     suspend themselves, and the next submission wakes them again.
//   - Queue: while jobs wait, no idle node suspends itself, and sleeping
//     nodes of each kind are woken until its idle nodes hold the waiting
//     jobs that can run on its GPU type (wakeForQueue): the jobs behind a
//     blocked head start at once when it starts, on the nodes that are
//     idle then, which are up.

// spareGaps is how long spares are kept after the last submission, in mean
// gaps between submissions when the mean is known: the chance that a
// Poisson arrival process leaves a gap that long is e^−10, under 1 in
// 20,000 (chosen on issue 28's development set; 5 did as well). keepGaps
// keeps that chance when the mean is estimated from the gaps so far.
const spareGaps = 10

// keepGaps returns how many mean gaps, estimated from k gaps between
// submissions, spares are kept after the last one: k·(e^(spareGaps/k) − 1),
// with which a Poisson arrival process's next gap is longer with chance
// e^−spareGaps whatever its rate, the estimate's own error counted (the
// next gap Y and the sum S of k gaps, at rate λ: P(Y > c·S/k) =
// E[e^(−λcS/k)] = (1 + c/k)^−k). It tends to spareGaps as k grows (10.26
// at k = 199) and is far larger while few gaps are known (295 at k = 2),
// when their mean can be a fraction of the true one (issue 28, eighth
// session: spares that lapsed 2 s before the fourth submission).
func keepGaps(k int) float64 {
	return float64(k) * math.Expm1(spareGaps/float64(k))
}

// spares is the meter's spare nodes: zero when Config.Spare is 0.
type spares struct {
	n     int       // Config.Spare: 0 turns spares off
	want  []int     // per kind: idle nodes kept on, ≥ n (gangNodes)
	kind  []int32   // per node: its kind, -1 for a node that stays on
	kinds [][]int32 // the nodes of each kind, in index order
	// until is when the spares lapse: keepGaps mean gaps after the last
	// submission (MaxInt64 before the second).
	until       model.Time
	subs        int // submissions so far
	first, last model.Time
	queued      int // jobs waiting after the latest instant
	// For wakeForQueue: per job (by Seq), the GPU types it can run on at
	// its size (engine.Feasible); per GPU type, the most GPUs of one kind
	// of that type (0: no power-managed node), and the waiting jobs' GPUs.
	feasible []engine.TypeSet
	kindGPUs []int
	need     []int
}

// newSpares returns the spares of cfg, whose power description has
// power-managed nodes, for jobs (the trace) in state s (their speeds).
func newSpares(cfg *Config, s *model.State, jobs []*model.Job) spares {
	kind, kinds := nodeKinds(cfg)
	gangs := largestGangs(cfg, s, jobs)
	want := make([]int, len(kinds))
	for k, ns := range kinds {
		n := cfg.Cluster.Nodes[ns[0]]
		g := 0
		for _, r := range gangs[n.Type] {
			g = max(g, gangNodes(r, n.GPUs, len(ns)))
		}
		want[k] = max(cfg.Spare, g)
	}
	sp := spares{n: cfg.Spare, want: want, kind: kind, kinds: kinds, until: math.MaxInt64,
		feasible: make([]engine.TypeSet, len(jobs)), kindGPUs: make([]int, len(cfg.Cluster.Types)),
		need: make([]int, len(cfg.Cluster.Types))}
	for i, j := range jobs {
		sp.feasible[i] = engine.Feasible(s, j, j.Spec.GPUs)
	}
	for _, ns := range kinds {
		n := cfg.Cluster.Nodes[ns[0]]
		sp.kindGPUs[n.Type] = max(sp.kindGPUs[n.Type], n.GPUs*len(ns))
	}
	return sp
}

// gang is a job's size range on a GPU type: it starts at lo GPUs and may
// hold up to hi at once (lo = hi for a job that does not grow).
type gang struct{ lo, hi int }

// largestGangs returns, per GPU type, the size ranges of the jobs that may
// run there: from its minimum (at least 1) to the most GPUs it may hold at
// once, at most its GPUs, or its maximum when it is elastic and cfg's
// engine has a scaler that may grow it, on a type where it can run at that
// size (engine.Feasible: its type constraint, memory and speed), each
// range once. A gang that cannot run on a type needs none of its nodes. A
// job that does not grow starts with all its GPUs: lo = hi.
func largestGangs(cfg *Config, s *model.State, jobs []*model.Job) [][]gang {
	scales := false
	if cfg.Engine != nil {
		_, _, scaler := cfg.Engine.Names()
		scales = scaler != "none"
	}
	g := make([][]gang, len(cfg.Cluster.Types))
	for _, j := range jobs {
		hi, grows := j.Spec.GPUs, scales && j.Spec.Elastic()
		if grows {
			hi = j.Spec.MaxGPUs
		}
		lo := max(min(j.Spec.MinGPUs, hi), 1)
		var done engine.TypeSet // the types where j's largest size is found
		for n := hi; n >= lo; n-- {
			ts := engine.Feasible(s, j, n)
			for t := range g {
				if !ts.Has(t) || done.Has(t) {
					continue
				}
				done |= engine.TypeSet(1) << uint(t)
				r := gang{n, n}
				if grows {
					r.lo = lo
				}
				if !slices.Contains(g[t], r) {
					g[t] = append(g[t], r)
				}
			}
		}
	}
	return g
}

// gangNodes returns how many nodes of perNode GPUs gang r fills, at most n
// (the kind's nodes): the nodes of its start, lo GPUs, and the nodes of
// its growth, hi − lo GPUs, apart. A growth comes a round after the start,
// and the jobs that arrive in between fill the rest of the start's last
// node (pack's choice), so the growth finds whole nodes only.
func gangNodes(r gang, perNode, n int) int {
	return min(ceilDiv(r.lo, perNode)+ceilDiv(r.hi-r.lo, perNode), n)
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// nodeKinds groups cfg's power-managed nodes into kinds of interchangeable
// nodes: the same GPU type and count, capacity, power description and links
// to every storage device. It returns each node's kind (-1 for a node that
// stays on) and each kind's nodes.
func nodeKinds(cfg *Config) ([]int32, [][]int32) {
	c, p := cfg.Cluster, cfg.Power
	same := func(a, b int) bool {
		na, nb := c.Nodes[a], c.Nodes[b]
		if na.Type != nb.Type || na.GPUs != nb.GPUs || !na.Capacity.Equal(nb.Capacity) || p.Nodes[a] != p.Nodes[b] {
			return false
		}
		if n := cfg.Network; n != nil {
			for s := range n.Storage {
				if n.Link(a, s) != n.Link(b, s) {
					return false
				}
			}
		}
		return true
	}
	kind := make([]int32, len(c.Nodes))
	var kinds [][]int32
	for i := range c.Nodes {
		kind[i] = -1
		if !p.Nodes[i].Sleeps {
			continue
		}
		for k, ns := range kinds {
			if same(int(ns[0]), i) {
				kind[i], kinds[k] = int32(k), append(ns, int32(i))
				break
			}
		}
		if kind[i] < 0 {
			kind[i] = int32(len(kinds))
			kinds = append(kinds, []int32{int32(i)})
		}
	}
	return kind, kinds
}

// spareCount counts the idle nodes of kind k that are on or waking up and
// take no part of the job being placed, node except left out.
func (m *meter) spareCount(k, except int32) int {
	n := 0
	for _, o := range m.spares.kinds[k] {
		if om := &m.nodes[o]; o != except && om.busy == 0 && !om.asleep && m.count[o] == 0 {
			n++
		}
	}
	return n
}

// keep reports whether idle node, due to suspend itself at t, stays on:
// jobs wait, or it is one of the spares of its kind.
func (m *meter) keep(node int32, t model.Time) bool {
	sp := &m.spares
	if sp.n == 0 {
		return false
	}
	return sp.queued > 0 || t < sp.until && m.spareCount(sp.kind[node], node) < sp.want[sp.kind[node]]
}

// startSpares turns the spares of every kind on at t0, the lowest nodes,
// idle from t0.
func (m *meter) startSpares(t0 model.Time) {
	for k, ns := range m.spares.kinds {
		for _, o := range ns[:min(m.spares.want[k], len(ns))] {
			m.nodes[o].asleep = false
			m.idle(o, t0)
		}
	}
}

// submitted notes that n jobs were submitted at t: the spares are kept
// until keepGaps mean gaps later, and woken again if they had lapsed.
func (m *meter) submitted(t model.Time, n int) {
	if m == nil || m.spares.n == 0 || n == 0 {
		return
	}
	sp := &m.spares
	m.catchUp(t)
	lapsed := t >= sp.until
	if sp.subs == 0 {
		sp.first = t
	}
	sp.subs += n
	sp.last = t
	if sp.subs < 2 {
		return
	}
	gap := float64(sp.last-sp.first) / float64(sp.subs-1)
	sp.until = t + model.Time(math.Round(keepGaps(sp.subs-1)*gap))
	heap.Push(&m.pending, transition{t: sp.until, since: t, node: -1})
	if lapsed {
		for _, ns := range sp.kinds {
			m.replenish(ns[0], t)
		}
	}
}

// waiting notes that jobs ws wait after the instant t: while they do,
// nodes are woken for them (wakeForQueue); when none does any more, the
// idle nodes kept on for them may suspend themselves.
func (m *meter) waiting(t model.Time, ws []*model.Job) {
	sp := &m.spares
	was, n := sp.queued, len(ws)
	sp.queued = n
	if was > 0 && n == 0 {
		for _, ns := range sp.kinds {
			m.release(ns[0], t)
		}
	}
	if n > 0 && sp.n > 0 {
		m.wakeForQueue(t, ws)
	}
}

// wakeForQueue wakes at t, while jobs ws wait, sleeping nodes of each kind
// until its idle nodes on or waking hold the GPUs of the waiting jobs that
// can run on its GPU type (engine.Feasible at their size), each counted on
// every such type: when the head of a strict queue starts, the jobs behind
// it start at once on the nodes idle then, which are up, as with every
// node on (issue 28, eighth session).
func (m *meter) wakeForQueue(t model.Time, ws []*model.Job) {
	sp := &m.spares
	need := sp.need
	clear(need)
	short := 0 // types whose count may still matter: below one kind's GPUs
	for _, g := range sp.kindGPUs {
		if g > 0 {
			short++
		}
	}
	for _, j := range ws { // a long queue stops once every kind is covered
		for ts := uint64(sp.feasible[j.Seq]); ts != 0 && short > 0; ts &= ts - 1 {
			tp := bits.TrailingZeros64(ts)
			if g := sp.kindGPUs[tp]; need[tp] < g {
				if need[tp] += j.Spec.GPUs; need[tp] >= g {
					short--
				}
			}
		}
		if short == 0 {
			break
		}
	}
	for k, ns := range sp.kinds {
		nd := m.c.Nodes[ns[0]]
		m.wakeKind(int32(k), min(ceilDiv(need[nd.Type], nd.GPUs), len(ns)), t)
	}
}

// lapse lets the held nodes suspend themselves at s.t when no job was
// submitted since s.since.
func (m *meter) lapse(s transition) {
	if s.since != m.spares.last {
		return
	}
	for _, ns := range m.spares.kinds {
		m.release(ns[0], s.t)
	}
}

// replenish wakes sleeping nodes of node's kind at t, with no job, until
// the kind's spares are on or waking.
func (m *meter) replenish(node int32, t model.Time) {
	sp := &m.spares
	if sp.n == 0 || sp.kind[node] < 0 || t >= sp.until {
		return
	}
	k := sp.kind[node]
	m.wakeKind(k, sp.want[k], t)
}

// wakeKind wakes sleeping nodes of kind k at t, with no job, lowest first,
// until want of its nodes are idle and on or waking (spareCount); a node
// whose wake-up takes no time is idle from t.
func (m *meter) wakeKind(k int32, want int, t model.Time) {
	n := m.spareCount(k, -1)
	for _, o := range m.spares.kinds[k] {
		if n >= want {
			return
		}
		if m.nodes[o].asleep && m.count[o] == 0 {
			m.advance(o, t)
			m.wake(o, t)
			m.refresh(o)
			if m.nodes[o].upAt <= t {
				m.idle(o, t)
			}
			n++
		}
	}
}

// release suspends at t the held nodes of node's kind that keep would no
// longer keep on, the lowest first: they have been idle longer than their
// delay.
func (m *meter) release(node int32, t model.Time) {
	sp := &m.spares
	if sp.n == 0 || sp.kind[node] < 0 || sp.queued > 0 {
		return
	}
	k := sp.kind[node]
	n := m.spareCount(k, -1)
	for _, o := range sp.kinds[k] {
		om := &m.nodes[o]
		if !om.held || om.busy != 0 {
			continue
		}
		if t < sp.until && n-1 < sp.want[k] {
			return
		}
		om.held = false
		m.advance(o, t)
		om.asleep = true
		m.refresh(o)
		if m.energy {
			m.points = append(m.points, powerPoint{t, m.watts()})
		}
		n--
	}
}

// standIn spares the wake-up of node, not up at t (asleep, or waking with no
// job on it) and about to take a job, when an idle node of its kind is up
// sooner (on, or waking and up earlier): the two exchange their power
// states, which is the same as the job going to that node, the two nodes'
// names exchanged. The placers saw two idle nodes that no job, placement or
// later decision tells apart, so the run's schedule is the one the cluster
// would have with the node on. An awake node stands in before a waking one;
// of several, the node idle the longest. The cluster's draw does not change;
// each node's figures (Energy.NodeKWh) are those of its name.
func (m *meter) standIn(node int32, t model.Time) {
	nm := &m.nodes[node]
	if m.spares.n == 0 || !(nm.asleep || nm.waking && nm.busy == 0 && nm.upAt > t) {
		return
	}
	best := int32(-1)
	for _, o := range m.spares.kinds[m.spares.kind[node]] {
		om := &m.nodes[o]
		if om.busy != 0 || om.asleep || m.count[o] != 0 || o == node {
			continue // busy, asleep, or about to take a part of the same job
		}
		if nm.waking && om.upAt >= nm.upAt {
			continue // up no sooner than node
		}
		if best < 0 || sooner(om, &m.nodes[best], t) {
			best = o
		}
	}
	if best < 0 {
		return
	}
	m.advance(best, t)
	bm := &m.nodes[best]
	nm.asleep, bm.asleep = bm.asleep, nm.asleep
	nm.waking, bm.waking = bm.waking, nm.waking
	nm.since, bm.since = bm.since, nm.since
	nm.upAt, bm.upAt = bm.upAt, nm.upAt
	nm.held, bm.held = false, false
	for _, o := range [2]int32{node, best} {
		if m.nodes[o].waking {
			heap.Push(&m.pending, transition{t: m.nodes[o].upAt, node: o})
		}
	}
	m.refresh(node)
	m.refresh(best)
}

// sooner reports whether idle node a should stand in before b at t: on
// before waking, then idle the longest, or up the soonest.
func sooner(a, b *nodeMeter, t model.Time) bool {
	switch aOn, bOn := a.upAt <= t, b.upAt <= t; {
	case aOn != bOn:
		return aOn
	case aOn:
		return a.since < b.since
	}
	return a.upAt < b.upAt
}
