package kube

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// filterRound carries the filters that look at other pods (filters.go,
// affinity.go) through one round: the topo of the pods already placed, the
// jobs those filters concern (dynamic jobs: their pods ask for host ports,
// pod affinity or anti-affinity or topology spread, or some pod's
// anti-affinity matches them), the placements the placer has answered so
// far in the round, and the pods bound in it. Rounds without such jobs
// have none (nil).
type filterRound struct {
	r  *round
	tp *topo
	// dyn holds the dynamic jobs.
	dyn map[*model.Job]*dynJob
	// tentative is the last placement the placer answered for each job in
	// the round (order: in answer order); bound the pods bound so far.
	tentative map[*model.Job][]model.GPU
	order     []*model.Job
	bound     []boundPod
}

// boundPod is a pod bound in the round.
type boundPod struct {
	node string
	t    *terms
}

// dynJob is a dynamic job: its pending pods' terms in the order its pods
// are bound.
type dynJob struct {
	rj   *rjob
	pods []*terms
	// prefers: its pods have preferences to score nodes by.
	prefers bool
}

// podFilters returns the round's filterRound, nil when no waiting job is
// dynamic.
func (r *round) podFilters() *filterRound {
	if len(r.w.asking) == 0 && len(r.w.anti) == 0 {
		return nil // the common case: no pod asks, no pod repels
	}
	var pendingAnti []*terms
	cand := false
	for _, rj := range r.jobs {
		if !rj.inState || len(rj.pending) == 0 {
			continue
		}
		for _, p := range rj.pending {
			if p.t.constrained() || p.t.prefers() {
				cand = true
			}
			if len(p.t.anti) > 0 {
				pendingAnti = append(pendingAnti, p.t)
			}
		}
	}
	if !cand && !r.antiMatches(pendingAnti) {
		return nil
	}
	fr := &filterRound{r: r, tp: r.topo(), dyn: map[*model.Job]*dynJob{}, tentative: map[*model.Job][]model.GPU{}}
	antis := append(pendingAnti, fr.antiTerms()...)
	for _, rj := range r.jobs {
		if !rj.inState || len(rj.pending) == 0 || !isDynamic(rj, antis, fr.tp) {
			continue
		}
		dj := &dynJob{rj: rj}
		for _, p := range rj.pending {
			dj.pods = append(dj.pods, p.t)
			dj.prefers = dj.prefers || p.t.prefers()
		}
		fr.dyn[rj.kj.mj] = dj
	}
	if len(fr.dyn) == 0 {
		return nil
	}
	return fr
}

// dynShape is a dynamic job's shape: its GPUs per pod and the nodes its
// pods may use, with its dynJob.
type dynShape struct {
	shape
	dyn *dynJob
}

// shape returns dynamic job dj's shape.
func (fr *filterRound) shape(dj *dynJob) dynShape {
	return dynShape{shape: shape{pod: dj.rj.pod, elig: fr.r.eligible(dj.rj)}, dyn: dj}
}

// antiMatches reports whether a pod's required anti-affinity (placed
// pods' or pending ones') matches a waiting pod: the only way pods without
// terms of their own become dynamic. It reads the world, not a topo (a
// cluster whose system pods repel only each other builds none).
func (r *round) antiMatches(pendingAnti []*terms) bool {
	if len(r.w.anti) == 0 && len(pendingAnti) == 0 {
		return false
	}
	antis := pendingAnti
	for uid := range r.w.anti {
		if p := r.w.pods[uid]; p != nil {
			antis = append(antis, p.t)
		} else if fp, ok := r.w.foreign[uid]; ok {
			antis = append(antis, fp.t)
		}
	}
	for _, rj := range r.jobs {
		if rj.inState && len(rj.pending) > 0 && isDynamic(rj, antis, &topo{nsLabels: r.w.namespaceLabels}) {
			return true
		}
	}
	return false
}

// antiTerms returns the terms of the placed pods with anti-affinity.
func (fr *filterRound) antiTerms() []*terms {
	var out []*terms
	for _, i := range fr.tp.anti {
		out = append(out, fr.tp.pods[i].t)
	}
	return out
}

// isDynamic reports whether job rj's filters depend on other pods: its
// pods ask for ports, affinity or spread, or an anti-affinity term of
// antis matches one of them.
func isDynamic(rj *rjob, antis []*terms, tp *topo) bool {
	for _, p := range rj.pending {
		if p.t.constrained() || p.t.prefers() {
			return true
		}
		for _, a := range antis {
			for k := range a.anti {
				if a.anti[k].matches(p.t.ns, p.t.labels, tp.nsLabels) {
					return true
				}
			}
		}
	}
	return false
}

