package engine

import (
	"math/bits"

	"github.com/gpusched/gpusched/core/model"
)

// Pool is the engine's tentative view of the free GPUs during a round, with
// an index that finds, per GPU type, the nodes with exactly k free GPUs in
// lowest-index order. Every lookup costs O(nodes/64) at most.
type Pool struct {
	c         *model.Cluster
	free      []uint64            // per node, free GPU mask
	count     []int8              // per node, free GPUs (free's popcount)
	typeOf    []int8              // per node, its GPU type
	typeFree  []int               // free GPUs per type
	buckets   []index             // per type: nodes by free count
	unsettled map[*model.Job]bool // running jobs stopped or moved this round
	round     int
	version   uint64
	vec       vectors // resources besides GPUs (vector.go)
	// starved are, per node, free GPUs that no job of the round can use
	// for want of other resources there (starve.go); they are not in free.
	starved []uint64
	// rich marks the nodes whose free resources cover a replica of any
	// job of the round; tight holds, per type, the others with free GPUs
	// (what focus visits); richOf counts rich nodes by type and free GPUs
	// (starve.go). Nil on a cluster that models no resources.
	rich   []bool
	tight  []bucket
	richOf [][]int
	// state is the state of the last reset and mark its change log's mark
	// then; touched are the nodes whose free GPUs the pool changed since
	// (marked in isTouched): a reset reloads only those and the nodes that
	// state logged as changed, unless reloadAll (reset.go).
	state     *model.State
	mark      uint64
	touched   []int32
	isTouched []bool
	reloadAll bool
}

type bucket struct {
	words []uint64
	n     int // nodes in the bucket
	first int // no set bit below word first
}

func (b *bucket) add(node int) {
	w := node >> 6
	b.words[w] |= 1 << uint(node&63)
	b.n++
	b.first = min(b.first, w)
}

func (b *bucket) remove(node int) {
	b.words[node>>6] &^= 1 << uint(node&63)
	b.n--
}

// appendTo appends the bucket's nodes to dst in index order.
func (b *bucket) appendTo(dst []int32) []int32 {
	left := b.n
	for w := b.first; left > 0 && w < len(b.words); w++ {
		for m := b.words[w]; m != 0; m &= m - 1 {
			dst = append(dst, int32(w<<6+bits.TrailingZeros64(m)))
			left--
		}
	}
	return dst
}

// index finds the nodes of one GPU type by their free GPUs: by[k] holds
// the nodes with exactly k free, any those with at least one (what focus
// visits, in one pass over the nodes rather than one per count).
type index struct {
	by  []bucket
	any bucket
}

// newIndex sizes an index for nodes of at most maxGPUs GPUs in a cluster
// whose node bitsets have words words.
func newIndex(maxGPUs, words int) index {
	x := index{by: make([]bucket, maxGPUs+1), any: bucket{words: make([]uint64, words)}}
	for k := range x.by {
		x.by[k].words = make([]uint64, words)
	}
	return x
}

// add records node with k free GPUs.
func (x *index) add(node, k int) {
	x.by[k].add(node)
	if k > 0 {
		x.any.add(node)
	}
}

// move follows node's free GPUs from before to after.
func (x *index) move(node, before, after int) {
	x.by[before].remove(node)
	x.by[after].add(node)
	switch {
	case before == 0 && after > 0:
		x.any.add(node)
	case before > 0 && after == 0:
		x.any.remove(node)
	}
}

// clear empties the index.
func (x *index) clear() {
	clearBuckets(x.by)
	x.any.clear()
}

