package kube

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
)

// unknownMemMiB is the memory of a GPU type that neither the catalog nor
// a node's nvidia.com/gpu.memory label describes: memory is not checked.
const unknownMemMiB = math.MaxInt32

// reservation keeps GPUs for a job that a plan placed but that cannot
// start yet: a start whose GPUs pods being stopped for it still hold, or
// a job moved to other GPUs whose controller has yet to create its pods
// again (Migrate). Until the job starts there, the GPUs are hidden from
// the rounds (as kube-scheduler's nominated pods keep theirs).
type reservation struct {
	nodes []nodeCount
	made  time.Time
	// victims are the pods it waits for; clear is when they were first
	// seen gone (zero before).
	victims []types.UID
	clear   time.Time
}

type nodeCount struct {
	node string
	gpus int
}

// reservations decides, for every job with a reservation, whether it
// starts on its GPUs this round (claim), keeps them from the round
// (hold: the job stays out of the engine's queue, as kube-scheduler's
// nominated pods do not preempt again while their victims terminate), or
// lets them go (its job runs, is gone, or waited long enough).
func (r *round) reservations() {
	byKey := make(map[string]*rjob, len(r.jobs))
	for _, rj := range r.jobs {
		byKey[rj.kj.key] = rj
	}
	var res []*kjob
	for _, kj := range r.w.jobs {
		if kj.reserve != nil {
			res = append(res, kj)
		}
	}
	r.holdGrowths(byKey)
	slices.SortFunc(res, func(a, b *kjob) int {
		return cmp.Or(a.reserve.made.Compare(b.reserve.made), cmp.Compare(a.seq, b.seq))
	})
	for _, kj := range res {
		rv, rj := kj.reserve, byKey[kj.key]
		if rj != nil && (len(rj.bound) > 0 || rj.invalid) || r.expired(rv) {
			kj.reserve = nil
			continue
		}
		if rj != nil && r.claimable(rj, rv) {
			for _, nc := range rv.nodes {
				r.free[r.nodeIdx[nc.node]] -= nc.gpus
			}
			r.claims = append(r.claims, engine.Assignment{Job: kj.mj}) // GPUs chosen in buildState
			continue
		}
		for _, nc := range rv.nodes {
			if i, ok := r.nodeIdx[nc.node]; ok {
				h := min(nc.gpus, max(r.free[i], 0))
				r.held[i] += h
				r.free[i] -= h
			}
		}
		if rj != nil {
			// It waits for these GPUs, not for others: the engine must not
			// place it (or stop more jobs for it) meanwhile.
			rj.inState = false
			rj.setReason(engine.WaitHeld, false)
		}
	}
}

// expired reports whether a reservation has waited long enough: its
// victims are gone, reserveGrace ago.
func (r *round) expired(rv *reservation) bool {
	for _, uid := range rv.victims {
		if r.w.pods[uid] != nil {
			return false
		}
	}
	if rv.clear.IsZero() {
		rv.clear = r.now
	}
	return r.now.Sub(rv.clear) >= reserveGrace
}

// claimable reports whether a waiting job can start on its reserved GPUs
// now: enough pods for them, at least its gang, and the GPUs free.
func (r *round) claimable(rj *rjob, rv *reservation) bool {
	total := 0
	for _, nc := range rv.nodes {
		i, ok := r.nodeIdx[nc.node]
		if !ok || r.free[i] < nc.gpus || nc.gpus%rj.pod != 0 {
			return false
		}
		total += nc.gpus
	}
	pods := total / rj.pod
	return pods >= rj.min && pods <= len(rj.pending)
}

