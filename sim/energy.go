package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/sim/metrics"
)

// joulesPerKWh converts joules to kWh.
const joulesPerKWh = 3.6e6

// Energy is what a run drew (docs/ENERGY.md), in kWh, from the first
// submission to the run's last event. The nodes' figures add up to TotalKWh;
// so do the jobs' (metrics.JobRecord.EnergyKWh) and IdleKWh.
type Energy struct {
	// TotalKWh is what the whole cluster drew.
	TotalKWh float64
	// NodeKWh[i] is what node i of the cluster drew.
	NodeKWh []float64
	// IdleKWh is what nodes drew while none of their GPUs was busy
	// (asleep, if they sleep): energy of no job.
	IdleKWh float64
	// Wakes counts the times a suspended node was woken up for a job
	// (power.NodePower.Sleeps).
	Wakes int
}

// meter follows the busy GPUs of every node to account the energy the
// cluster draws, to apply node contention to job speeds and to put idle
// power-managed nodes to sleep and wake them (sleep.go). Its work per event
// is proportional to the nodes of the jobs that start, stop or move, never
// to the cluster's size.
//
// Energy: between two events a node's draw is constant, so each node
// integrates watts × elapsed time whenever its busy GPUs change. A job's
// share is its GPUs' busy draw plus, per GPU, an equal part of the node's
// static draw (base power and idle GPUs) among the node's busy GPUs. The
// node keeps that per-GPU static part integrated over time (share), so a
// job's part over a stretch is its GPU count times the difference of share
// between the stretch's ends, and no event needs to visit the node's other
// jobs.
type meter struct {
	c          *model.Cluster
	p          *power.Cluster
	energy     bool
	contention bool
	work       []power.Workload // per job (Seq)
	nodes      []nodeMeter
	jobs       []jobMeter // per job (Seq)
	parts      []part     // jobs' per-node parts, jobMeter.from indexes it
	idleJ      float64
	totalUW    int64 // cluster draw in µW: the sum of the nodes' uw, exactly
	count      []int32
	touched    []int32
	now        model.Time // the latest instant the run settled
	onNode     [][]int32  // contention: the jobs on each node
	dirty      []int32    // contention: nodes whose load changed since settle
	isDirty    []bool
	sleeps     bool       // some node is power-managed (sleep.go)
	pending    sleepQueue // idle power-managed nodes, by the time they suspend
	points     []powerPoint
	wakes      int
	spares     spares // spare nodes kept on (spare.go)
	// moving is set while move takes a job off its nodes; left collects
	// the nodes it made idle meanwhile, released after it joins.
	moving bool
	left   []int32
}

// nodeMeter is one node's load and energy so far.
type nodeMeter struct {
	last    model.Time // energy is integrated up to last
	busy    int
	asleep  bool       // suspended (power-managed and idle long enough)
	waking  bool       // woken for a job, up at upAt
	since   model.Time // busy 0: when the node became idle
	upAt    model.Time // the node is up (awake) from upAt
	held    bool       // idle and kept on past its suspension: a spare of its kind
	utilSum float64    // sum of the utilisation of the busy GPUs
	watts   float64
	uw      int64   // watts in µW, rounded
	joules  float64 // drawn up to last
	share   float64 // static draw per busy GPU, integrated up to last (J)
}

// jobMeter is one job's allocation by node and its energy so far.
type jobMeter struct {
	from, n, room int32 // parts[from:from+n]; room parts are reserved there
	since         model.Time
	joules        float64
	factor        float64 // contention factor of its current rate
}

// part is the GPUs a job holds on one node.
type part struct {
	node, gpus int32
	snap       float64    // the node's share when the job took them
	upAt       model.Time // the node is up from upAt: its GPUs run from then
}

// newMeter returns the meter of cfg for jobs (the trace, in order), or nil
// when cfg accounts no energy, applies no contention and has no
// power-managed node. Its clock starts at the first submission, with every
// power-managed node asleep.
func newMeter(cfg *Config, s *model.State, jobs []*model.Job) (*meter, error) {
	sleeps := cfg.Power != nil && slices.ContainsFunc(cfg.Power.Nodes, func(n power.NodePower) bool { return n.Sleeps })
	if !cfg.Energy && !cfg.Contention && !sleeps {
		return nil, nil
	}
	var t0 model.Time
	if len(jobs) > 0 {
		t0 = jobs[0].Spec.Submit
	}
	if err := checkPower(cfg); err != nil {
		return nil, fmt.Errorf("sim: power: %w", err)
	}
	c := cfg.Cluster
	m := &meter{c: c, p: cfg.Power, energy: cfg.Energy, contention: cfg.Contention, sleeps: sleeps,
		work: make([]power.Workload, len(jobs)), nodes: make([]nodeMeter, len(c.Nodes)),
		jobs: make([]jobMeter, len(jobs)), count: make([]int32, len(c.Nodes)), now: t0,
		parts: make([]part, 0, len(jobs))}
	for i, j := range jobs {
		m.work[i] = power.DefaultWorkload()
		if cfg.PowerWorkload != nil {
			m.work[i] = cfg.PowerWorkload(&j.Spec)
		}
		if err := m.work[i].Validate(); err != nil {
			return nil, fmt.Errorf("sim: job %s: power workload: %w", j.Spec.ID, err)
		}
		m.jobs[i].factor = 1
	}
	if sleeps && cfg.Spare > 0 {
		m.spares = newSpares(cfg, s, jobs)
	}
	for i := range m.nodes {
		m.nodes[i].last, m.nodes[i].upAt = t0, t0
		m.nodes[i].asleep = m.p.Nodes[i].Sleeps
	}
	m.startSpares(t0)
	for i := range m.nodes {
		m.refresh(int32(i))
	}
	if m.contention {
		m.onNode = make([][]int32, len(c.Nodes))
		m.isDirty = make([]bool, len(c.Nodes))
	}
	return m, nil
}

