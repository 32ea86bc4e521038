package quota

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// ReasonReclaim is the trace reason of a preemption that gives a queue
// back its guaranteed quota.
const ReasonReclaim = "reclaimed: its queue ran beyond its quota and another queue needs its guarantee"

// Policy is the queue layer around an inner queue policy (package doc). It
// implements engine.QueuePolicy and engine.Gate. Build it with New; one
// Policy serves one engine.
type Policy struct {
	inner    engine.QueuePolicy
	measure  Usage
	halfLife model.Time
	queues   []Queue
	index    map[string]int
	def      int
	usage    []float64 // per queue: normalised GPU-seconds
	last     model.Time
	held     []held
	reclaims int

	// Per cluster: quota and limit per queue and type (limit -1: none).
	cluster      *model.Cluster
	quota, limit [][]int
	hasQuota     []bool
	anyLimit     bool // some queue has a limit on some type of the cluster
	// resLimit caps per queue each resource of the cluster (-1: none);
	// anyRes says that some queue has one (resources.go).
	resLimit [][]int64
	anyRes   bool

	// Per round.
	used   [][]int      // what each queue holds, plus what the round gave it (Gate)
	res    [][]float64  // likewise of each resource besides GPUs (resources.go)
	state  *model.State // the round's
	over   [][]bool     // per queue and type: it held more than its quota when the round began
	tent   [][]int      // the guaranteed tier's tentative count (Order)
	in     []*model.Job // the inner order
	out    []*model.Job // the order returned
	lanes  [][]int      // per queue: indices into in
	order  []int        // queues by fair share
	laneOf []int32
	types  []engine.TypeSet // the order's Types, when the inner policy gives them
	run    [][]*model.Job   // per queue: running jobs, for reclaim
	cands  map[*model.Job]bool
	stop   map[*model.Job]bool
	alloc  map[*model.Job][]model.GPU
	// taker holds, per GPU (by gpuBase[node] + index), 1 + the queue of
	// the guaranteed job that starts on it in the round (0: none); Done
	// sets it and clears it again.
	taker   []int32
	gpuBase []int
	// round counts the rounds; the jobs' marks (guaranteed, allowed to
	// claim by the inner policy — its leading Order.Claim, all when
	// preemptive —, and the GPU types on which a guaranteed job fits in its
	// queue's quota as the tier counted it) are kept with the cache of
	// queueOf, in fallback for jobs beyond it.
	round      uint64
	preemptive bool
	fallback   map[*model.Job]roundMarks
	seqs       []seqQueue // queueOf's cache, by model.Job.Seq
}

// held is one running job's charge: rate normalised GPU-seconds per second
// to queue q.
type held struct {
	q    int
	rate float64
}

