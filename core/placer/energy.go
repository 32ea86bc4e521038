package placer

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
)

// Energy is seed 002's energy- and network-aware placer. For a job of
// algorithm type f it
//
//  1. takes the storage device of the job's data: the fastest interface for
//     its upload address (network.Network.Upload);
//  2. gives every node with a free replica's worth of GPUs of the job's GPU
//     type its load state for f (LoadThresholds: load = busy GPUs ÷ node
//     GPUs, counting the GPUs this round's placements already took) and
//     its communication score, its latency to that storage device;
//  3. orders them into the orchestration sequence: state 1, then 2, then 3,
//     each group by score, best (lowest latency) first, ties by the node's
//     energy per unit of work at its stable level when the table gives it
//     (EnergyTable.Cost; the service's extension), then by node index;
//     an idle power-managed node (EnergyTable.Sleeps) forms a group of its
//     own between states 2 and 3 (below);
//  4. lets the first node claim min(headroom, unclaimed demand), updates
//     that node's load and state, reorders, and repeats until the demand is
//     claimed; the job's GPUs are the claims, the lowest-index free GPUs of
//     each claiming node.
//
// Headroom is the GPUs a node can add before it reaches its next state:
// ⌊Th·GPUs⌋ − busy for the threshold Th of its state (Th1 in state 1, Th2
// in state 2), and all its free GPUs in state 3. It is counted in whole
// replicas (JobSpec.Replica), rounded down, but never below one replica
// (when the type's nodes cannot hold the job in whole replicas, in single
// GPUs, as the other placers place: a replica may span nodes): a
// node whose threshold falls inside its next GPU (or lies exactly at its
// load) still claims one replica, which takes it into the next state, so
// that every claim makes progress.
//
// The job runs on one GPU type, the engine's rule: the fastest feasible type
// (by the job's speed, ties to the type declared first) whose nodes have
// enough free GPUs, in whole replicas, for it. When that type's sequence
// starts with a node in state 3 — every node of the type that could take a
// share is in its high-energy region — the job is paused (seed 002, claim
// 8): Place returns no GPUs and a Pause reason naming that node, and the
// engine reports the job in Plan.Paused. The placer does not fall back to
// a slower type then: a slower GPU does less work for its energy, and a
// long job put there runs (and draws) for longer (docs/EXPERIMENTS.md
// measures the difference). Nodes in state 3 may still claim during a
// placement that started on a state 1 or 2 node, up to their full load, as
// claim 7 allows. The pause ends by itself when a node falls back to state
// 1 or 2 (a job finishes) and a later round places the job.
//
// Sleeping nodes are an extension; the seed does not consider them. Its
// load states come from a calibration on a node that is on, so they leave
// out what a suspended node costs: to run anything it must draw its whole
// static power again (base power and idle GPUs) and wake up first. Work
// added to a node that is on, below its high-energy region, costs only the
// busy GPUs' draw. So idle power-managed nodes (load state 1 once awake)
// come after the nodes that are on in states 1 and 2 — the job fills the
// efficient headroom of running nodes before it wakes one — and before
// those in state 3: while a node can be woken, the platform is not wholly
// in its high-energy region, so the job is not paused. A claim that wakes
// a node all the same and also takes GPUs of a busy one is made again
// with the woken nodes in their load state, and taken when it spans fewer
// nodes (claimAwake). Without power-managed nodes the sequence is the
// seed's. Sleep orders nodes
// within the job's GPU type only: the type is chosen first, so a job never
// runs on a slower type to spare a wake-up (issue 28; a wake-up of minutes
// is shorter than what a slower type costs a job of hours).
//
// A node that cannot reach the storage device of the job's data
// (network.Link.Unreachable, from the service's probes) is left out of the
// sequence.
//
// The placement is gang (all of the job's GPUs or none) and costs
// O(nodes of the type + claims · log nodes): the sequence is a binary heap,
// rebuilt after a claim by moving only the claiming node.
type Energy struct {
	// Upgrades enables Upgrade (engine.Upgrader) and Target and Yield
	// (engine.Yielder): off, the placer never moves a running job.
	Upgrades bool

	table *EnergyTable
	net   *network.Network

	cluster *model.Cluster
	byType  [][]int32 // nodes of each GPU type, by index
	seq     []seqNode
	claimed []int    // per node: GPUs claimed by the current placement
	claims  []int32  // claiming nodes in order of their first claim
	reasons []string // per node: its pause reason, built once
	woken   []bool   // per node: idle and power-managed, ordered in its load state (claimAwake)

	// order caches, per job, what does not depend on the pool — its
	// feasible types by speed and its family's column — so that a job
	// tried round after round works them out once.
	order map[orderKey]jobInfo

	// memo holds the sequences' summaries for one version of one pool, so
	// that jobs held back in a round cost O(1) each.
	memo        map[seqKey]seqSummary
	memoPool    *engine.Pool
	memoVersion uint64
}

