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
	// masks are the nodes where focus hid free GPUs, with their masks
	// before; why counts, by resource, the nodes where that resource hid
	// GPUs.
	masks []nodeMask
	hidOn []int32 // per node, GPUs hidden there
	nodes []int32 // focus's scratch: nodes with free GPUs
	reps  []int64 // focus's scratch: replicas per GPU count
	why   []int
	// freed counts the times the pool gained GPUs or resources (resets
	// included); shorts are shapes found short since (knownShort).
	freed  uint64
	shorts []short
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
	v.shorts = v.shorts[:0]
	v.refine.credit, v.refine.skipped = refineCredit/2, 0
	if v.res == 0 {
		v.free = v.free[:0]
		return
	}
	if cap(v.free) < len(p.c.Nodes)*v.res {
		v.free = make([]int64, len(p.c.Nodes)*v.res)
		v.why = make([]int, v.res)
		v.hidOn = make([]int32, len(p.c.Nodes))
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

// focus hides from the pool, until unfocus, the free GPUs that job j
// cannot use because a node lacks its other resources: on each node with
// free GPUs and room for fewer than n of them (Room(j, n, 0)) it leaves
// that many, the lowest — a placement takes at most n GPUs of any node, so
// a node with room for n needs no hiding. Placers
// then see only GPUs that j can take, on the types in fit that have n free
// GPUs. It returns whether it hid any GPU, and hopeless when no type in
// fit has n GPUs that j could use (then it hides nothing: no placer could
// place j, as a placement is of one type).
func (p *Pool) focus(j *model.Job, n int, fit TypeSet) (hid, hopeless bool) {
	v := &p.vec
	v.masks = v.masks[:0]
	req := p.request(j)
	if req == nil {
		return false, false
	}
	if p.knownShort(j, req, n, fit) {
		return false, true
	}
	clear(v.why)
	rg, usable := j.Spec.Replica(), 0 // the most usable GPUs of one type
	// A node holds at most one replica of j's (n ≤ rg), and j asks no more
	// than the round's largest request: the rich nodes need no look.
	onePerNode := n <= rg && len(v.ceil) > 0 && covers(v.ceil, req)
	v.reps = v.reps[:0]
	for k := range min(n, 64) + 1 {
		v.reps = append(v.reps, int64(model.Replicas(k, rg)))
	}
	for t := range p.c.Types {
		if !fit.Has(t) || p.typeFree[t] < n {
			continue
		}
		u, index := 0, p.buckets[t]
		if onePerNode {
			u, index = p.richUsable(t, n), p.tight[t] // rich nodes hold j
		}
		v.nodes = appendNodes(v.nodes[:0], index, 1)
		for _, i := range v.nodes {
			m := p.free[i]
			want := min(bits.OnesCount64(m), n)
			if p.holdsGPUs(req, v.reps[want], int(i)) {
				u += want // no placement of n GPUs takes more than room here
				continue
			}
			room, limit := p.freshRoom(req, rg, int(i))
			u += room
			v.why[limit]++
			v.masks = append(v.masks, nodeMask{node: i, mask: m, keep: int8(room)})
		}
		usable = max(usable, u)
	}
	if usable < n {
		p.noteShort(j, req, n, fit)
		v.masks = v.masks[:0]
		return false, true
	}
	for _, nm := range v.masks {
		p.hide(int(nm.node), nm.mask, int(nm.keep))
	}
	return len(v.masks) > 0, false
}

// unfocus gives back the GPUs that focus hid.
func (p *Pool) unfocus() {
	for _, nm := range p.vec.masks {
		p.vec.hidOn[nm.node] = 0
		p.set(int(nm.node), nm.mask)
	}
	p.vec.masks = p.vec.masks[:0]
}

// nodeMask is a node's free-GPU mask before focus hid some of them, and
// how many of them it kept visible.
type nodeMask struct {
	node int32
	mask uint64
	keep int8
}

// holdsGPUs reports whether node n has room, as far as its resources
// besides GPUs go, for reps replicas that ask req each.
func (p *Pool) holdsGPUs(req model.Vec, reps int64, n int) bool {
	free := p.vec.free[n*p.vec.res : (n+1)*p.vec.res]
	for r, q := range req {
		if free[r] < reps*q {
			return false
		}
	}
	return true
}

// freshRoom is Room(j, n, 0) for a job whose replicas have rg GPUs and
// ask req each, capped at 64 (no node has more GPUs).
func (p *Pool) freshRoom(req model.Vec, rg, n int) (room, limit int) {
	free := p.vec.free[n*p.vec.res : (n+1)*p.vec.res]
	for r, q := range req {
		if free[r] < q {
			return 0, r // the common case, without a division
		}
	}
	reps, limit := int64(64), -1
	for r, q := range req {
		if q > 0 {
			if k := max(free[r], 0) / q; k < reps {
				reps, limit = k, r
			}
		}
	}
	return int(min(reps*int64(rg), 64)), limit
}

// short is a job shape that could not find n usable GPUs on the types in
// fit while nothing had been freed since (freed).
type short struct {
	freed uint64
	rg, n int
	fit   TypeSet
	req   model.Vec
	limit int // the resource that hid the most GPUs from it
}

// shortMemo bounds the shapes remembered per round.
const shortMemo = 8

// knownShort reports whether a shape that j dominates (same replica size,
// at least as many GPUs, a subset of its types, at least its request of
// every resource) was found short of usable GPUs, with nothing freed
// since: then j is short too, and focus need not look at every node.
func (p *Pool) knownShort(j *model.Job, req model.Vec, n int, fit TypeSet) bool {
	rg := j.Spec.Replica()
	for _, sh := range p.vec.shorts {
		if sh.freed == p.vec.freed && sh.rg == rg && n >= sh.n && fit&^sh.fit == 0 && covers(req, sh.req) {
			clear(p.vec.why)
			if sh.limit >= 0 {
				p.vec.why[sh.limit] = 1
			}
			return true
		}
	}
	return false
}

// noteShort remembers that j's shape found too few usable GPUs.
func (p *Pool) noteShort(j *model.Job, req model.Vec, n int, fit TypeSet) {
	v := &p.vec
	sh := short{freed: v.freed, rg: j.Spec.Replica(), n: n, fit: fit, req: append(model.Vec(nil), req...), limit: p.scarcest()}
	kept := v.shorts[:0]
	for _, o := range v.shorts {
		if o.freed == v.freed && !(o.rg == sh.rg && o.n >= sh.n && o.fit&^sh.fit == 0 && covers(o.req, sh.req)) {
			kept = append(kept, o) // still valid and not implied by sh
		}
	}
	if len(kept) == shortMemo {
		kept = kept[1:]
	}
	v.shorts = append(kept, sh)
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
	if r := p.scarcest(); r >= 0 {
		return p.c.Resources()[r]
	}
	return ""
}

// scarcest is scarce as a resource index, -1 for none.
func (p *Pool) scarcest() int {
	best, idx := 0, -1
	for r, k := range p.vec.why {
		if k > best {
			best, idx = k, r
		}
	}
	return idx
}

// placeWith asks the placer to place j on n GPUs of a type in fit and
// keeps the answer only when j and every job it moves fit what the nodes
// have free of every resource. Where j asks for resources besides GPUs,
// the placer first sees the whole pool (most placements fit as they are);
// when its answer does not fit, it tries again with the free GPUs that j
// cannot use for want of other resources hidden (focus). When the hidden
// GPUs were what j lacked, e.short names the resource that hid the most.
func (e *Engine) placeWith(s *model.State, j *model.Job, n int, fit TypeSet) Placement {
	p := e.pool
	req := p.request(j)
	if req == nil {
		return e.placer.Place(s, p, j, n, fit)
	}
	if p.knownShort(j, req, n, fit) {
		return e.shortOf(n, fit)
	}
	if pl, ok := e.refine(s, j, req, n, fit); ok {
		return pl
	}
	hid, hopeless := p.focus(j, n, fit)
	if hopeless {
		return e.shortOf(n, fit)
	}
	pl := e.quietPlace(s, j, n, fit)
	failed := pl.GPUs == nil && pl.Pause == ""
	if hid {
		if failed {
			e.short = p.scarce()
		}
		p.unfocus()
	}
	if failed && e.short == "" {
		e.short = p.starvedShort(n, fit)
	}
	if pl.GPUs != nil && !p.FitsPlacement(j, pl) {
		return Placement{}
	}
	return pl
}

// refine asks the placer to place j on the pool as it is and, while its
// answer takes more GPUs of some node than the node has room for, hides
// that node's excess and asks again, up to refineTries times. A placer's
// first choices are usually a few nodes away from one that fits, where
// focus checks every node with free GPUs. ok is false when it gives up
// (the caller focuses); the pool is left as it was. A placer that finds
// nothing on this view, which holds every GPU j could use, finds nothing
// with focus either.
func (e *Engine) refine(s *model.State, j *model.Job, req model.Vec, n int, fit TypeSet) (Placement, bool) {
	p := e.pool
	if r := &p.vec.refine; r.credit <= 0 {
		if r.skipped++; r.skipped%refineProbe != 0 {
			return Placement{}, false
		}
	}
	clear(p.vec.why)
	defer p.unfocus()
	for range refineTries {
		pl := e.quietPlace(s, j, n, fit)
		switch {
		case pl.GPUs == nil:
			if pl.Pause == "" {
				e.shortOf(n, fit)
			}
			return pl, true
		case p.FitsPlacement(j, pl):
			p.vec.refine.credit = min(p.vec.refine.credit+1, refineCredit)
			return pl, true
		case !p.hideExcess(j, req, pl.GPUs):
			return Placement{}, false // a job it moves does not fit
		}
	}
	p.vec.refine.credit = max(p.vec.refine.credit-2, -refineCredit)
	return Placement{}, false
}

// refineTries bounds refine's placer calls. Refining costs more than
// focusing where most nodes lack room or the placer is dear (fit scores
// many nodes a call): a placement that needed more tries takes 2 from a
// credit that each refined placement adds 1 to (at most refineCredit);
// without credit, refine tries only every refineProbe-th placement. The
// credit depends only on the round's history, so rounds stay
// deterministic.
const (
	refineTries  = 4
	refineCredit = 8
	refineProbe  = 16
)

// hideExcess hides, as focus does, the free GPUs beyond j's room on the
// nodes where gpus take more than that, and reports whether there were
// any.
func (p *Pool) hideExcess(j *model.Job, req model.Vec, gpus []model.GPU) bool {
	rg, hid := j.Spec.Replica(), false
	model.NodeCounts(gpus, func(i, k int) {
		room, limit := p.freshRoom(req, rg, i)
		if k <= room || p.vec.hidOn[i] > 0 {
			return
		}
		m := p.free[i]
		p.vec.why[limit]++
		p.vec.masks = append(p.vec.masks, nodeMask{node: int32(i), mask: m, keep: int8(room)})
		p.hide(i, m, room)
		hid = true
	})
	return hid
}

// shortReason is reasonShort(resource), built once per resource.
func (e *Engine) shortReason(resource string) string {
	r, ok := e.shortReasons[resource]
	if !ok {
		if e.shortReasons == nil {
			e.shortReasons = map[string]string{}
		}
		r = reasonShort(resource)
		e.shortReasons[resource] = r
	}
	return r
}

// shortOf sets e.short for a job found short of usable GPUs: the resource
// that hid the most of them from it, or else the one that starves the most
// nodes, and returns no placement.
func (e *Engine) shortOf(n int, fit TypeSet) Placement {
	if e.short = e.pool.scarce(); e.short == "" {
		e.short = e.pool.starvedShort(n, fit)
	}
	return Placement{}
}

// quietPlace is the placer's answer, its own takes and gives of GPUs not
// counted as freeing any.
func (e *Engine) quietPlace(s *model.State, j *model.Job, n int, fit TypeSet) Placement {
	e.pool.vec.quiet = true
	defer func() { e.pool.vec.quiet = false }()
	return e.placer.Place(s, e.pool, j, n, fit)
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

// hide leaves the lowest keep of node i's free GPUs m visible.
func (p *Pool) hide(i int, m uint64, keep int) {
	k := bits.OnesCount64(m)
	p.vec.hidOn[i] = int32(k - keep)
	for ; k > keep; k-- {
		m &^= 1 << uint(63-bits.LeadingZeros64(m))
	}
	p.set(i, m)
}

// resetRemainRes sets, per GPU type, what its nodes offer in all of each
// resource besides GPUs: preemptive's budget (bookRes).
func (e *Engine) resetRemainRes(s *model.State) {
	res := len(s.Cluster.Resources())
	e.remainRes = e.remainRes[:0]
	if res == 0 {
		return
	}
	for range len(s.Cluster.Types) * res {
		e.remainRes = append(e.remainRes, 0)
	}
	for n, node := range s.Cluster.Nodes {
		capa := s.Cluster.Capacity(n)
		for r, v := range capa {
			e.remainRes[node.Type*res+r] += v
		}
	}
}

// resRoom reports whether the nodes of type t have left, in all, what reps
// replicas of j ask: preemptive selects a job only then, and stops a
// running job that does not fit the budget, so that a job kept waiting by
// CPU or memory, not GPUs, may still claim what lower jobs hold.
func (e *Engine) resRoom(s *model.State, j *model.Job, t, reps int) bool {
	req := s.Request(j)
	if len(e.remainRes) == 0 || req == nil {
		return true
	}
	left := e.remainRes[t*len(req):]
	for r, q := range req {
		if left[r] < int64(reps)*q {
			return false
		}
	}
	return true
}

// bookRes books reps replicas of j against type t's budget when it has
// room, and reports whether it had.
func (e *Engine) bookRes(s *model.State, j *model.Job, t, reps int) bool {
	if !e.resRoom(s, j, t, reps) {
		return false
	}
	if req := s.Request(j); len(e.remainRes) > 0 && req != nil {
		left := e.remainRes[t*len(req):]
		for r, q := range req {
			left[r] -= int64(reps) * q
		}
	}
	return true
}