// New wraps inner with the queue layer of cfg (validated).
func New(inner engine.QueuePolicy, cfg Config) (*Policy, error) {
	if inner == nil {
		return nil, fmt.Errorf("quota: an inner queue policy is required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	qs, def := cfg.withDefault()
	p := &Policy{inner: inner, measure: cfg.Usage, halfLife: cfg.HalfLife, queues: qs, def: def, index: make(map[string]int, len(qs)),
		usage: make([]float64, len(qs)), last: -1, lanes: make([][]int, len(qs)), run: make([][]*model.Job, len(qs)),
		cands: map[*model.Job]bool{}, stop: map[*model.Job]bool{}, alloc: map[*model.Job][]model.GPU{},
		fallback: map[*model.Job]roundMarks{}}
	for i, q := range qs {
		p.index[q.Name] = i
	}
	return p, nil
}

// Name returns the inner policy's name: the queue layer is not a policy of
// its own.
func (p *Policy) Name() string { return p.inner.Name() }

// Next implements engine.Waker for an inner policy that schedules in
// rounds (the allocation policies): their rounds go on under the queue
// layer. -1 for any other.
func (p *Policy) Next(now model.Time) model.Time {
	if w, ok := p.inner.(engine.Waker); ok {
		return w.Next(now)
	}
	return -1
}

// Inner returns the wrapped policy.
func (p *Policy) Inner() engine.QueuePolicy { return p.inner }

// Queues returns the queues, the default one included, in order.
func (p *Policy) Queues() []Queue { return slices.Clone(p.queues) }

// QueueOf returns the name of the queue job j belongs to.
func (p *Policy) QueueOf(j *model.Job) string { return p.queues[p.queueOf(j)].Name }

// Reclaims returns how many preemptions gave a queue back its guarantee
// since the Policy was built.
func (p *Policy) Reclaims() int { return p.reclaims }

// Usage returns every queue's fair-share usage in normalised GPU-hours.
func (p *Policy) Usage() map[string]float64 {
	out := make(map[string]float64, len(p.queues))
	for i, q := range p.queues {
		out[q.Name] = p.usage[i] / 3600
	}
	return out
}

// Restore sets the queues' usage (normalised GPU-hours by queue name, as
// Usage returns it), e.g. after a restart; unknown names are ignored.
func (p *Policy) Restore(u map[string]float64) {
	for name, v := range u {
		if i, ok := p.index[name]; ok && v >= 0 {
			p.usage[i] = v * 3600
		}
	}
}

// queueOf returns the index of job j's queue, cached by the job's arrival
// rank (a job's queue never changes; the cache checks the job it holds).
func (p *Policy) queueOf(j *model.Job) int {
	if j.Seq >= 0 && j.Seq < len(p.seqs) && p.seqs[j.Seq].job == j {
		return int(p.seqs[j.Seq].q)
	}
	q, ok := p.index[j.Spec.Queue]
	if !ok {
		q = p.def
	}
	if j.Seq >= 0 && j.Seq < 1<<24 {
		if j.Seq >= len(p.seqs) {
			p.seqs = append(p.seqs, make([]seqQueue, j.Seq+1-len(p.seqs))...)
		}
		p.seqs[j.Seq] = seqQueue{job: j, q: int32(q)}
	}
	return q
}

// seqQueue caches a job's queue index, and its usage rate on n GPUs of
// type t (n 0: none yet).
type seqQueue struct {
	job  *model.Job
	q    int32
	t, n int32
	rate float64
	// The round's marks (valid while round is Policy.round): guaranteed,
	// allowed to claim by the inner policy, and its guaranteed types.
	round  uint64
	guar   bool
	claim  bool
	gtypes engine.TypeSet
}

// roundMarks are a job's marks of the current round (seqQueue).
type roundMarks struct {
	guar, claim bool
	gtypes      engine.TypeSet
}

// marks returns job j's marks of the round.
func (p *Policy) marks(j *model.Job) roundMarks {
	if c := p.cached(j); c != nil {
		if c.round != p.round {
			return roundMarks{}
		}
		return roundMarks{c.guar, c.claim, c.gtypes}
	}
	return p.fallback[j]
}

// mark sets job j's marks of the round: guar and claim are added to
// those it has, gtypes replaces its types when not zero.
func (p *Policy) mark(j *model.Job, guar, claim bool, gtypes engine.TypeSet) {
	if c := p.cached(j); c != nil {
		if c.round != p.round {
			c.round, c.guar, c.claim, c.gtypes = p.round, false, false, 0
		}
		c.guar, c.claim = c.guar || guar, c.claim || claim
		if gtypes != 0 {
			c.gtypes = gtypes
		}
		return
	}
	m := p.fallback[j]
	m.guar, m.claim = m.guar || guar, m.claim || claim
	if gtypes != 0 {
		m.gtypes = gtypes
	}
	p.fallback[j] = m
}

// cached returns job j's cache entry, or nil for a job whose arrival rank
// is beyond the cache.
func (p *Policy) cached(j *model.Job) *seqQueue {
	p.queueOf(j)
	if j.Seq >= 0 && j.Seq < len(p.seqs) && p.seqs[j.Seq].job == j {
		return &p.seqs[j.Seq]
	}
	return nil
}

// setCluster resolves the quotas and limits by GPU type index.
func (p *Policy) setCluster(c *model.Cluster) {
	if p.cluster == c {
		return
	}
	p.cluster = c
	for i := range p.seqs {
		p.seqs[i].n = 0 // rates depend on the cluster's types
	}
	nt := len(c.Types)
	p.quota, p.limit, p.used, p.tent = grid(len(p.queues), nt), grid(len(p.queues), nt), grid(len(p.queues), nt), grid(len(p.queues), nt)
	p.over = make([][]bool, len(p.queues))
	for q := range p.over {
		p.over[q] = make([]bool, nt)
	}
	p.gpuBase = make([]int, len(c.Nodes))
	total := 0
	for i, n := range c.Nodes {
		p.gpuBase[i] = total
		total += n.GPUs
	}
	p.taker = make([]int32, total)
	p.hasQuota = make([]bool, len(p.queues))
	p.anyLimit = false
	p.setResourceLimits(c)
	for qi, q := range p.queues {
		for t, gt := range c.Types {
			p.quota[qi][t] = q.Quota[gt.Name]
			p.hasQuota[qi] = p.hasQuota[qi] || p.quota[qi][t] > 0
			p.limit[qi][t] = -1
			if l, ok := q.Limit[gt.Name]; ok {
				p.limit[qi][t] = l
				p.anyLimit = p.anyLimit || l >= 0
			}
		}
	}
}

func grid(n, m int) [][]int {
	g := make([][]int, n)
	for i := range g {
		g[i] = make([]int, m)
	}
	return g
}

// charge adds the GPUs held since the last round to the queues' usage,
// decayed by the half-life when there is one: usage shrinks by 2^(-dt/H)
// and a constant rate r over dt adds r·H/ln 2·(1 - 2^(-dt/H)), the
// integral of its decayed charges.
func (p *Policy) charge(now model.Time) {
	if p.last >= 0 && now > p.last {
		dt := (now - p.last).Seconds()
		keep, add := 1.0, dt
		if p.halfLife > 0 {
			h := p.halfLife.Seconds()
			keep = math.Exp2(-dt / h)
			add = h / math.Ln2 * (1 - keep)
		}
		for q := range p.usage {
			p.usage[q] *= keep
		}
		for _, h := range p.held {
			p.usage[h.q] += add * h.rate
		}
	}
	p.last = now
}

// baseline sets what every queue holds now and groups the running jobs by
// queue.
func (p *Policy) baseline(s *model.State) {
	for q := range p.used {
		clear(p.used[q])
		p.run[q] = p.run[q][:0]
	}
	for _, j := range s.Running() {
		q := p.queueOf(j)
		p.used[q][s.Cluster.TypeOf(j.Alloc[0])] += len(j.Alloc)
		p.run[q] = append(p.run[q], j)
	}
	p.resourceBaseline(s)
	for q := range p.used {
		for t := range p.used[q] {
			p.over[q][t] = p.used[q][t] > p.quota[q][t]
		}
	}
}

// rank orders the queues by fair share: usage per unit of weight, ties by
// declaration.
func (p *Policy) rank() {
	p.order = p.order[:0]
	for q := range p.queues {
		p.order = append(p.order, q)
	}
	slices.SortStableFunc(p.order, func(a, b int) int {
		return cmp.Compare(p.usage[a]/p.queues[a].Weight, p.usage[b]/p.queues[b].Weight)
	})
}

// Weight returns the speed of job j on n GPUs of type t over its speed on
// n GPUs of the cluster's fastest type for it (1 there, and 1 when no type
// gives it a speed): how much a GPU-hour of type t is worth to the job.
func Weight(c *model.Cluster, prof model.Profile, j *model.Job, t, n int) float64 {
	best := 0.0
	for u := range c.Types {
		best = max(best, prof.Speed(j, u, n))
	}
	v := prof.Speed(j, t, n)
	if !(best > 0) || !(v > 0) {
		return 1
	}
	return min(v/best, 1)
}

// rate is the usage a job charges per second on n GPUs of type t (cached
// with its queue; a new cluster or profile table clears the cache).
func (p *Policy) rate(s *model.State, j *model.Job, t, n int) float64 {
	if p.measure == UsageGPUHours {
		return float64(n)
	}
	p.queueOf(j)
	var c *seqQueue
	if j.Seq >= 0 && j.Seq < len(p.seqs) && p.seqs[j.Seq].job == j {
		c = &p.seqs[j.Seq]
		if int(c.t) == t && int(c.n) == n {
			return c.rate
		}
	}
	r := float64(n) * Weight(s.Cluster, s.Profile, j, t, n)
	if c != nil {
		c.t, c.n, c.rate = int32(t), int32(n), r
	}
	return r
}
