package placer

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Pack is the fewest-nodes-then-best-fit placer.
type Pack struct{}

// Name returns "pack".
func (Pack) Name() string { return "pack" }

// Place implements engine.Placer.
func (Pack) Place(_ *model.State, p *engine.Pool, _ *model.Job, n int, types engine.TypeSet) engine.Placement {
	return engine.Placement{GPUs: Fewest(p, n, types)}
}

// Fewest picks n free GPUs of one type in types on the fewest nodes, then
// best fit, then the first type (see the package documentation); nil when
// no type has n free GPUs.
func Fewest(p *engine.Pool, n int, types engine.TypeSet) []model.GPU {
	var best []model.GPU
	bestNodes, bestLeft := 0, 0
	for t := range p.Cluster().Types {
		if !types.Has(t) || p.Free(t) < n {
			continue
		}
		gpus, nodes, left := PackOn(p, t, n)
		if gpus == nil {
			continue
		}
		if best == nil || nodes < bestNodes || (nodes == bestNodes && left < bestLeft) {
			best, bestNodes, bestLeft = gpus, nodes, left
		}
	}
	return best
}

// PackOn chooses n free GPUs of type t on the fewest nodes: whole nodes with
// the most free GPUs first, then the best-fitting node for the rest. It
// returns the GPUs, the number of nodes used and the GPUs left free on the
// last node; nil when fewer than n are free. The pool is left unchanged.
func PackOn(p *engine.Pool, t, n int) (gpus []model.GPU, nodes, left int) {
	if p.Free(t) < n {
		return nil, 0, 0
	}
	gpus = make([]model.GPU, 0, n)
	taken := 0 // GPUs of whole nodes taken from the pool while searching
	for rem := n; rem > 0; {
		node := p.BestFit(t, rem)
		if node >= 0 {
			left = p.NodeFree(node) - rem
			gpus = p.Lowest(gpus, node, rem)
			nodes++
			break
		}
		node = p.Fullest(t) // every node has fewer than rem free GPUs
		k := p.NodeFree(node)
		gpus = p.Lowest(gpus, node, k)
		p.Take(gpus[taken:])
		taken, rem = len(gpus), rem-k
		nodes++
	}
	p.Give(gpus[:taken])
	return gpus, nodes, left
}