// lowest returns the lowest node in the bucket, or -1.
func (b *bucket) lowest() int {
	if b.n == 0 {
		return -1
	}
	for ; b.first < len(b.words); b.first++ {
		if w := b.words[b.first]; w != 0 {
			return b.first<<6 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// NewPool allocates a pool for cluster c.
func NewPool(c *model.Cluster) *Pool {
	p := &Pool{c: c, free: make([]uint64, len(c.Nodes)), starved: make([]uint64, len(c.Nodes)), typeFree: make([]int, len(c.Types)), unsettled: map[*model.Job]bool{}}
	p.count, p.typeOf = make([]int8, len(c.Nodes)), make([]int8, len(c.Nodes))
	p.isTouched, p.reloadAll = make([]bool, len(c.Nodes)), true
	for i, n := range c.Nodes {
		p.typeOf[i] = int8(n.Type)
	}
	words := (len(c.Nodes) + 63) / 64
	for t := range c.Types {
		p.buckets = append(p.buckets, newIndex(c.MaxNodeGPUs(t), words))
	}
	if c.Vectored() {
		p.rich = make([]bool, len(c.Nodes))
		for t := range c.Types {
			p.tight = append(p.tight, bucket{words: make([]uint64, words)})
			p.richOf = append(p.richOf, make([]int, c.MaxNodeGPUs(t)+1))
		}
	}
	return p
}

// Reset loads the free GPUs of s into the pool.
func (p *Pool) Reset(s *model.State) {
	p.dropHidden()
	if len(p.unsettled) > 0 {
		clear(p.unsettled)
	}
	if p.tight != nil { // only a cluster with other resources starves
		clear(p.starved)
	}
	p.round++
	p.version++
	if !p.resetChanged(s) {
		p.resetAll(s)
	}
	p.resetVectors(s)
}

// resetAll reloads every node's free GPUs from s.
func (p *Pool) resetAll(s *model.State) {
	p.untouch()
	p.state, p.mark = s, s.Mark()
	for t := range p.buckets {
		p.typeFree[t] = 0
		p.buckets[t].clear()
		if p.tight != nil {
			p.tight[t].clear()
			clear(p.richOf[t])
		}
	}
	clear(p.rich)
	for i := range p.c.Nodes {
		m := s.FreeMask(i)
		t, k := p.c.Nodes[i].Type, bits.OnesCount64(m)
		p.free[i], p.count[i] = m, int8(k)
		p.typeFree[t] += k
		p.buckets[t].add(i, k)
		if p.tight != nil && k > 0 {
			p.tight[t].add(i)
		}
	}
}

// clearBuckets empties buckets.
func clearBuckets(bs []bucket) {
	for k := range bs {
		bs[k].clear()
	}
}

// clear empties the bucket.
func (b *bucket) clear() {
	clear(b.words)
	b.n, b.first = 0, len(b.words)
}

// Round counts the pool's resets: placers may cache per-round indexes by it.
func (p *Pool) Round() int { return p.round }

// Version changes whenever the pool's free GPUs may have changed (a reset, a
// take, a give): placers may cache what they derived from the pool by it.
func (p *Pool) Version() uint64 { return p.version }

// Cluster returns the pool's cluster.
func (p *Pool) Cluster() *model.Cluster { return p.c }

// Free returns the number of free GPUs of type t.
func (p *Pool) Free(t int) int {
	p.settle()
	return p.typeFree[t]
}

// FreeAll returns the number of free GPUs of every type.
func (p *Pool) FreeAll() int {
	p.settle()
	n := 0
	for _, f := range p.typeFree {
		n += f
	}
	return n
}

// NodeFree returns the number of free GPUs on node n.
func (p *Pool) NodeFree(n int) int {
	p.settle()
	return bits.OnesCount64(p.free[n])
}

// NodeMask returns the free GPUs of node n as a bit mask.
func (p *Pool) NodeMask(n int) uint64 {
	p.settle()
	return p.free[n]
}

// BestFit returns the lowest-index node of type t whose free count is the
// smallest that is at least k, or -1.
func (p *Pool) BestFit(t, k int) int {
	p.settle()
	bs := p.buckets[t].by
	for c := max(k, 1); c < len(bs); c++ {
		if n := bs[c].lowest(); n >= 0 {
			return n
		}
	}
	return -1
}

// Fullest returns the lowest-index node of type t with the most free GPUs,
// or -1 when no GPU of type t is free.
func (p *Pool) Fullest(t int) int {
	p.settle()
	bs := p.buckets[t].by
	for c := len(bs) - 1; c >= 1; c-- {
		if n := bs[c].lowest(); n >= 0 {
			return n
		}
	}
	return -1
}

// Take marks GPUs as used. They must be free. The pool's index moves once
// per run of one node's GPUs, not once per GPU.
func (p *Pool) Take(gpus []model.GPU) {
	for i := 0; i < len(gpus); {
		n, taken := gpus[i].Node, uint64(0)
		for ; i < len(gpus) && gpus[i].Node == n; i++ {
			taken |= 1 << uint(gpus[i].Index)
		}
		p.unhide(int(n))
		starved := p.starved[n] & taken
		p.starved[n] &^= starved
		if taken &^= starved; taken != 0 {
			p.set(int(n), p.free[n]&^taken)
		}
	}
}

// Give marks GPUs as free again, once per run of one node's GPUs.
func (p *Pool) Give(gpus []model.GPU) {
	if !p.vec.quiet {
		p.vec.freed++
	}
	for i := 0; i < len(gpus); {
		n, given := gpus[i].Node, uint64(0)
		for ; i < len(gpus) && gpus[i].Node == n; i++ {
			given |= 1 << uint(gpus[i].Index)
		}
		p.unhide(int(n))
		p.set(int(n), p.free[n]|given)
		if !p.vec.quiet {
			p.reconsider(int(n))
		}
	}
}

// Settled reports whether running job j keeps its GPUs this round (it is
// neither being stopped nor moved), so that a placer may move it.
func (p *Pool) Settled(j *model.Job) bool {
	return len(j.Alloc) > 0 && !p.unsettled[j]
}

// Hold marks running job j as unsettled for the rest of the round (it may
// be stopped), so that no placer moves it.
func (p *Pool) Hold(j *model.Job) { p.unsettled[j] = true }

// Release frees the GPUs of running job j, and what its replicas ask of
// other resources, for this round's placements (j is being moved).
func (p *Pool) Release(j *model.Job) {
	p.GiveJob(j, j.Alloc)
	p.unsettled[j] = true
}

// AllFree reports whether every GPU in gpus is free.
func (p *Pool) AllFree(gpus []model.GPU) bool {
	p.settle()
	for _, g := range gpus {
		if (p.free[g.Node]|p.starved[g.Node])&(1<<uint(g.Index)) == 0 {
			return false
		}
	}
	return true
}

func (p *Pool) set(node int, mask uint64) {
	p.version++
	p.touch(node)
	t := int(p.typeOf[node])
	before, after := int(p.count[node]), bits.OnesCount64(mask)
	if before != after {
		p.count[node] = int8(after)
		p.buckets[t].move(node, before, after)
		p.typeFree[t] += after - before
		if p.tight != nil {
			p.moveTight(node, t, before, after)
		}
	}
	p.free[node] = mask
}

// FreeNodes appends to dst every node of type t with at least least free
// GPUs: by free count, then by node index.
func (p *Pool) FreeNodes(dst []int32, t, least int) []int32 {
	p.settle()
	return appendNodes(dst, p.buckets[t].by, least)
}

// appendNodes appends the nodes of buckets bs from least on.
func appendNodes(dst []int32, bs []bucket, least int) []int32 {
	for k := max(least, 1); k < len(bs); k++ {
		b := &bs[k]
		if b.n == 0 {
			continue
		}
		dst = b.appendTo(dst)
	}
	return dst
}

// Lowest appends the k lowest-index free GPUs of node n to dst.
func (p *Pool) Lowest(dst []model.GPU, n, k int) []model.GPU {
	p.settle()
	m := p.free[n]
	for ; k > 0 && m != 0; k-- {
		i := bits.TrailingZeros64(m)
		dst = append(dst, model.GPU{Node: int32(n), Index: int32(i)})
		m &^= 1 << uint(i)
	}
	return dst
}
