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
	typeFree  []int               // free GPUs per type
	buckets   [][]bucket          // [type][free count] -> nodes
	unsettled map[*model.Job]bool // running jobs stopped or moved this round
	round     int
	version   uint64
	vec       vectors // resources besides GPUs (vector.go)
	// starved are, per node, free GPUs that no job of the round can use
	// for want of other resources there (starve.go); they are not in free.
	starved []uint64
	// rich marks the nodes whose free resources cover a replica of any
	// job of the round; tight indexes the free GPUs of the others as
	// buckets does, richOf counts rich nodes by type and free GPUs
	// (starve.go). Nil on a cluster that models no resources.
	rich   []bool
	tight  [][]bucket
	richOf [][]int
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
	words := (len(c.Nodes) + 63) / 64
	for t := range c.Types {
		bs := make([]bucket, c.MaxNodeGPUs(t)+1)
		for k := range bs {
			bs[k].words = make([]uint64, words)
		}
		p.buckets = append(p.buckets, bs)
	}
	if c.Vectored() {
		p.rich = make([]bool, len(c.Nodes))
		for t := range c.Types {
			bs := make([]bucket, c.MaxNodeGPUs(t)+1)
			for k := range bs {
				bs[k].words = make([]uint64, words)
			}
			p.tight = append(p.tight, bs)
			p.richOf = append(p.richOf, make([]int, c.MaxNodeGPUs(t)+1))
		}
	}
	return p
}

// Reset loads the free GPUs of s into the pool.
func (p *Pool) Reset(s *model.State) {
	clear(p.unsettled)
	clear(p.starved)
	p.round++
	p.version++
	for t := range p.buckets {
		p.typeFree[t] = 0
		clearBuckets(p.buckets[t])
		if p.tight != nil {
			clearBuckets(p.tight[t])
			clear(p.richOf[t])
		}
	}
	clear(p.rich)
	for i := range p.c.Nodes {
		m := s.FreeMask(i)
		p.free[i] = m
		t, k := p.c.Nodes[i].Type, bits.OnesCount64(m)
		p.typeFree[t] += k
		p.buckets[t][k].add(i)
		if p.tight != nil {
			p.tight[t][k].add(i)
		}
	}
	p.resetVectors(s)
}

// clearBuckets empties an index of buckets.
func clearBuckets(bs []bucket) {
	for k := range bs {
		clear(bs[k].words)
		bs[k].n, bs[k].first = 0, len(bs[k].words)
	}
}

// Round counts the pool's resets: placers may cache per-round indexes by it.
func (p *Pool) Round() int { return p.round }

// Version changes whenever the pool's free GPUs may have changed (a reset, a
// take, a give): placers may cache what they derived from the pool by it.
func (p *Pool) Version() uint64 { return p.version }

// Cluster returns the pool's cluster.
func (p *Pool) Cluster() *model.Cluster { return p.c }

// Free returns the number of free GPUs of type t.
func (p *Pool) Free(t int) int { return p.typeFree[t] }

// FreeAll returns the number of free GPUs of every type.
func (p *Pool) FreeAll() int {
	n := 0
	for _, f := range p.typeFree {
		n += f
	}
	return n
}

// NodeFree returns the number of free GPUs on node n.
func (p *Pool) NodeFree(n int) int { return bits.OnesCount64(p.free[n]) }

// NodeMask returns the free GPUs of node n as a bit mask.
func (p *Pool) NodeMask(n int) uint64 { return p.free[n] }

// BestFit returns the lowest-index node of type t whose free count is the
// smallest that is at least k, or -1.
func (p *Pool) BestFit(t, k int) int {
	bs := p.buckets[t]
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
	bs := p.buckets[t]
	for c := len(bs) - 1; c >= 1; c-- {
		if n := bs[c].lowest(); n >= 0 {
			return n
		}
	}
	return -1
}

// Take marks GPUs as used. They must be free.
func (p *Pool) Take(gpus []model.GPU) {
	for _, g := range gpus {
		bit := uint64(1) << uint(g.Index)
		if p.starved[g.Node]&bit != 0 {
			p.starved[g.Node] &^= bit
			continue
		}
		p.set(int(g.Node), p.free[g.Node]&^bit)
	}
}

// Give marks GPUs as free again.
func (p *Pool) Give(gpus []model.GPU) {
	if !p.vec.quiet {
		p.vec.freed++
	}
	for i, g := range gpus {
		p.set(int(g.Node), p.free[g.Node]|1<<uint(g.Index))
		if !p.vec.quiet && (i+1 == len(gpus) || gpus[i+1].Node != g.Node) {
			p.reconsider(int(g.Node)) // once per run of a node's GPUs
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
	for _, g := range gpus {
		if (p.free[g.Node]|p.starved[g.Node])&(1<<uint(g.Index)) == 0 {
			return false
		}
	}
	return true
}

func (p *Pool) set(node int, mask uint64) {
	p.version++
	t := p.c.Nodes[node].Type
	before, after := bits.OnesCount64(p.free[node]), bits.OnesCount64(mask)
	if before != after {
		p.buckets[t][before].remove(node)
		p.buckets[t][after].add(node)
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
	return appendNodes(dst, p.buckets[t], least)
}

// appendNodes appends the nodes of buckets bs from least on.
func appendNodes(dst []int32, bs []bucket, least int) []int32 {
	for k := max(least, 1); k < len(bs); k++ {
		b := &bs[k]
		if b.n == 0 {
			continue
		}
		for w := b.first; w < len(b.words); w++ {
			for m := b.words[w]; m != 0; m &= m - 1 {
				dst = append(dst, int32(w<<6+bits.TrailingZeros64(m)))
			}
		}
	}
	return dst
}

// Lowest appends the k lowest-index free GPUs of node n to dst.
func (p *Pool) Lowest(dst []model.GPU, n, k int) []model.GPU {
	m := p.free[n]
	for ; k > 0 && m != 0; k-- {
		i := bits.TrailingZeros64(m)
		dst = append(dst, model.GPU{Node: int32(n), Index: int32(i)})
		m &^= 1 << uint(i)
	}
	return dst
}