// seqKey identifies an orchestration sequence: GPU type, family column,
// storage device and replica size.
type seqKey struct{ t, col, storage, r int }

// seqSummary is what a sequence tells a placement that cannot use it: the
// GPUs it can hold, its first node and that node's state (0: not known,
// the sequence being too small to order).
type seqSummary struct {
	capacity int
	state    int
	node     int32
}

// seqNode is one entry of the orchestration sequence.
type seqNode struct {
	state      int
	asleep     bool // idle and power-managed: it sleeps, or soon will
	latency    float64
	cost       float64 // energy per unit of work at the stable level (0: none given)
	node       int32
	busy, free int
	th         LoadThresholds
}

// The groups of the orchestration sequence, in order (seed 002, step 4, and
// the extension for power-managed nodes).
const (
	groupAsleep = 3 // an idle power-managed node, between states 2 and 3
	groupHigh   = 4 // load state 3
)

// group returns the node's group: its load state 1 or 2, groupAsleep or
// groupHigh.
func (a *seqNode) group() int {
	switch {
	case a.asleep:
		return groupAsleep
	case a.state == 3:
		return groupHigh
	}
	return a.state
}

type typeSpeed struct {
	t     int
	speed float64
}

type orderKey struct {
	job   *model.Job
	n     int
	types engine.TypeSet
}

type jobInfo struct {
	types []int // feasible types, fastest first
	col   int   // the family's column of the table
}

// NewEnergy returns the energy placer of cluster c with the thresholds of
// table and the network net (nil: a cluster without storage devices, every
// node scores the same).
func NewEnergy(c *model.Cluster, table *EnergyTable, net *network.Network) (*Energy, error) {
	if table == nil {
		return nil, errNoTable
	}
	if err := table.Validate(c); err != nil {
		return nil, err
	}
	if net != nil && net.Nodes() != len(c.Nodes) {
		return nil, errNetworkSize(net.Nodes(), len(c.Nodes))
	}
	e := &Energy{table: table, net: net, cluster: c, claimed: make([]int, len(c.Nodes)),
		reasons: make([]string, len(c.Nodes)), woken: make([]bool, len(c.Nodes)), memo: map[seqKey]seqSummary{}, order: map[orderKey]jobInfo{}}
	e.byType = make([][]int32, len(c.Types))
	for i, n := range c.Nodes {
		e.byType[n.Type] = append(e.byType[n.Type], int32(i))
	}
	return e, nil
}

// Name returns "energy".
func (*Energy) Name() string { return "energy" }

