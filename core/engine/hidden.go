package engine

import "math/bits"

// The GPUs that focus and refine hide from the placers stay hidden after
// the placement that needed them (unfocus only marks them lazy), because
// the next job's focus hides nearly the same nodes again: on a cluster
// whose CPU or memory runs out first, nineteen of twenty nodes keep what
// they had hidden, and moving each of them out of the pool's indexes and
// back for every job was most of the round. A lazy hiding is invisible:
// every method that reads the pool's free GPUs first gives them all back
// (settle), every change of a node's free GPUs or resources first gives
// back that node's (unhide), and the next focus starts from the nodes'
// true free GPUs and changes only the nodes whose hiding differs.

// hidden is what the pool hides: per node, its place in masks plus one
// (0: nothing hidden), and per type, the GPUs hidden there.
type hidden struct {
	at     []int32
	ofType []int
	rich   int  // entries on rich nodes (focus on the tight index settles first)
	lazy   bool // the hiding has served its placement (unfocus)
}

// hide leaves the lowest keep of node i's free GPUs m visible, m being
// all its free GPUs (hidden ones included).
func (p *Pool) hide(i int, m uint64, keep int) {
	v := &p.vec
	k, t := bits.OnesCount64(m), int(p.typeOf[i])
	if at := v.hid.at[i]; at > 0 {
		v.hid.ofType[t] -= p.hiddenOn(i)
		v.masks[at-1].keep = int8(keep)
	} else {
		v.masks = append(v.masks, nodeMask{node: int32(i), mask: m, keep: int8(keep)})
		v.hid.at[i] = int32(len(v.masks))
		if p.rich[i] {
			v.hid.rich++
		}
	}
	v.hid.ofType[t] += k - keep
	for ; k > keep; k-- {
		m &^= 1 << uint(63-bits.LeadingZeros64(m))
	}
	p.set(i, m)
}

// restore gives back the GPUs hidden on the node of masks[x], moving the
// last entry into its place.
func (p *Pool) restore(x int) {
	v := &p.vec
	nm := v.masks[x]
	i := int(nm.node)
	v.hid.ofType[p.typeOf[i]] -= p.hiddenOn(i)
	if p.rich[i] {
		v.hid.rich--
	}
	v.hid.at[i] = 0
	p.set(i, nm.mask)
	last := len(v.masks) - 1
	if x != last {
		v.masks[x] = v.masks[last]
		v.hid.at[v.masks[x].node] = int32(x + 1)
	}
	v.masks = v.masks[:last]
}

// unhide gives back node n's lazily hidden GPUs, before the node
// changes. While a placer works, the hiding is not lazy and stays.
func (p *Pool) unhide(n int) {
	if p.vec.hid.lazy {
		if at := p.vec.hid.at[n]; at > 0 {
			p.restore(int(at - 1))
		}
	}
}

// settle gives back every GPU of a lazy hiding, before the pool is read.
func (p *Pool) settle() {
	if p.vec.hid.lazy {
		p.restoreAll()
	}
}

// restoreAll gives back every hidden GPU.
func (p *Pool) restoreAll() {
	for x := len(p.vec.masks) - 1; x >= 0; x-- {
		p.restore(x)
	}
	p.vec.hid.lazy = false
}

// dropHidden forgets what is hidden without giving it back (a reset
// reloads every node).
func (p *Pool) dropHidden() {
	v := &p.vec
	for _, nm := range v.masks {
		v.hid.at[nm.node] = 0
	}
	v.masks = v.masks[:0]
	clear(v.hid.ofType)
	v.hid.rich, v.hid.lazy = 0, false
}

// hiddenOn returns how many of node i's free GPUs are hidden.
func (p *Pool) hiddenOn(i int) int {
	if at := p.vec.hid.at[i]; at > 0 {
		nm := &p.vec.masks[at-1]
		return bits.OnesCount64(nm.mask) - int(nm.keep)
	}
	return 0
}

// trueMask returns node n's free GPUs, hidden ones included.
func (p *Pool) trueMask(n int) uint64 {
	if at := p.vec.hid.at[n]; at > 0 {
		return p.vec.masks[at-1].mask
	}
	return p.free[n]
}

// unfocus ends a placement's hiding: the GPUs stay hidden, lazily, until
// the pool is read or changed, or the next focus decides.
func (p *Pool) unfocus() {
	if len(p.vec.masks) > 0 {
		p.vec.hid.lazy = true
	}
}