// checkPower checks that cfg.Power describes what cfg.Energy, cfg.Contention
// and power-managed nodes need: everything, or only the nodes.
func checkPower(cfg *Config) error {
	p, c := cfg.Power, cfg.Cluster
	switch {
	case p == nil:
		return errors.New("energy accounting and contention need a power description")
	case cfg.Energy:
		return p.Validate(c)
	case len(p.Nodes) != len(c.Nodes):
		return fmt.Errorf("power description has %d nodes, cluster %d", len(p.Nodes), len(c.Nodes))
	}
	for i, n := range p.Nodes {
		if err := n.Validate(); err != nil {
			return fmt.Errorf("node %s: %w", c.Nodes[i].Name, err)
		}
	}
	return nil
}

// join gives the meter j's current allocation from t.
func (m *meter) join(j *model.Job, t model.Time) {
	if m == nil {
		return
	}
	m.catchUp(t)
	for _, g := range j.Alloc {
		if m.count[g.Node] == 0 {
			m.touched = append(m.touched, g.Node)
		}
		m.count[g.Node]++
	}
	jm := &m.jobs[j.Seq]
	n := int32(len(m.touched))
	if n > jm.room {
		jm.from, jm.room = int32(len(m.parts)), n
		m.parts = append(m.parts, make([]part, n)...)
	}
	jm.n, jm.since = n, t
	util := m.work[j.Seq].Util
	for k, node := range m.touched {
		gpus := m.count[node]
		m.count[node] = 0
		m.advance(node, t)
		nm := &m.nodes[node]
		m.standIn(node, t)
		m.wake(node, t)
		nm.held = false
		nm.busy += int(gpus)
		nm.utilSum += float64(gpus) * util
		m.refresh(node)
		m.parts[jm.from+int32(k)] = part{node: node, gpus: gpus, snap: nm.share, upAt: nm.upAt}
		if m.contention {
			m.onNode[node] = append(m.onNode[node], int32(j.Seq))
			m.markDirty(node)
		}
	}
	for _, node := range m.touched {
		m.replenish(node, t)
	}
	m.touched = m.touched[:0]
}

// leave takes job seq's allocation off the meter at t and adds the job's
// energy since it joined.
func (m *meter) leave(seq int, t model.Time) {
	if m == nil {
		return
	}
	m.catchUp(t)
	jm := &m.jobs[seq]
	util := m.work[seq].Util
	for _, pt := range m.parts[jm.from : jm.from+jm.n] {
		m.advance(pt.node, t)
		nm := &m.nodes[pt.node]
		gpus := float64(pt.gpus)
		if m.energy { // its GPUs are busy once the node is up
			busyW := m.p.Types[m.c.Nodes[pt.node].Type].BusyWatts(util)
			dt := float64(max(t-max(jm.since, pt.upAt), 0)) / 1000
			jm.joules += gpus*busyW*dt + gpus*(nm.share-pt.snap)
		}
		nm.busy -= int(pt.gpus)
		nm.utilSum -= gpus * util
		m.idle(pt.node, t)
		m.refresh(pt.node)
		if m.contention {
			m.onNode[pt.node] = removeSeq(m.onNode[pt.node], int32(seq))
			m.markDirty(pt.node)
		}
	}
	jm.n = 0
}

// move is leave and join at once: j's allocation changed at t. The nodes
// j leaves are not idle in between: the spares that idle nodes let
// suspend themselves (release) are released only after j has joined its
// new nodes, for the nodes it left for good. Otherwise a resize or a
// migration would, for an instant, count the nodes it keeps as idle and
// suspend a spare that the growth or the next job then has to wake.
func (m *meter) move(j *model.Job, t model.Time) {
	if m == nil {
		return
	}
	m.moving = true
	m.leave(j.Seq, t)
	m.moving = false
	m.join(j, t)
	for _, node := range m.left {
		if m.nodes[node].busy == 0 {
			m.release(node, t)
		}
	}
	m.left = m.left[:0]
}

// advance integrates node's draw up to t.
func (m *meter) advance(node int32, t model.Time) {
	nm := &m.nodes[node]
	if t <= nm.last {
		return
	}
	if m.energy {
		dt := float64(t-nm.last) / 1000
		nm.joules += nm.watts * dt
		if nm.busy > 0 {
			nm.share += m.staticWatts(node) / float64(nm.busy) * dt
		} else {
			m.idleJ += nm.watts * dt
		}
	}
	nm.last = t
}

