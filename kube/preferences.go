package kube

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// The preferences kube-scheduler scores nodes by (docs/KUBERNETES.md,
// "Preferences"), where gpusched's placer has no opinion: among the nodes
// of the type it chose that have as many free GPUs as the one it chose
// (pack, spread, fit and hetero all rank nodes of a type by their free
// GPUs), a pod goes to the node its preferences score highest. A node's
// score is the sum of the weights of the preferred node affinity terms it
// matches (NodeAffinity), of each preferred pod affinity term's weight
// times the matching pods in the node's domain, less the same for
// preferred anti-affinity (InterPodAffinity), less the matching pods in
// the node's domain of each ScheduleAnyway spread constraint
// (PodTopologySpread). kube-scheduler normalizes each plugin's scores to
// 0–100 before weighing them; gpusched compares the raw sum.

// weightedTerm is a preferred pod (anti-)affinity term: weight is
// negative for anti-affinity.
type weightedTerm struct {
	affTerm
	weight int
}

// readPreferences reads the pod's preferred node and pod affinity and its
// ScheduleAnyway spread constraints.
func (t *terms) readPreferences(p *v1.Pod) error {
	var err error
	if t.soft, err = spreadTerms(p, v1.ScheduleAnyway); err != nil {
		return err
	}
	a := p.Spec.Affinity
	if a == nil {
		return nil
	}
	if na := a.NodeAffinity; na != nil && len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		if t.prefNode, err = nodeaffinity.NewPreferredSchedulingTerms(na.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return fmt.Errorf("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: %w", err)
		}
	}
	for sign, in := range map[int][]v1.WeightedPodAffinityTerm{1: podAffinityPreferred(a), -1: podAntiAffinityPreferred(a)} {
		for i, w := range in {
			ts, err := affTerms(p.Namespace, []v1.PodAffinityTerm{w.PodAffinityTerm}, fmt.Sprintf("preferred term %d", i))
			if err != nil {
				return err
			}
			t.prefPod = append(t.prefPod, weightedTerm{affTerm: ts[0], weight: sign * int(w.Weight)})
		}
	}
	return nil
}

func podAffinityPreferred(a *v1.Affinity) []v1.WeightedPodAffinityTerm {
	if a.PodAffinity == nil {
		return nil
	}
	return a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPreferred(a *v1.Affinity) []v1.WeightedPodAffinityTerm {
	if a.PodAntiAffinity == nil {
		return nil
	}
	return a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
}

// prefers reports whether the pod has preferences to score nodes by.
func (t *terms) prefers() bool {
	return t != nil && (t.prefNode != nil || len(t.prefPod) > 0 || len(t.soft) > 0)
}

// score returns node's score for the pending pod (the comment above).
func (c *podCheck) score(node string) int {
	n := c.tp.nodes[node]
	if n == nil {
		return 0
	}
	s := 0
	if c.t.prefNode != nil {
		s += int(c.t.prefNode.Score(n))
	}
	for k := range c.t.prefPod {
		wt := &c.t.prefPod[k]
		v, ok := n.Labels[wt.key]
		if !ok {
			continue
		}
		for i := range c.tp.pods {
			q := &c.tp.pods[i]
			if qn := c.tp.nodes[q.node]; qn != nil && qn.Labels[wt.key] == v && wt.matches(q.t.ns, q.t.labels, c.tp.nsLabels) {
				s += wt.weight
			}
		}
		for _, b := range c.added {
			if qn := c.tp.nodes[b.node]; qn != nil && qn.Labels[wt.key] == v && wt.matches(b.t.ns, b.t.labels, c.tp.nsLabels) {
				s += wt.weight
			}
		}
	}
	for k := range c.t.soft {
		st := &c.t.soft[k]
		v, ok := n.Labels[st.key]
		if !ok || st.sel.Empty() {
			continue
		}
		count := func(q *terms, qnode string, deleting bool) {
			if qn := c.tp.nodes[qnode]; qn != nil && !deleting && q.ns == c.t.ns && qn.Labels[st.key] == v && st.sel.Matches(q.labels) {
				s--
			}
		}
		for i := range c.tp.pods {
			count(c.tp.pods[i].t, c.tp.pods[i].node, c.tp.pods[i].deleting)
		}
		for _, b := range c.added {
			count(b.t, b.node, false)
		}
	}
	return s
}

// prefer moves the pods of placement gpus of dynamic job j, node by node,
// to a node of the same type with as many free GPUs that its preferences
// score higher, when its filters still admit the whole placement there;
// it returns the placement, changed or not. The pool is unchanged.
func (p *podPlacer) prefer(s *model.State, pool *engine.Pool, j *model.Job, gpus []model.GPU, sh dynShape, base []*podCheck, fr *filterRound) []model.GPU {
	c := base[0]
	req := pool.Request(j)
	type group struct {
		node int32
		k    int
	}
	var groups []group
	used := map[int32]bool{}
	model.NodeCounts(gpus, func(ni, k int) {
		groups = append(groups, group{int32(ni), k})
		used[int32(ni)] = true
	})
	changed := false
	for gi, g := range groups {
		free := pool.NodeFree(int(g.node))
		best, bs := g.node, c.score(s.Cluster.Nodes[g.node].Name)
		for _, b := range pool.FreeNodes(nil, s.Cluster.Nodes[g.node].Type, g.k) {
			if used[b] || pool.NodeFree(int(b)) != free || sh.elig != nil && !sh.elig[b] || !roomFor(pool, req, int(b), g.k/sh.pod) {
				continue
			}
			if sc := c.score(s.Cluster.Nodes[b].Name); sc > bs {
				best, bs = b, sc
			}
		}
		if best != g.node {
			used[best], groups[gi].node, changed = true, best, true
		}
	}
	if !changed {
		return gpus
	}
	var out []model.GPU
	for _, g := range groups {
		out = pool.Lowest(out, int(g.node), g.k)
	}
	if ok, _ := fr.r.admits(sh.dyn, cloneChecks(base), out); !ok {
		return gpus
	}
	return out
}
