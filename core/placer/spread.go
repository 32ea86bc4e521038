package placer

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Spread is the least-loaded-node-first placer: it takes free GPUs of the
// feasible type on which the job runs fastest, from the node with the most
// free GPUs; when that node has fewer than the job needs, it takes all of
// them and goes on with the next such node. It is worst fit, the opposite of
// Pack: jobs spread over the cluster, nodes stay lightly loaded (below the
// contention knee of the power model) and no node's GPUs are kept free for
// large jobs. Ties go to the lowest node index and, across types of equal
// speed, to the type declared first.
type Spread struct{}

// Name returns "spread".
func (Spread) Name() string { return "spread" }

// Place implements engine.Placer.
func (Spread) Place(s *model.State, p *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	if n < 1 {
		return engine.Placement{}
	}
	t := fastestFree(s, p, j, n, types)
	if t < 0 {
		return engine.Placement{}
	}
	return engine.Placement{GPUs: SpreadOn(p, t, n)}
}

// SpreadOn chooses n free GPUs of type t from the nodes with the most free
// GPUs first: all it needs from the emptiest node if that node has enough,
// otherwise all of that node's free GPUs and the rest likewise from the
// next. It returns nil when fewer than n are free. The pool is left
// unchanged.
func SpreadOn(p *engine.Pool, t, n int) []model.GPU {
	if n < 1 || p.Free(t) < n {
		return nil
	}
	gpus := make([]model.GPU, 0, n)
	for rem := n; rem > 0; {
		node := p.Fullest(t)
		k := min(p.NodeFree(node), rem)
		before := len(gpus)
		gpus = p.Lowest(gpus, node, k)
		p.Take(gpus[before:])
		rem -= k
	}
	p.Give(gpus)
	return gpus
}