// Place implements engine.Placer.
func (e *Energy) Place(s *model.State, p *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	if n < 1 || p.Cluster() != e.cluster {
		return engine.Placement{}
	}
	r := j.Spec.Replica()
	if n%r != 0 {
		r = 1
	}
	storage := -1
	if e.net != nil {
		storage = e.net.Upload(j.Spec.Upload).Storage
	}
	info := e.jobInfo(s, j, n, types)
	if p != e.memoPool || p.Version() != e.memoVersion {
		clear(e.memo)
		e.memoPool, e.memoVersion = p, p.Version()
	}
	for _, t := range info.types {
		if p.Free(t) < n {
			continue
		}
		k := seqKey{t, info.col, storage, r}
		sum, built := e.summary(p, k, n)
		if sum.capacity < n && k.r > 1 {
			// Too few nodes hold a whole replica: claim GPU by GPU, as
			// the other placers place (a replica may span nodes).
			k.r = 1
			sum, built = e.summary(p, k, n)
		}
		switch {
		case sum.capacity < n:
			continue // too few free GPUs: the next type
		case sum.state == 3: // seed 002, step 7: the first node is in state 3
			return engine.Placement{Pause: e.reason(sum.node)}
		case built:
			return engine.Placement{GPUs: e.claimAwake(p, k, n)}
		}
	}
	return engine.Placement{}
}

// summary returns the summary of sequence k, from the memo when it says
// that a job of n GPUs cannot start there; otherwise it builds the sequence
// in e.seq (built), ready for claiming when it can hold n GPUs.
func (e *Energy) summary(p *engine.Pool, k seqKey, n int) (sum seqSummary, built bool) {
	if sum, ok := e.memo[k]; ok && (sum.capacity < n || sum.state == 3) {
		return sum, false
	}
	sum.capacity = e.sequence(p, k, n)
	if sum.capacity >= n {
		sum.state, sum.node = e.seq[0].state, e.seq[0].node
	}
	e.memo[k] = sum
	return sum, true
}

// reason is the pause reason naming node i.
func (e *Energy) reason(i int32) string {
	if e.reasons[i] == "" {
		e.reasons[i] = "best node " + e.cluster.Nodes[i].Name + " is in load state 3"
	}
	return e.reasons[i]
}

// jobInfo returns the types in types on which j runs with n GPUs, fastest
// first (ties to the type declared first), and j's column of the table,
// from the cache when it has them. The cache is emptied when it holds far
// more entries than there are active jobs.
func (e *Energy) jobInfo(s *model.State, j *model.Job, n int, types engine.TypeSet) jobInfo {
	k := orderKey{j, n, types}
	if info, ok := e.order[k]; ok {
		return info
	}
	if len(e.order) > 2*(len(s.Waiting())+len(s.Running()))+1024 {
		clear(e.order)
	}
	var bySpeed []typeSpeed
	for t := range e.cluster.Types {
		if !types.Has(t) {
			continue
		}
		if v := s.Profile.Speed(j, t, n); v > 0 {
			bySpeed = append(bySpeed, typeSpeed{t, v})
		}
	}
	slices.SortStableFunc(bySpeed, func(a, b typeSpeed) int { return cmp.Compare(b.speed, a.speed) })
	info := jobInfo{types: make([]int, len(bySpeed)), col: e.table.column(j)}
	for i, x := range bySpeed {
		info.types[i] = x.t
	}
	e.order[k] = info
	return info
}

// sequence builds orchestration sequence k in e.seq: every node of type
// k.t with at least k.r free GPUs, with its state and score. It returns the
// GPUs those nodes can hold in whole replicas and, when that is at least n,
// orders e.seq as a heap whose first entry is the head of the sequence.
func (e *Energy) sequence(p *engine.Pool, k seqKey, n int) int {
	e.seq = e.seq[:0]
	capacity := 0
	r, col, storage := k.r, k.col, k.storage
	for _, i := range e.byType[k.t] {
		free := p.NodeFree(int(i))
		if free < r || (storage >= 0 && e.net.Unreachable(int(i), storage)) {
			continue
		}
		capacity += free / r * r
		total := e.cluster.Nodes[i].GPUs
		th := e.table.thresholds(int(i), col)
		busy := total - free
		lat := 0.0
		if storage >= 0 {
			lat = e.net.Latency(int(i), storage)
		}
		// seed 002, step 3: the node's load state for the job's family;
		// step 2: its communication score, the latency to the data.
		e.seq = append(e.seq, seqNode{state: th.State(busy, total), asleep: busy == 0 && !e.woken[i] && e.table.sleeps(int(i)),
			latency: lat, cost: e.table.cost(int(i), col), node: i, busy: busy, free: free, th: th})
	}
	if capacity < n {
		return capacity
	}
	for h := len(e.seq)/2 - 1; h >= 0; h-- { // seed 002, step 4: the sequence
		e.down(h)
	}
	return capacity
}

