package engine

import (
	"math"
	"math/bits"

	"github.com/gpusched/gpusched/core/model"
)

// vectors is the pool's view of the resources besides GPUs (CPU, memory,
// pods, named resources) that the cluster models: what is free on each
// node this round. It is empty, and every method a no-op that admits
// everything, when the cluster models none, so that GPU-only inputs take
// exactly the GPU-only paths.
type vectors struct {
	state *model.State
	res   int     // resources per node
	free  []int64 // per node, per resource; negative when a node is over-full
	// hidden are the free GPUs that focus took from the pool; why counts,
	// by resource, the nodes where that resource hid GPUs.
	hidden []model.GPU
	hidOn  []int32 // per node, GPUs hidden there
	why    []int
}

// resetVectors loads what is free of every resource on every node of s.
func (p *Pool) resetVectors(s *model.State) {
	v := &p.vec
	v.state, v.res = s, len(p.c.Resources())
	if v.res == 0 {
		v.free = v.free[:0]
		return
	}
	if cap(v.free) < len(p.c.Nodes)*v.res {
		v.free = make([]int64, len(p.c.Nodes)*v.res)
		v.why = make([]int, v.res)
		v.hidOn = make([]int32, len(p.c.Nodes))
	}
	v.free = v.free[:len(p.c.Nodes)*v.res]
	for n := range p.c.Nodes {
		capa, used, free := p.c.Capacity(n), s.Used(n), v.free[n*v.res:(n+1)*v.res]
		for r := range free {
			free[r] = capa[r] - used[r]
		}
	}
}

// request returns what one replica of j asks, nil when nothing the
// cluster models.
func (p *Pool) request(j *model.Job) model.Vec {
	if p.vec.res == 0 {
		return nil
	}
	return p.vec.state.Request(j)
}

// NodeFreeVec returns what is free of the cluster's resources on node n
// this round, in the order of Cluster.Resources (nil when it models none).
// Do not modify the slice.
func (p *Pool) NodeFreeVec(n int) model.Vec {
	r := p.vec.res
	if r == 0 {
		return nil
	}
	return p.vec.free[n*r : (n+1)*r : (n+1)*r]
}

// Request returns what one replica of j asks of the cluster's resources
// (nil: nothing that the cluster models). Do not modify the slice.
func (p *Pool) Request(j *model.Job) model.Vec { return p.request(j) }

// Room returns how many more GPUs job j may take on node n, where it holds
// have GPUs already, as far as the node's other resources go (not its free
// GPUs): whole replicas only, the one that have started counting whole.
// It is math.MaxInt when j asks for nothing the cluster models; limit, when
// not negative, is the resource that bounds it.
func (p *Pool) Room(j *model.Job, n, have int) (room, limit int) {
	req := p.request(j)
	if req == nil {
		return math.MaxInt, -1
	}
	rg := j.Spec.Replica()
	reps, limit := int64(math.MaxInt32), -1
	free := p.NodeFreeVec(n)
	for r, q := range req {
		if q <= 0 {
			continue
		}
		if k := max(free[r], 0) / q; k < reps {
			reps, limit = k, r
		}
	}
	return int(int64(model.Replicas(have, rg)+int(reps))*int64(rg)) - have, limit
}

// charge adds (sign 1) or removes (-1) what j's replicas on gpus ask to or
// from the nodes' free resources.
func (p *Pool) charge(j *model.Job, gpus []model.GPU, sign int64) {
	req := p.request(j)
	if req == nil {
		return
	}
	model.NodeCounts(gpus, func(n, k int) {
		reps, free := sign*int64(model.Replicas(k, j.Spec.ReplicaGPUs)), p.NodeFreeVec(n)
		for r, q := range req {
			free[r] -= reps * q
		}
	})
	p.version++
}

// TakeJob marks gpus as used by job j: the GPUs and what j's replicas on
// them ask of each node's other resources. gpus must be free.
func (p *Pool) TakeJob(j *model.Job, gpus []model.GPU) {
	p.Take(gpus)
	p.charge(j, gpus, 1)
}

// GiveJob frees gpus of job j and what its replicas there asked.
func (p *Pool) GiveJob(j *model.Job, gpus []model.GPU) {
	p.Give(gpus)
	p.charge(j, gpus, -1)
}

// Rebook moves job j's claim on the nodes' other resources from the
// allocation from to the allocation to (a resize; GPUs are taken and
// given apart).
func (p *Pool) Rebook(j *model.Job, from, to []model.GPU) {
	if p.request(j) == nil {
		return
	}
	p.charge(j, from, -1)
	p.charge(j, to, 1)
}

