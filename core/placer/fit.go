package placer

import (
	"math"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// FitScoreNodes is how many of the nodes that can hold a job Fit scores,
// at most: as kube-scheduler's percentageOfNodesToScore, it bounds a
// placement's cost on a large cluster. The candidates come in order of
// free GPUs, fewest first, so those scored are the tightest fits on GPUs;
// a node further on that strands fewer GPUs may be missed.
const FitScoreNodes = 64

// Fit is the multi-resource best-fit placer. A job that asks for nothing
// besides GPUs is placed as Pack places it. A job that asks for CPU,
// memory or other resources on a cluster that models them goes, when one
// node can hold it, to the node that after placement
//
//  1. strands the fewest GPUs: free GPUs that a replica like the job's
//     could no longer use because the node's CPU, memory or another
//     resource would run out first;
//  2. leaves the fewest free GPUs (best fit on GPUs);
//  3. leaves the smallest dominant share of any other resource free
//     (best fit on the dominant share: a node with much CPU or memory
//     stays free for the jobs that need it);
//
// then the lowest node index; across GPU types, the fewest nodes, then the
// same order, then the type declared first. A job that needs several nodes
// is packed (Pack) among the GPUs whose nodes have room for it.
type Fit struct {
	nodes []int32 // scratch
}

// Name returns "fit".
func (*Fit) Name() string { return "fit" }

// Place implements engine.Placer.
func (f *Fit) Place(s *model.State, p *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	req := p.Request(j)
	if req == nil || n < 1 {
		return engine.Placement{GPUs: Fewest(p, n, types)}
	}
	var best fitChoice
	for t := range p.Cluster().Types {
		if !types.Has(t) || p.Free(t) < n {
			continue
		}
		c := f.fitOn(p, j, req, t, n)
		if c.gpus != nil && (best.gpus == nil || c.better(best)) {
			best = c
		}
	}
	return engine.Placement{GPUs: best.gpus}
}

// fitChoice is a candidate placement with its scores (lower is better).
type fitChoice struct {
	gpus                 []model.GPU
	nodes, stranded, gpu int
	share                float64
}

func (c fitChoice) better(o fitChoice) bool {
	switch {
	case c.nodes != o.nodes:
		return c.nodes < o.nodes
	case c.stranded != o.stranded:
		return c.stranded < o.stranded
	case c.gpu != o.gpu:
		return c.gpu < o.gpu
	}
	return c.share < o.share
}

// fitOn places j's n GPUs on type t: on the best-scoring node that holds
// them all, else packed over several nodes.
func (f *Fit) fitOn(p *engine.Pool, j *model.Job, req model.Vec, t, n int) fitChoice {
	best, bestNode := fitChoice{}, -1
	f.nodes = p.FreeNodes(f.nodes[:0], t, n)
	for scored, i := range f.nodes {
		k := p.NodeFree(int(i))
		if bestNode >= 0 && (scored >= FitScoreNodes || best.stranded == 0 && best.gpu < k-n) {
			break // enough were scored, or no node left scores better
		}
		cand := score(p, j, req, int(i), n)
		if bestNode < 0 || cand.better(best) || (!best.better(cand) && int(i) < bestNode) {
			best, bestNode = cand, int(i)
		}
	}
	if bestNode >= 0 {
		best.gpus = p.Lowest(make([]model.GPU, 0, n), bestNode, n)
		return best
	}
	gpus, nodes, left := PackOn(p, t, n)
	return fitChoice{gpus: gpus, nodes: nodes, gpu: left}
}

// score rates putting n GPUs of j on node i.
func score(p *engine.Pool, j *model.Job, req model.Vec, i, n int) fitChoice {
	c := p.Cluster()
	left := p.NodeFree(i) + p.Hidden(i) - n // GPUs free for any job afterwards
	reps := int64(model.Replicas(n, j.Spec.ReplicaGPUs))
	free, capa := p.NodeFreeVec(i), c.Capacity(i)
	perReplica := int64(math.MaxInt32)
	share := 0.0
	for r, q := range req {
		after := free[r] - reps*q
		if q > 0 {
			perReplica = min(perReplica, max(after, 0)/q)
		}
		if capa[r] > 0 {
			share = max(share, float64(after)/float64(capa[r]))
		}
	}
	usable := int(min(perReplica*int64(j.Spec.Replica()), int64(left)))
	return fitChoice{nodes: 1, stranded: left - usable, gpu: left, share: share}
}