// claimAwake claims n GPUs on sequence k, built in e.seq (issue 28,
// eighth session). Idle power-managed nodes come after the busy nodes that
// are on so that a job fills those before it wakes one; but when the claim
// wakes one all the same and also takes GPUs of a busy node, the split
// spares no wake-up, and a job over more nodes stages its data to each and
// leaves more nodes partly busy. Then the claim is made again with the
// nodes it wakes in their load state, as with every node on (idle: state
// 1), and that claim is taken when it spans fewer nodes.
func (e *Energy) claimAwake(p *engine.Pool, k seqKey, n int) []model.GPU {
	gpus, woke, split := e.claim(p, n, k.r)
	if !woke || !split {
		return gpus
	}
	for _, i := range e.claims {
		e.woken[i] = p.NodeFree(int(i)) == e.cluster.Nodes[i].GPUs && e.table.sleeps(int(i))
	}
	nodes := len(e.claims)
	e.sequence(p, k, n)
	again, _, _ := e.claim(p, n, k.r)
	clear(e.woken)
	if len(e.claims) < nodes {
		return again
	}
	return gpus
}

// claim runs the claiming loop on the sequence (which can hold n GPUs) and
// returns the claimed GPUs, without changing the pool, and whether it took
// an idle power-managed node (woke) and GPUs of a busy node (split); the
// claiming nodes are left in e.claims.
func (e *Energy) claim(p *engine.Pool, n, r int) (gpus []model.GPU, woke, split bool) {
	e.claims = e.claims[:0]
	for rem := n; rem > 0; {
		h := &e.seq[0] // seed 002, step 5: the first node claims
		woke = woke || h.asleep
		split = split || (e.claimed[h.node] == 0 && h.busy > 0)
		c := min(headroom(h, r), rem)
		if e.claimed[h.node] == 0 {
			e.claims = append(e.claims, h.node)
		}
		e.claimed[h.node] += c
		rem -= c
		h.busy, h.free = h.busy+c, h.free-c
		h.state, h.asleep = h.th.State(h.busy, h.busy+h.free), false
		if h.free < r {
			last := len(e.seq) - 1
			e.seq[0] = e.seq[last]
			e.seq = e.seq[:last]
		}
		e.down(0)
	}
	gpus = make([]model.GPU, 0, n)
	for _, i := range e.claims {
		gpus = p.Lowest(gpus, int(i), e.claimed[i])
		e.claimed[i] = 0
	}
	return gpus, woke, split
}

// headroom returns the GPUs node h can claim, in whole replicas of r GPUs:
// up to its next state (state 3: all its free GPUs), at least one replica.
func headroom(h *seqNode, r int) int {
	room := h.free
	if h.state < 3 {
		lim1, lim2 := h.th.limits(h.busy + h.free)
		lim := lim1
		if h.state == 2 {
			lim = lim2
		}
		room = min(lim-h.busy, h.free)
	}
	return max(room/r*r, r)
}

// less orders the sequence: group (load state), then latency, then the
// energy per unit of work at the stable level, then node index.
func (a *seqNode) less(b *seqNode) bool {
	if ga, gb := a.group(), b.group(); ga != gb {
		return ga < gb
	}
	if a.latency != b.latency {
		return a.latency < b.latency
	}
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	return a.node < b.node
}

// down restores the heap order below position k.
func (e *Energy) down(k int) {
	seq := e.seq
	for {
		c := 2*k + 1
		if c >= len(seq) {
			return
		}
		if c+1 < len(seq) && seq[c+1].less(&seq[c]) {
			c++
		}
		if !seq[c].less(&seq[k]) {
			return
		}
		seq[k], seq[c] = seq[c], seq[k]
		k = c
	}
}

