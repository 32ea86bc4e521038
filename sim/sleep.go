package sim

import (
	"container/heap"
	"math"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/metrics"
)

// Power-managed nodes (power.NodePower.Sleeps, docs/ENERGY.md): a node none
// of whose GPUs is busy stays on, drawing its idle power, for SleepAfterS;
// then it suspends itself and draws SleepW. A job placed on a suspended node
// wakes it: the node is up WakeS later, and the job (like every job placed
// on the node before it is up) makes no progress until then. While it wakes
// the node draws what it draws on and idle (base power and idle GPUs), and
// that draw is the static draw of the jobs waiting on it, shared by GPUs;
// their GPUs' busy draw starts when it is up. At the first submission every
// power-managed node is asleep, but for the spare nodes (spare.go), which
// also keep idle nodes on past their delay and spare jobs wake-ups.
//
// The meter keeps the coming transitions between events — an idle node
// suspends itself, a waking node is up — in a queue by time and applies
// them, in time order, before anything else happens at a later instant
// (catchUp), so that each node's draw stays piecewise constant and is
// integrated exactly; each transition also becomes a point of the power
// samples (flushPoints).

// transition is a node's coming change of draw at t: it suspends itself
// (sleep), unless it is busy again or became idle anew since (since); or it
// is up after waking (!sleep), unless it was woken anew.
type transition struct {
	t, since model.Time
	node     int32
	sleep    bool
}

// sleepQueue is a min-heap of transitions by time, then node.
type sleepQueue []transition

func (q sleepQueue) Len() int { return len(q) }
func (q sleepQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].node < q[j].node
}
func (q sleepQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *sleepQueue) Push(x any)   { *q = append(*q, x.(transition)) }
func (q *sleepQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// powerPoint is the cluster's draw from t on, after a node's transition at
// t.
type powerPoint struct {
	t     model.Time
	watts float64
}

// seconds converts a power model's duration in seconds to model time,
// rounded to the millisecond.
func seconds(s float64) model.Time { return model.Time(math.Round(s * 1000)) }

// catchUp applies, in time order, every transition that lies before t.
func (m *meter) catchUp(t model.Time) {
	for len(m.pending) > 0 && m.pending[0].t < t {
		s := heap.Pop(&m.pending).(transition)
		if s.node < 0 {
			m.lapse(s)
			continue
		}
		nm := &m.nodes[s.node]
		switch {
		case s.sleep && (nm.busy != 0 || nm.asleep || nm.since != s.since):
			continue // busy again, or idle anew with a later suspension
		case !s.sleep && (!nm.waking || nm.upAt != s.t):
			continue // asleep again, or woken anew
		case s.sleep && m.keep(s.node, s.t):
			nm.held = true // a spare of its kind: it stays on
			continue
		}
		m.advance(s.node, s.t)
		nm.asleep, nm.waking = s.sleep, false
		m.refresh(s.node)
		if !s.sleep && nm.busy == 0 && m.spares.n > 0 { // a spare, woken with no job
			m.idle(s.node, s.t)
		}
		if m.energy {
			m.points = append(m.points, powerPoint{s.t, m.watts()})
		}
	}
}

// idle notes that node may have become idle at t: a power-managed node
// then suspends itself SleepAfterS later.
func (m *meter) idle(node int32, t model.Time) {
	nm := &m.nodes[node]
	np := m.p.Nodes[node]
	if nm.busy != 0 || !np.Sleeps {
		return
	}
	nm.since = t
	heap.Push(&m.pending, transition{t: t + seconds(np.SleepAfterS), since: t, node: node, sleep: true})
	if m.moving {
		m.left = append(m.left, node)
		return
	}
	m.release(node, t)
}

// wake wakes node at t if it is asleep: it is up WakeS later.
func (m *meter) wake(node int32, t model.Time) {
	nm := &m.nodes[node]
	if !nm.asleep {
		return
	}
	m.wakes++
	nm.asleep, nm.upAt = false, t+seconds(m.p.Nodes[node].WakeS)
	if nm.upAt > t {
		nm.waking = true
		heap.Push(&m.pending, transition{t: nm.upAt, node: node})
	}
}

// readyAt returns when job j, placed at t on its current allocation, can
// make progress: when the last of its nodes is up, t if all are.
func (m *meter) readyAt(j *model.Job, t model.Time) model.Time {
	if m == nil || !m.sleeps {
		return t
	}
	jm := &m.jobs[j.Seq]
	for _, pt := range m.parts[jm.from : jm.from+jm.n] {
		t = max(t, m.nodes[pt.node].upAt)
	}
	return t
}

// upGPUs returns the GPUs of gpus whose nodes are up at t.
func (m *meter) upGPUs(gpus []model.GPU, t model.Time) []model.GPU {
	var up []model.GPU
	for _, g := range gpus {
		if m.nodes[g.Node].upAt <= t {
			up = append(up, g)
		}
	}
	return up
}

// flushPoints adds the suspensions' points to the power samples; busy GPUs
// and queue length have not changed since the last sample. A point at the
// time of the last sample replaces it.
func (r *run) flushPoints() {
	m := r.meter
	for _, p := range m.points {
		n := len(r.samples)
		if n == 0 {
			r.samples = append(r.samples, metrics.Sample{T: p.t, PowerW: p.watts})
			continue
		}
		last := r.samples[n-1]
		if last.T == p.t {
			r.samples = r.samples[:n-1]
		}
		r.samples = append(r.samples, metrics.Sample{T: p.t, BusyGPUs: last.BusyGPUs, Queued: last.Queued, PowerW: p.watts})
	}
	m.points = m.points[:0]
}