// staticWatts is the draw of a busy node apart from its busy GPUs: base
// power and idle GPUs; while the node wakes up, all of its draw.
func (m *meter) staticWatts(node int32) float64 {
	nm := &m.nodes[node]
	if nm.waking {
		return nm.watts
	}
	n := m.c.Nodes[node]
	return m.p.Nodes[node].BaseW + float64(n.GPUs-nm.busy)*m.p.Types[n.Type].IdleW
}

// refresh recomputes node's draw after its busy GPUs or its sleep changed.
func (m *meter) refresh(node int32) {
	nm := &m.nodes[node]
	if nm.busy == 0 {
		nm.utilSum = 0 // no rounding residue left over from the jobs that left
	}
	if !m.energy {
		return
	}
	n, np := m.c.Nodes[node], m.p.Nodes[node]
	switch gpu := m.p.Types[n.Type]; {
	case nm.asleep:
		nm.watts = np.SleepW
	case nm.busy > 0 && !nm.waking:
		nm.watts = power.MixedWatts(np, gpu, nm.busy, n.GPUs, nm.utilSum)
	default: // on and idle, or waking up
		nm.watts = np.AwakeIdleWatts(gpu, n.GPUs)
	}
	uw := int64(math.Round(nm.watts * 1e6))
	m.totalUW += uw - nm.uw
	nm.uw = uw
}

// watts returns the cluster's draw now (0 without energy accounting).
func (m *meter) watts() float64 {
	if m == nil {
		return 0
	}
	return float64(m.totalUW) / 1e6
}

// factor returns the contention factor of j on its current allocation (1
// without contention): the smallest factor among its nodes, that of the
// most loaded one, for j's workload. It becomes the factor of j's rate.
func (m *meter) factor(j *model.Job) float64 {
	if m == nil || !m.contention {
		return 1
	}
	f := m.contentionOf(j.Seq)
	m.jobs[j.Seq].factor = f
	return f
}

// contentionOf computes job seq's contention factor from its parts.
func (m *meter) contentionOf(seq int) float64 {
	jm, w := &m.jobs[seq], m.work[seq]
	f := 1.0
	for _, pt := range m.parts[jm.from : jm.from+jm.n] {
		load := float64(m.nodes[pt.node].busy) / float64(m.c.Nodes[pt.node].GPUs)
		f = min(f, w.Speed(m.p.Nodes[pt.node], load))
	}
	return f
}

// markDirty notes that node's load changed, for settle.
func (m *meter) markDirty(node int32) {
	if !m.isDirty[node] {
		m.isDirty[node] = true
		m.dirty = append(m.dirty, node)
	}
}

// removeSeq removes seq from list, keeping the order of the others.
func removeSeq(list []int32, seq int32) []int32 {
	for i, s := range list {
		if s == seq {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// settle applies contention at the end of an instant t: every running job
// on a node whose load changed gets the factor of its nodes' new loads, and
// those whose factor changed get a new rate and a new predicted finish.
func (r *run) settle(t model.Time) {
	m := r.meter
	if m == nil {
		return
	}
	m.catchUp(t)
	m.waiting(t, r.state.Waiting())
	r.flushPoints()
	m.now = t
	if !m.contention {
		return
	}
	for _, node := range m.dirty {
		m.isDirty[node] = false
		for _, seq := range m.onNode[node] {
			if f := m.contentionOf(int(seq)); f != m.jobs[seq].factor {
				r.rerate(r.jobs[seq], t, f)
			}
		}
	}
	m.dirty = m.dirty[:0]
}

// rerate changes a running job's contention factor to f at t: the work done
// so far is kept (a job still in its restart pause stays paused), the job
// progresses at its new rate from then on, and its finish is predicted anew.
func (r *run) rerate(j *model.Job, t model.Time, f float64) {
	j.Done, j.Mark = j.DoneAt(t), t
	j.Resume = max(j.Resume, t)
	j.Rate = r.speed(j) * f
	r.meter.jobs[j.Seq].factor = f
	r.predictFinish(j)
}

// result closes the accounts at the run's last instant, writes every job's
// energy into recs and returns the run's energy (nil without accounting).
func (m *meter) result(recs []metrics.JobRecord) *Energy {
	if m == nil || !m.energy {
		return nil
	}
	t := m.now
	m.catchUp(t)
	for seq := range m.jobs {
		if m.jobs[seq].n > 0 { // still holding GPUs: account up to t
			m.leave(seq, t)
		}
		recs[seq].EnergyKWh = m.jobs[seq].joules / joulesPerKWh
	}
	e := &Energy{NodeKWh: make([]float64, len(m.nodes))}
	var total float64
	for i := range m.nodes {
		m.advance(int32(i), t)
		total += m.nodes[i].joules
		e.NodeKWh[i] = m.nodes[i].joules / joulesPerKWh
	}
	e.TotalKWh, e.IdleKWh, e.Wakes = total/joulesPerKWh, m.idleJ/joulesPerKWh, m.wakes
	return e
}