// MinIdleUpgrade is how many times faster a GPU type none of whose GPUs is
// busy must run a job for the energy placer to move the running job there
// (Upgrade): such a type keeps its nodes drawing while it idles (or has
// them asleep, ready to wake), so a smaller speed-up already pays, and it
// takes no GPUs any job holds or could start on sooner elsewhere.
const MinIdleUpgrade = 1.2

// idleType reports whether no GPU of type t is busy in p.
func (e *Energy) idleType(p *engine.Pool, t int) bool {
	return p.Free(t) == e.cluster.TypeGPUs(t)
}

// MinUpgrade is how many times faster a GPU type must run a job for the
// energy placer to move the running job there (Upgrade): the factor of a
// reclaiming scaler's moves (engine.MinMoveUp), issue 28's "a type 1.5×
// slower".
const MinUpgrade = engine.MinMoveUp

// Upgrade implements engine.Upgrader (issue 28): a running job moves to
// the types it may use (engine.Feasible) on which it runs at least
// MinUpgrade times as fast (MinIdleUpgrade on a type none of whose GPUs is
// busy) as where it runs, placed there by Place (seed 002's sequence), when
// they have room; nil otherwise. A job on a slower type draws for longer
// per unit of work and keeps its nodes on for longer; the move costs one
// restart pause.
func (e *Energy) Upgrade(s *model.State, p *engine.Pool, j *model.Job) []model.GPU {
	n := len(j.Alloc)
	if !e.Upgrades || n == 0 || p.Cluster() != e.cluster {
		return nil
	}
	types := engine.Feasible(s, j, n)
	now := s.Profile.Speed(j, e.cluster.TypeOf(j.Alloc[0]), n)
	var faster engine.TypeSet
	for t := range e.cluster.Types {
		floor := MinUpgrade * now
		if e.idleType(p, t) {
			floor = MinIdleUpgrade * now
		}
		if types.Has(t) && p.Free(t) >= n && s.Profile.Speed(j, t, n) >= floor {
			faster |= 1 << uint(t)
		}
	}
	if faster == 0 {
		return nil
	}
	return e.Place(s, p, j, n, faster).GPUs
}

// Target implements engine.Yielder (issue 28): when no type in ts has
// room for job j of n GPUs — it waits at the head of a strict queue, or
// would start there below its requested size n — the types in ts on which
// it runs; running jobs there that an upgrade may have brought there make
// room for it (Yield). 0 otherwise, and without upgrades: an upgrade
// borrows GPUs no waiting job can use, and never makes a job wait.
func (e *Energy) Target(s *model.State, p *engine.Pool, j *model.Job, n int, ts engine.TypeSet) engine.TypeSet {
	if !e.Upgrades || n < 1 || p.Cluster() != e.cluster {
		return 0
	}
	var target engine.TypeSet
	for t := range e.cluster.Types {
		switch {
		case !ts.Has(t):
		case p.Free(t) >= n:
			return 0
		case s.Profile.Speed(j, t, n) > 0:
			target |= 1 << uint(t)
		}
	}
	return target
}

// Yield implements engine.Yielder (issue 28): running job r moves to the
// types it may use on which it runs at least MinUpgrade times slower than
// where it runs — those from which an upgrade could have brought it —
// placed there by Place, when they have room; nil otherwise.
func (e *Energy) Yield(s *model.State, p *engine.Pool, r *model.Job) []model.GPU {
	n := len(r.Alloc)
	if !e.Upgrades || n == 0 || p.Cluster() != e.cluster {
		return nil
	}
	types := engine.Feasible(s, r, n)
	ceil := s.Profile.Speed(r, e.cluster.TypeOf(r.Alloc[0]), n) / MinUpgrade
	var slower engine.TypeSet
	for t := range e.cluster.Types {
		if types.Has(t) && p.Free(t) >= n && s.Profile.Speed(r, t, n) <= ceil {
			slower |= 1 << uint(t)
		}
	}
	if slower == 0 {
		return nil
	}
	return e.Place(s, p, r, n, slower).GPUs
}
