package engine

import "github.com/gpusched/gpusched/core/model"

// vectors is the pool's view of the resources besides GPUs (CPU, memory,
// pods, named resources) that the cluster models: what is free on each
// node this round. It is empty, and every method a no-op that admits
// everything, when the cluster models none, so that GPU-only inputs take
// exactly the GPU-only paths.
type vectors struct {
	state *model.State
	res   int     // resources per node
	free  []int64 // per node, per resource; negative when a node is over-full
	// masks are the nodes where focus hid free GPUs (or still hides them,
	// lazily: hidden.go), with their masks before; why counts, by
	// resource, the nodes where that resource hid GPUs.
	masks []nodeMask
	hid   hidden
	next  []nodeMask // focus's scratch: the nodes to hide
	nodes []int32    // focus's scratch: nodes with free GPUs
	reps  []int64    // focus's scratch: replicas per GPU count
	why   []int
	// freed counts the times the pool gained GPUs or resources (resets
	// included); shorts are shapes found short since (knownShort).
	freed     uint64
	shorts    []short
	spareReqs []model.Vec // the requests of forgotten shorts, for reuse
	// quiet is set while a placer works: its own Take and Give of GPUs
	// free nothing for good.
	quiet bool
	// refine is refine's credit in the round, and how many placements it
	// skipped without.
	refine struct{ credit, skipped int }
	// floor is the least that any job of the round asks per replica of
	// each resource; starvedOf and starvedBy count the starved GPUs by
	// type and by the resource their node lacks, starveRes is that
	// resource per node (starve.go).
	floor, ceil          []int64 // ceil: the most any job asks (rich nodes)
	starvedOf, starvedBy []int
	starveRes            []int8
}

// resetVectors loads what is free of every resource on every node of s.
func (p *Pool) resetVectors(s *model.State) {
	v := &p.vec
	v.state, v.res = s, len(p.c.Resources())
	v.freed++
	for _, sh := range v.shorts {
		v.spareReqs = append(v.spareReqs, sh.req)
	}
	v.shorts = v.shorts[:0]
	v.refine.credit, v.refine.skipped = refineCredit/2, 0
	if v.res == 0 {
		v.free = v.free[:0]
		return
	}
	if cap(v.free) < len(p.c.Nodes)*v.res {
		v.free = make([]int64, len(p.c.Nodes)*v.res)
		v.why = make([]int, v.res)
		v.hid.at, v.hid.ofType = make([]int32, len(p.c.Nodes)), make([]int, len(p.c.Types))
		v.starveRes = make([]int8, len(p.c.Nodes))
		v.starvedOf = make([]int, len(p.c.Types))
		v.starvedBy = make([]int, v.res)
	}
	v.free = v.free[:len(p.c.Nodes)*v.res]
	for n := range p.c.Nodes {
		capa, used, free := p.c.Capacity(n), s.Used(n), v.free[n*v.res:(n+1)*v.res]
		for r := range free {
			free[r] = capa[r] - used[r]
		}
	}
	p.resetFloor(s)
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
		p.reconsider(n)
	})
	if sign < 0 {
		p.vec.freed++
	}
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

// covers reports whether a asks at least b of every resource.
func covers(a, b model.Vec) bool {
	for r := range a {
		if a[r] < b[r] {
			return false
		}
	}
	return true
}

// FitsPlacement reports whether j on pl.GPUs, and every job pl moves on
// its new GPUs, fit what the nodes have free of the resources besides
// GPUs, the moved jobs' present requests released. The pool is unchanged.
// A placer that proposes moves checks them with it, to fall back on a
// placement without them.
func (p *Pool) FitsPlacement(j *model.Job, pl Placement) bool {
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