// buildState makes the model cluster of the usable nodes' GPUs (less
// those of other schedulers' pods, terminating pods and reservations) and
// other resources (capacities), and the state: running jobs on their
// pods' GPUs, waiting jobs queued. It reports false when no node has GPUs
// for gpusched.
func (r *round) buildState() bool {
	nodes, types := r.clusterNodes()
	if len(nodes) == 0 {
		return false
	}
	next := make([]int, len(nodes))
	for _, rj := range r.jobs {
		if rj.inState && len(rj.bound) > 0 {
			r.placeRunning(rj, nodes, types, next)
		}
	}
	r.capacities(nodes)
	c := r.cluster0(nodes, types)
	if c == nil {
		return false
	}
	tab, err := r.s.table(c)
	if err != nil {
		r.s.log.Error("cannot build the profile table", "err", err)
		return false
	}
	r.cluster, r.state = c, model.NewState(c, tab)
	for _, rj := range r.jobs {
		rj.kj.mj.Model = tab.ModelIndex(rj.set.model)
	}
	// Running jobs first, each submitted and restored at once (charged
	// what their pods ask even where a node holds less), then the waiting
	// ones in queue order: the state's queues only grow at their ends.
	load := make([]model.Holding, 0, len(r.jobs))
	for _, rj := range r.jobs {
		if rj.inState && len(rj.alloc) > 0 {
			load = append(load, model.Holding{Job: rj.kj.mj, GPUs: rj.alloc})
		}
	}
	for _, rj := range r.jobs {
		if rj.inState && len(rj.alloc) == 0 {
			load = append(load, model.Holding{Job: rj.kj.mj})
		}
	}
	for _, err := range r.state.Load(load) {
		r.s.log.Error("running job's GPUs are not free in the model", "err", err)
	}
	r.claimGPUs()
	return true
}

// placeRunning gives a running job the GPUs of its bound pods on the
// cluster's nodes (next counts the GPUs given on each node).
func (r *round) placeRunning(rj *rjob, nodes []model.Node, types []model.GPUType, next []int) {
	for _, p := range rj.bound {
		node := p.node
		if node == "" {
			node = r.w.assumed[p.uid]
		}
		ci, ok := r.cidx[node]
		if !ok || next[ci]+rj.pod > nodes[ci].GPUs {
			continue
		}
		for k := range rj.pod {
			rj.alloc = append(rj.alloc, model.GPU{Node: int32(ci), Index: int32(next[ci] + k)})
		}
		rj.allocPods = append(rj.allocPods, p)
		next[ci] += rj.pod
	}
	if len(rj.alloc) == 0 {
		rj.inState = false
		rj.setReason(waitAway, false)
		return
	}
	first := nodes[rj.alloc[0].Node].Type
	rj.kj.gpuType = types[first].Name
	for _, g := range rj.alloc[1:] {
		if nodes[g.Node].Type != first {
			rj.kj.gpuType = ""
		}
	}
}

// capacities gives each cluster node its Capacity: its allocatable less
// what every pod bound there asks (one pod each, besides its requests),
// except the pods of running jobs that placeRunning gave GPUs, which the
// state charges (Restore). Other schedulers' pods, gpusched's terminating
// pods, a Volcano job's launcher and pods beyond their node's GPUs are
// taken from it.
func (r *round) capacities(nodes []model.Node) {
	if !slices.ContainsFunc(r.nodes, func(n *nodeInfo) bool { return n.alloc != nil }) {
		return // GPUs only
	}
	taken := make([]model.Resources, len(nodes))
	take := func(node string, req model.Resources) {
		ci, ok := r.cidx[node]
		if !ok {
			return
		}
		if taken[ci] == nil {
			taken[ci] = model.Resources{}
		}
		add(taken[ci], req, 1)
	}
	for _, fp := range r.w.foreign {
		take(fp.node, fp.req)
	}
	modelled := map[types.UID]bool{}
	for _, rj := range r.jobs {
		for _, p := range rj.allocPods {
			modelled[p.uid] = true
		}
	}
	for _, p := range r.w.pods {
		node := p.node
		if node == "" {
			node = r.w.assumed[p.uid]
		}
		if node != "" && !modelled[p.uid] {
			take(node, p.req)
		}
	}
	for i := range nodes {
		nodes[i].Capacity = capacity(r.nodes[r.nodeIdx[nodes[i].Name]].alloc, taken[i])
	}
}

