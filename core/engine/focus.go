package engine

import (
	"math/bits"

	"github.com/gpusched/gpusched/core/model"
)

// focus hides from the pool, until unfocus, the free GPUs that job j
// cannot use because a node lacks its other resources: on each node with
// free GPUs and room for fewer than n of them (freshRoom) it leaves
// that many, the lowest — a placement takes at most n GPUs of any node, so
// a node with room for n needs no hiding. Placers
// then see only GPUs that j can take, on the types in fit that have n free
// GPUs. It returns whether it hid any GPU, and hopeless when no type in
// fit has n GPUs that j could use (then it hides nothing: no placer could
// place j, as a placement is of one type).
func (p *Pool) focus(j *model.Job, n int, fit TypeSet) (hid, hopeless bool) {
	v := &p.vec
	req := p.request(j)
	if req == nil {
		return false, false
	}
	if p.knownShort(j, req, n, fit) {
		return false, true
	}
	clear(v.why)
	rg := j.Spec.Replica()
	// A node holds at most one replica of j's (n ≤ rg), and j asks no more
	// than the round's largest request: the rich nodes need no look.
	onePerNode := n <= rg && len(v.ceil) > 0 && covers(v.ceil, req)
	if onePerNode && v.hid.rich > 0 {
		p.restoreAll() // the rich counts must be true ones
	}
	v.reps = v.reps[:0]
	for k := range min(n, 64) + 1 {
		v.reps = append(v.reps, int64(model.Replicas(k, rg)))
	}
	v.next = v.next[:0]
	usable := 0 // the most usable GPUs of one type
	for t := range p.c.Types {
		if fit.Has(t) && p.typeFree[t]+v.hid.ofType[t] >= n {
			usable = max(usable, p.usableOf(t, req, rg, n, onePerNode))
		}
	}
	if usable < n {
		p.noteShort(j, req, n, fit)
		return false, true
	}
	p.rehide()
	return len(v.masks) > 0, false
}

// usableOf returns how many GPUs of type t job j (replicas of rg GPUs
// asking req each, n GPUs in all) could use, and appends to vec.next the
// nodes whose room is less than their free GPUs, with the room to keep.
func (p *Pool) usableOf(t int, req model.Vec, rg, n int, onePerNode bool) int {
	v := &p.vec
	u, index := 0, &p.buckets[t].any
	if onePerNode {
		u, index = p.richUsable(t, n), &p.tight[t] // rich nodes hold j
	}
	v.nodes = index.appendTo(v.nodes[:0])
	for _, nm := range v.masks { // hidden whole: not in the index
		if int(p.typeOf[nm.node]) == t && nm.keep == 0 {
			v.nodes = append(v.nodes, nm.node)
		}
	}
	for _, i := range v.nodes {
		m := p.trueMask(int(i))
		want := min(bits.OnesCount64(m), n)
		if p.holdsGPUs(req, v.reps[want], int(i)) {
			u += want // no placement of n GPUs takes more than room here
			continue
		}
		room, limit := p.freshRoom(req, rg, int(i))
		u += room
		v.why[limit]++
		v.next = append(v.next, nodeMask{node: i, mask: m, keep: int8(room)})
	}
	return u
}

// rehide makes the pool hide what vec.next says: it changes only the
// nodes whose hiding differs from what is hidden already (lazily, from
// the previous placement), and gives back the rest.
func (p *Pool) rehide() {
	v := &p.vec
	for _, nm := range v.next {
		if at := v.hid.at[nm.node]; at > 0 {
			v.masks[at-1].seen = true
			if v.masks[at-1].keep == nm.keep {
				continue
			}
		}
		p.hide(int(nm.node), nm.mask, int(nm.keep))
		v.masks[v.hid.at[nm.node]-1].seen = true
	}
	for x := len(v.masks) - 1; x >= 0; x-- {
		if v.masks[x].seen {
			v.masks[x].seen = false
		} else {
			p.restore(x)
		}
	}
	v.hid.lazy = false
}

// nodeMask is a node's free-GPU mask before focus hid some of them, and
// how many of them it kept visible.
type nodeMask struct {
	node int32
	mask uint64
	keep int8
	seen bool // rehide's mark
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

// freshRoom returns how many GPUs node n has room for, as far as its
// resources besides GPUs go, for a job that holds none there and whose
// replicas have rg GPUs and ask req each: whole replicas, capped at 64 (no
// node has more GPUs); limit is the resource that bounds it.
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
	sh := short{freed: v.freed, rg: j.Spec.Replica(), n: n, fit: fit, limit: p.scarcest()}
	kept := v.shorts[:0]
	for _, o := range v.shorts {
		if o.freed == v.freed && !(o.rg == sh.rg && o.n >= sh.n && o.fit&^sh.fit == 0 && covers(o.req, req)) {
			kept = append(kept, o) // still valid and not implied by sh
		} else {
			v.spareReqs = append(v.spareReqs, o.req)
		}
	}
	if len(kept) == shortMemo {
		v.spareReqs = append(v.spareReqs, kept[0].req)
		kept = append(kept[:0], kept[1:]...)
	}
	sh.req = model.Vec(nil)
	if k := len(v.spareReqs); k > 0 {
		sh.req, v.spareReqs = v.spareReqs[k-1][:0], v.spareReqs[:k-1]
	}
	sh.req = append(sh.req, req...)
	v.shorts = append(kept, sh)
}

// Hidden returns how many free GPUs of node n are hidden from the job
// being placed because the node lacks its other resources (they stay free
// for other jobs).
func (p *Pool) Hidden(n int) int {
	if p.vec.hid.lazy || len(p.vec.hid.at) == 0 {
		return 0 // a lazy hiding hides nothing
	}
	return p.hiddenOn(n)
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

// hideExcess hides, as focus does, the free GPUs beyond j's room on the
// nodes where gpus take more than that, and reports whether there were
// any.
func (p *Pool) hideExcess(j *model.Job, req model.Vec, gpus []model.GPU) bool {
	rg, hid := j.Spec.Replica(), false
	model.NodeCounts(gpus, func(i, k int) {
		room, limit := p.freshRoom(req, rg, i)
		if k <= room || p.vec.hid.at[i] > 0 {
			return
		}
		p.vec.why[limit]++
		p.hide(i, p.free[i], room)
		hid = true
	})
	return hid
}