// Fits reports whether job j's replicas on gpus fit what the nodes have
// free of every resource besides GPUs (the GPUs' own freedom aside).
func (p *Pool) Fits(j *model.Job, gpus []model.GPU) bool {
	req := p.request(j)
	if req == nil {
		return true
	}
	ok := true
	model.NodeCounts(gpus, func(n, k int) {
		reps, free := int64(model.Replicas(k, j.Spec.ReplicaGPUs)), p.NodeFreeVec(n)
		for r, q := range req {
			if q > 0 && reps*q > free[r] {
				ok = false
			}
		}
	})
	return ok
}

// Retakable reports whether running job j may keep gpus, its allocation,
// after they were released this round: every GPU still free and its
// requests still fitting.
func (p *Pool) Retakable(j *model.Job, gpus []model.GPU) bool {
	return p.AllFree(gpus) && p.Fits(j, gpus)
}

// focus hides from the pool, until unfocus, the free GPUs that job j
// cannot use because a node lacks its other resources: on each node with
// free GPUs it leaves at most Room(j, n, 0) of them, the lowest. Placers
// then see only GPUs that j can take. It returns whether it hid any GPU.
func (p *Pool) focus(j *model.Job) bool {
	v := &p.vec
	v.hidden = v.hidden[:0]
	if p.request(j) == nil {
		return false
	}
	clear(v.why)
	for n := range p.c.Nodes {
		m := p.free[n]
		if m == 0 {
			continue
		}
		room, limit := p.Room(j, n, 0)
		k := bits.OnesCount64(m)
		if room >= k {
			continue
		}
		v.why[limit]++
		v.hidOn[n] = int32(k - max(room, 0))
		for ; k > max(room, 0); k-- {
			i := 63 - bits.LeadingZeros64(m)
			v.hidden = append(v.hidden, model.GPU{Node: int32(n), Index: int32(i)})
			m &^= 1 << uint(i)
		}
	}
	p.Take(v.hidden)
	return len(v.hidden) > 0
}

// unfocus gives back the GPUs that focus hid.
func (p *Pool) unfocus() {
	for _, g := range p.vec.hidden {
		p.vec.hidOn[g.Node] = 0
	}
	p.Give(p.vec.hidden)
	p.vec.hidden = p.vec.hidden[:0]
}

// Hidden returns how many free GPUs of node n are hidden from the job
// being placed because the node lacks its other resources (they stay free
// for other jobs).
func (p *Pool) Hidden(n int) int {
	if len(p.vec.hidOn) == 0 {
		return 0
	}
	return int(p.vec.hidOn[n])
}

// scarce returns the resource that hid the most nodes' GPUs at the last
// focus, or "".
func (p *Pool) scarce() string {
	best, name := 0, ""
	for r, k := range p.vec.why {
		if k > best {
			best, name = k, p.c.Resources()[r]
		}
	}
	return name
}

// placeWith asks the placer to place j on n GPUs of a type in fit, with
// the free GPUs that j cannot use for want of other resources hidden
// (focus), and keeps the answer only when j and every job it moves fit
// what the nodes have free of every resource. When the hidden GPUs were
// what j lacked, e.short names the resource that hid the most.
func (e *Engine) placeWith(s *model.State, j *model.Job, n int, fit TypeSet) Placement {
	hid := e.pool.focus(j)
	pl := e.placer.Place(s, e.pool, j, n, fit)
	if hid {
		if pl.GPUs == nil && pl.Pause == "" {
			e.short = e.pool.scarce()
		}
		e.pool.unfocus()
	}
	if pl.GPUs != nil && e.pool.vec.res > 0 && !e.pool.placementFits(j, pl) {
		return Placement{}
	}
	return pl
}

// placementFits reports whether j on pl.GPUs, and every job pl moves on
// its new GPUs, fit what the nodes have free of the resources besides
// GPUs, the moved jobs' present requests released. The pool is unchanged.
func (p *Pool) placementFits(j *model.Job, pl Placement) bool {
	for _, m := range pl.Moves {
		p.charge(m.Job, m.Job.Alloc, -1)
	}
	ok, charged := true, 0
	for _, m := range pl.Moves {
		if ok = p.Fits(m.Job, m.GPUs); !ok {
			break
		}
		p.charge(m.Job, m.GPUs, 1)
		charged++
	}
	ok = ok && p.Fits(j, pl.GPUs)
	for i, m := range pl.Moves {
		if i < charged {
			p.charge(m.Job, m.GPUs, -1)
		}
		p.charge(m.Job, m.Job.Alloc, 1)
	}
	return ok
}