// claimGPUs picks free GPUs for the claimed reservations.
func (r *round) claimGPUs() {
	taken := map[int]uint64{}
	for i := range r.claims {
		a := &r.claims[i]
		rv := r.byModel[a.Job].kj.reserve
		for _, nc := range rv.nodes {
			ci := r.cidx[nc.node]
			m := r.state.FreeMask(ci) &^ taken[ci]
			for range nc.gpus {
				g := bits.TrailingZeros64(m)
				a.GPUs = append(a.GPUs, model.GPU{Node: int32(ci), Index: int32(g)})
				m &^= 1 << uint(g)
				taken[ci] |= 1 << uint(g)
			}
		}
	}
}

// clusterNodes returns the cluster's nodes (the usable nodes with GPUs
// left for gpusched, capacities not yet set) and GPU types, and indexes
// the nodes by name in r.cidx.
func (r *round) clusterNodes() ([]model.Node, []model.GPUType) {
	var nodes []model.Node
	var types []model.GPUType
	typeIdx := map[string]int{}
	r.cidx = map[string]int{}
	for i, n := range r.nodes {
		gpus := min(r.base[i]-r.held[i], model.MaxGPUsPerNode)
		if gpus <= 0 {
			continue
		}
		t, ok := typeIdx[n.typ]
		if !ok {
			t = len(types)
			typeIdx[n.typ] = t
			types = append(types, r.gpuType(n.typ))
		}
		r.cidx[n.name] = len(nodes)
		nodes = append(nodes, model.Node{Name: n.name, Type: t, GPUs: gpus})
	}
	return nodes, types
}

// cluster0 returns the model cluster of nodes and types: the previous
// round's when nothing changed.
func (r *round) cluster0(nodes []model.Node, types []model.GPUType) *model.Cluster {
	if p := r.s.prevCluster; p != nil && slices.EqualFunc(p.Nodes, nodes, model.Node.Equal) && slices.Equal(p.Types, types) {
		return p
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		r.s.log.Error("cannot build the cluster", "err", err)
		return nil
	}
	return c
}

// gpuType describes a GPU type: the catalog's entry (or 1 TFLOPS and
// unchecked memory for a type it lacks), with the smallest memory the
// type's nodes label, when they do.
func (r *round) gpuType(name string) model.GPUType {
	t, ok := config.LookupType(name)
	if !ok {
		t = model.GPUType{MemMiB: unknownMemMiB, TFLOPS: 1}
	}
	t.Name = name
	mem := 0
	for _, n := range r.nodes {
		if n.typ == name && n.memMiB > 0 && (mem == 0 || n.memMiB < mem) {
			mem = n.memMiB
		}
	}
	if mem > 0 {
		t.MemMiB = mem
	}
	return t
}

// table returns the profile table of cluster c with the current matrix,
// cached while neither changes.
func (s *Scheduler) table(c *model.Cluster) (*profile.Table, error) {
	if s.tab != nil && s.tabCluster == c && s.tabMatrix == s.matrix {
		return s.tab, nil
	}
	t, err := profile.NewTable(s.matrix, c, s.ref)
	if err != nil {
		return nil, err
	}
	s.tab, s.tabCluster, s.tabMatrix = t, c, s.matrix
	return t, nil
}

// shapes returns the round's job shapes for the pod placer.
func (r *round) shapes() shapes {
	out := make(shapes, len(r.jobs))
	for _, rj := range r.jobs {
		if !rj.inState {
			continue
		}
		if elig := r.eligible(rj); rj.pod != 1 || elig != nil {
			out[rj.kj.mj] = shape{pod: rj.pod, elig: elig}
		}
	}
	return out
}

// eligible returns, per cluster node, whether it accepts the job's pods;
// nil when every node does.
func (r *round) eligible(rj *rjob) []bool {
	si := r.sigOf(rj)
	if si.usable == nil || si.clusterDone {
		return si.cluster
	}
	si.cluster, si.clusterDone = make([]bool, len(r.cluster.Nodes)), true
	for i, n := range r.cluster.Nodes {
		si.cluster[i] = si.usable[r.nodeIdx[n.Name]]
	}
	return si.cluster
}