// topo returns the round's topo: every node of the world, and every pod
// bound (or being bound) to one.
func (r *round) topo() *topo {
	w := r.w
	tp := newTopo(w.namespaceLabels)
	for name, n := range w.nodes {
		tp.nodes[name] = n.obj
	}
	for _, p := range w.pods {
		node := p.node
		if node == "" {
			node = w.assumed[p.uid]
		}
		if node != "" {
			tp.add(node, p.t, p.deleting || w.deleted[p.uid])
		}
	}
	for _, fp := range w.foreign {
		if fp.t != nil {
			tp.add(fp.node, fp.t, false)
		}
	}
	return tp
}

// answered records a placement the placer answered for job j.
func (fr *filterRound) answered(j *model.Job, gpus []model.GPU) {
	if _, ok := fr.tentative[j]; !ok {
		fr.order = append(fr.order, j)
	}
	fr.tentative[j] = gpus
}

// checks returns, for dynamic job dj's pending pods, their podChecks
// against the pods placed and bound so far in the round, and (with pool)
// those of the other jobs whose last answered placement still holds its
// GPUs. Pods with the same terms share one podCheck.
func (fr *filterRound) checks(dj *dynJob, pool *engine.Pool) []*podCheck {
	out := make([]*podCheck, len(dj.pods))
	var distinct []*podCheck
	for i, t := range dj.pods {
		if i > 0 && t == dj.pods[i-1] {
			out[i] = out[i-1]
			continue
		}
		c := newPodCheck(t, fr.tp)
		for _, b := range fr.bound {
			c.add(b.t, b.node)
		}
		out[i] = c
		distinct = append(distinct, c)
	}
	if pool == nil {
		return out
	}
	for _, j := range fr.order {
		gpus := fr.tentative[j]
		rj := fr.r.byModel[j]
		if j == dj.rj.kj.mj || rj == nil || len(rj.bound) > 0 || !heldAll(pool, gpus) {
			continue
		}
		fr.r.podsOn(rj, gpus, func(p *podInfo, node string) {
			for _, c := range distinct {
				c.add(p.t, node)
			}
		})
	}
	return out
}

// heldAll reports whether none of gpus is free in pool.
func heldAll(pool *engine.Pool, gpus []model.GPU) bool {
	for _, g := range gpus {
		if pool.NodeMask(int(g.Node))&(1<<uint(g.Index)) != 0 {
			return false
		}
	}
	return len(gpus) > 0
}

// podsOn calls f for each pending pod of rj that start would bind on
// gpus, with its node: the nodes in the order of their first GPU, rj.pod
// GPUs a pod, the pods in order.
func (r *round) podsOn(rj *rjob, gpus []model.GPU, f func(p *podInfo, node string)) {
	i := 0
	model.NodeCounts(gpus, func(ni, k int) {
		for range k / max(rj.pod, 1) {
			if i == len(rj.pending) {
				return
			}
			f(rj.pending[i], r.cluster.Nodes[ni].Name)
			i++
		}
	})
}

// admits reports whether dynamic job dj's pods may be bound on gpus one
// after the other (as start binds them), given checks (which it changes);
// else it returns the first failing reason.
func (r *round) admits(dj *dynJob, checks []*podCheck, gpus []model.GPU) (bool, string) {
	distinct := distinctChecks(checks)
	i, why := 0, ""
	r.podsOn(dj.rj, gpus, func(p *podInfo, node string) {
		if why != "" {
			return
		}
		if why = checks[i].check(node); why == "" {
			for _, c := range distinct {
				c.add(p.t, node)
			}
		}
		i++
	})
	return why == "", why
}

func distinctChecks(cs []*podCheck) []*podCheck {
	var out []*podCheck
	for i, c := range cs {
		if i == 0 || c != cs[i-1] {
			out = append(out, c)
		}
	}
	return out
}

// cloneChecks copies checks, keeping shared ones shared.
func cloneChecks(cs []*podCheck) []*podCheck {
	out := make([]*podCheck, len(cs))
	for i, c := range cs {
		if i > 0 && c == cs[i-1] {
			out[i] = out[i-1]
		} else {
			out[i] = c.clone()
		}
	}
	return out
}

// veto reports why a dynamic job may not start on gpus after all, given
// the pods bound so far in the round ("" when it may), and records its
// pods as bound when it may. Placements answered in one round can clash
// when the engine dropped an answer whose GPUs another job then took: the
// job then waits for the next round.
func (r *round) veto(rj *rjob, gpus []model.GPU) string {
	fr := r.s.filters
	if fr == nil {
		return ""
	}
	dj := fr.dyn[rj.kj.mj]
	if dj == nil {
		fr.record(rj, gpus)
		return ""
	}
	if ok, why := r.admits(dj, fr.checks(dj, nil), gpus); !ok {
		return why
	}
	fr.record(rj, gpus)
	return ""
}

// record notes the pods of rj bound on gpus.
func (fr *filterRound) record(rj *rjob, gpus []model.GPU) {
	fr.r.podsOn(rj, gpus, func(p *podInfo, node string) {
		fr.bound = append(fr.bound, boundPod{node: node, t: p.t})
	})
}
