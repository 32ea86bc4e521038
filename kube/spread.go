package kube

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// placeDyn places a dynamic job (podfilter.go): its pods go only where
// kube-scheduler's filters that look at other pods admit them, one after
// the other, as kube-scheduler would bind them. The inner placer answers
// first, on the nodes that admit the job's first pod; when its answer
// breaks a filter once the job's own pods count (anti-affinity or spread
// among themselves, ports they share), the job is placed pod by pod on the
// inner placer's type (then the others, fastest first): each pod on a node
// that admits it, preferring nodes that already hold the job's pods, then
// the best fit.
func (p *podPlacer) placeDyn(s *model.State, pool *engine.Pool, j *model.Job, n int, types engine.TypeSet, sh dynShape, fr *filterRound) engine.Placement {
	if n <= 0 || n%sh.pod != 0 || n/sh.pod > len(sh.dyn.pods) {
		return engine.Placement{}
	}
	base := fr.checks(sh.dyn, pool)
	elig := make([]bool, len(s.Cluster.Nodes))
	for i := range elig {
		elig[i] = (sh.elig == nil || sh.elig[i]) && base[0].check(s.Cluster.Nodes[i].Name) == ""
	}
	hidden := p.hide(pool, elig)
	defer pool.Give(hidden)
	pl := p.inner.Place(s, pool, j, n, types)
	first := -1
	if pl.GPUs != nil {
		if len(pl.Moves) == 0 && podsFit(pl.GPUs, shape{pod: sh.pod}) {
			if ok, _ := fr.r.admits(sh.dyn, cloneChecks(base), pl.GPUs); ok {
				if sh.dyn.prefers {
					pl.GPUs = p.prefer(s, pool, j, pl.GPUs, sh, base, fr)
				}
				return pl
			}
		}
		first = s.Cluster.TypeOf(pl.GPUs[0])
	} else if pl.Pause != "" {
		return pl
	}
	ts := typesBySpeed(s, j, n, types)
	if first >= 0 {
		ts = append([]int{first}, ts...)
	}
	for k, t := range ts {
		if k > 0 && t == first {
			continue
		}
		if gpus := p.podByPod(s, pool, j, n, t, sh, base, fr); gpus != nil {
			if sh.dyn.prefers {
				gpus = p.prefer(s, pool, j, gpus, sh, base, fr)
			}
			return engine.Placement{GPUs: gpus}
		}
	}
	return engine.Placement{}
}

// podByPod places n GPUs of job j on type t a pod at a time (placeDyn);
// nil when the pods do not all find a node. The pool is unchanged.
func (p *podPlacer) podByPod(s *model.State, pool *engine.Pool, j *model.Job, n, t int, sh dynShape, base []*podCheck, fr *filterRound) []model.GPU {
	if pool.Free(t) < n {
		return nil
	}
	cs := cloneChecks(base)
	distinct := distinctChecks(cs)
	req := pool.Request(j)
	count := map[int32]int{}
	var order []int32
	nodes := pool.FreeNodes(nil, t, sh.pod)
	for i := range n / sh.pod {
		best := int32(-1)
		for _, ni := range nodes {
			c := count[ni]
			if pool.NodeFree(int(ni))-c*sh.pod < sh.pod || !roomFor(pool, req, int(ni), c+1) ||
				cs[i].check(s.Cluster.Nodes[ni].Name) != "" {
				continue
			}
			if best < 0 || betterNode(pool, count, ni, best) {
				best = ni
			}
		}
		if best < 0 {
			return nil
		}
		if count[best] == 0 {
			order = append(order, best)
		}
		count[best]++
		for _, c := range distinct {
			c.add(sh.dyn.pods[i], s.Cluster.Nodes[best].Name)
		}
	}
	var gpus []model.GPU
	for _, ni := range order {
		gpus = pool.Lowest(gpus, int(ni), count[ni]*sh.pod)
	}
	if ok, _ := fr.r.admits(sh.dyn, cloneChecks(base), gpus); !ok {
		return nil // the pods, bound in node order, clash after all
	}
	return gpus
}

// betterNode reports whether node a is a better home than b for the next
// pod of a job that holds count pods on each: one of its nodes, then the
// fewest free GPUs, then the lowest index.
func betterNode(pool *engine.Pool, count map[int32]int, a, b int32) bool {
	if (count[a] > 0) != (count[b] > 0) {
		return count[a] > 0
	}
	fa, fb := pool.NodeFree(int(a))-count[a], pool.NodeFree(int(b))-count[b]
	if fa != fb {
		return fa < fb
	}
	return a < b
}

// roomFor reports whether node n has room, besides GPUs, for reps
// replicas of a job that asks req each.
func roomFor(pool *engine.Pool, req model.Vec, n, reps int) bool {
	if req == nil {
		return true
	}
	free := pool.NodeFreeVec(n)
	for r, q := range req {
		if free[r] < int64(reps)*q {
			return false
		}
	}
	return true
}
