package kube

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// shape is what the pod placer must know of a job in a round: the GPUs of
// one pod, and the cluster nodes its pods may use (nil: every node).
type shape struct {
	pod  int
	elig []bool
}

// shapes holds the round's shapes by model job; a job it lacks has pods
// of one GPU and may use every node.
type shapes map[*model.Job]shape

func (s shapes) of(j *model.Job) shape {
	if sh, ok := s[j]; ok {
		return sh
	}
	return shape{pod: 1}
}

// podPlacer wraps the configured placer (recipe.Options.WrapPlacer) so
// that every placement is made of whole pods on nodes that accept them: a
// pod's GPUs lie on one node, and a job's pods only on the nodes its node
// selector, affinity and tolerations allow. It hides the other nodes' free
// GPUs from the inner placer while it places a restricted job; when the
// inner placer's answer splits a pod across nodes, or moves a running job
// where its pods cannot go, it places the job itself, pod by pod, on the
// inner placer's GPU type (then the others, fastest first), fewest nodes
// first. The pool is unchanged when Place returns.
type podPlacer struct {
	inner engine.Placer
	// shapes is the current round's; the scheduler replaces the map's
	// content before each round.
	shapes *shapes
	// filters is the current round's filterRound (podfilter.go), nil
	// when no job needs it.
	filters **filterRound
	hidden  []model.GPU
}

// Name returns the inner placer's name.
func (p *podPlacer) Name() string { return p.inner.Name() }

// Place implements engine.Placer. In a round with dynamic jobs
// (podfilter.go) it places those with placeDyn and notes every answer.
func (p *podPlacer) Place(s *model.State, pool *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	sh := p.shapes.of(j)
	if p.filters == nil || *p.filters == nil {
		return p.place(s, pool, j, n, types, sh)
	}
	fr := *p.filters
	var pl engine.Placement
	if dj := fr.dyn[j]; dj != nil {
		pl = p.placeDyn(s, pool, j, n, types, fr.shape(dj), fr)
	} else {
		pl = p.place(s, pool, j, n, types, sh)
	}
	if pl.GPUs != nil {
		fr.answered(j, pl.GPUs)
	}
	return pl
}

// place places a job whose filters do not look at other pods.
func (p *podPlacer) place(s *model.State, pool *engine.Pool, j *model.Job, n int, types engine.TypeSet, sh shape) engine.Placement {
	if n <= 0 || n%sh.pod != 0 {
		return engine.Placement{}
	}
	hidden := p.hide(pool, sh.elig)
	defer pool.Give(hidden)
	pl := p.inner.Place(s, pool, j, n, types)
	if pl.GPUs == nil || p.fits(pl, sh) {
		return pl
	}
	first := s.Cluster.TypeOf(pl.GPUs[0])
	if gpus := wholePods(pool, first, n, sh.pod); gpus != nil {
		return engine.Placement{GPUs: gpus}
	}
	for _, t := range typesBySpeed(s, j, n, types) {
		if t == first {
			continue
		}
		if gpus := wholePods(pool, t, n, sh.pod); gpus != nil {
			return engine.Placement{GPUs: gpus}
		}
	}
	return engine.Placement{}
}

// hide takes the free GPUs of the nodes outside elig from the pool and
// returns them (to give back).
func (p *podPlacer) hide(pool *engine.Pool, elig []bool) []model.GPU {
	if elig == nil {
		return nil
	}
	h := p.hidden[:0]
	for i, ok := range elig {
		if !ok && pool.NodeFree(i) > 0 {
			h = pool.Lowest(h, i, pool.NodeFree(i))
		}
	}
	pool.Take(h)
	p.hidden = h
	return h
}

// fits reports whether a placement is made of whole pods on allowed nodes,
// for the placed job and for every job it moves.
func (p *podPlacer) fits(pl engine.Placement, sh shape) bool {
	if !podsFit(pl.GPUs, sh) {
		return false
	}
	for _, m := range pl.Moves {
		if !podsFit(m.GPUs, p.shapes.of(m.Job)) {
			return false
		}
	}
	return true
}

// podsFit reports whether gpus hold a whole number of pods of sh.pod GPUs
// on every node, all of them nodes sh allows.
func podsFit(gpus []model.GPU, sh shape) bool {
	if sh.elig != nil {
		for _, g := range gpus {
			if !sh.elig[g.Node] {
				return false
			}
		}
	}
	if sh.pod == 1 {
		return true
	}
	count := map[int32]int{}
	for _, g := range gpus {
		count[g.Node]++
	}
	for _, c := range count {
		if c%sh.pod != 0 {
			return false
		}
	}
	return true
}

// wholePods picks n free GPUs of type t as pods of pod GPUs each: all on
// the best-fitting node that holds them, else as many pods as fit on the
// node with the most free GPUs, and so on; nil when they do not fit. The
// pool is unchanged.
func wholePods(pool *engine.Pool, t, n, pod int) []model.GPU {
	if pool.Free(t) < n {
		return nil
	}
	var gpus []model.GPU
	taken := 0
	for rem := n; rem > 0; {
		if node := pool.BestFit(t, rem); node >= 0 {
			gpus = pool.Lowest(gpus, node, rem)
			break
		}
		node, k := pool.Fullest(t), 0
		if node >= 0 {
			k = pool.NodeFree(node) / pod * pod
		}
		if k == 0 {
			pool.Give(gpus[:taken])
			return nil
		}
		gpus = pool.Lowest(gpus, node, k)
		pool.Take(gpus[taken:])
		taken, rem = len(gpus), rem-k
	}
	pool.Give(gpus[:taken])
	return gpus
}

// typesBySpeed returns the types of ts, fastest first for j on n GPUs
// (lowest index among equals).
func typesBySpeed(s *model.State, j *model.Job, n int, ts engine.TypeSet) []int {
	var out []int
	for t := range s.Cluster.Types {
		if ts.Has(t) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		return cmp.Compare(s.Profile.Speed(j, b, n), s.Profile.Speed(j, a, n))
	})
	return out
}
