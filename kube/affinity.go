package kube

import (
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	v1 "k8s.io/api/core/v1"
)

// topo is a round's view of where pods are, for the filters that look at
// other pods: every node of the world (those without GPUs too: they are
// topology domains) and every pod bound to one, gpusched's and other
// schedulers'.
type topo struct {
	nodes map[string]*v1.Node
	pods  []placed
	// byNode indexes pods by node; anti lists the pods with required
	// anti-affinity terms.
	byNode map[string][]int
	anti   []int
	// nsLabels returns a namespace's labels (namespace selectors).
	nsLabels func(string) labels.Set
}

// placed is a pod on a node: its terms (namespace, labels, ports, ...).
type placed struct {
	node     string
	t        *terms
	deleting bool
}

// add records pod t on node.
func (tp *topo) add(node string, t *terms, deleting bool) {
	i := len(tp.pods)
	tp.pods = append(tp.pods, placed{node: node, t: t, deleting: deleting})
	tp.byNode[node] = append(tp.byNode[node], i)
	if len(t.anti) > 0 {
		tp.anti = append(tp.anti, i)
	}
}

func newTopo(nsLabels func(string) labels.Set) *topo {
	if nsLabels == nil {
		nsLabels = func(string) labels.Set { return nil }
	}
	return &topo{nodes: map[string]*v1.Node{}, byNode: map[string][]int{}, nsLabels: nsLabels}
}

// pair is a topology domain: a label key and value.
type pair struct{ key, value string }

// Reasons a node fails a filter, in kube-scheduler's words.
const (
	reasonPorts        = "node(s) didn't have free ports for the requested pod ports"
	reasonAffinity     = "node(s) didn't match pod affinity rules"
	reasonAnti         = "node(s) didn't match pod anti-affinity rules"
	reasonExistingAnti = "node(s) didn't satisfy existing pods anti-affinity rules"
	reasonSpread       = "node(s) didn't match pod topology spread constraints"
	reasonSpreadLabel  = reasonSpread + " (missing required label)"
	reasonTaints       = "node(s) had untolerated taint(s)"
	reasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	reasonUnschedul    = "node(s) were unschedulable"
)

// podCheck evaluates one pending pod's terms on nodes, given the pods of
// a topo and those added since (as kube-scheduler's PreFilter state and
// its AddPod extensions do).
type podCheck struct {
	t  *terms
	tp *topo
	// affCount counts, per domain of each affinity term's key, the pods
	// that match all its affinity terms; antiCount the pods matching each
	// of its anti-affinity terms; exAnti the pods whose anti-affinity
	// terms match it.
	affCount, antiCount, exAnti map[pair]int
	// spread holds, per constraint, the pods matching it per domain of the
	// nodes it counts.
	spread []map[string]int
	// ports holds the host ports of the pods added on each node; added the
	// pods added (scores).
	ports map[string][]hostPort
	added []boundPod
}

// newPodCheck prepares the evaluation of pod t against tp.
func newPodCheck(t *terms, tp *topo) *podCheck {
	c := &podCheck{t: t, tp: tp, affCount: map[pair]int{}, antiCount: map[pair]int{}, exAnti: map[pair]int{}}
	for _, i := range tp.anti {
		p := &tp.pods[i]
		c.addExAnti(p.t, tp.nodes[p.node], 1)
	}
	if len(t.aff) > 0 || len(t.anti) > 0 {
		for i := range tp.pods {
			p := &tp.pods[i]
			c.addIncoming(p.t, tp.nodes[p.node], 1)
		}
	}
	if len(t.spread) > 0 {
		c.spread = make([]map[string]int, len(t.spread))
		for k := range t.spread {
			c.spread[k] = map[string]int{}
		}
		for name, n := range tp.nodes {
			c.spreadDomains(n)
			for _, i := range tp.byNode[name] {
				c.addSpread(&tp.pods[i], n, 1)
			}
		}
	}
	return c
}

// clone returns an independent copy of c.
func (c *podCheck) clone() *podCheck {
	d := &podCheck{t: c.t, tp: c.tp, affCount: clonePairs(c.affCount), antiCount: clonePairs(c.antiCount), exAnti: clonePairs(c.exAnti),
		added: append([]boundPod(nil), c.added...)}
	for _, m := range c.spread {
		n := make(map[string]int, len(m))
		for k, v := range m {
			n[k] = v
		}
		d.spread = append(d.spread, n)
	}
	if c.ports != nil {
		d.ports = make(map[string][]hostPort, len(c.ports))
		for k, v := range c.ports {
			d.ports[k] = append([]hostPort(nil), v...)
		}
	}
	return d
}

func clonePairs(m map[pair]int) map[pair]int {
	n := make(map[pair]int, len(m))
	for k, v := range m {
		n[k] = v
	}
	return n
}

// add records pod q placed on node (in this round).
func (c *podCheck) add(q *terms, node string) {
	n := c.tp.nodes[node]
	if c.t.prefers() {
		c.added = append(c.added, boundPod{node: node, t: q})
	}
	c.addExAnti(q, n, 1)
	c.addIncoming(q, n, 1)
	if c.spread != nil {
		c.addSpread(&placed{node: node, t: q}, n, 1)
	}
	if len(c.t.ports) > 0 && len(q.ports) > 0 {
		if c.ports == nil {
			c.ports = map[string][]hostPort{}
		}
		c.ports[node] = append(c.ports[node], q.ports...)
	}
}

// addExAnti counts the anti-affinity terms of pod q on node n that match
// the pending pod.
func (c *podCheck) addExAnti(q *terms, n *v1.Node, d int) {
	if n == nil {
		return
	}
	for k := range q.anti {
		at := &q.anti[k]
		if v, ok := n.Labels[at.key]; ok && at.matches(c.t.ns, c.t.labels, c.tp.nsLabels) {
			c.exAnti[pair{at.key, v}] += d
		}
	}
}

// addIncoming counts pod q on node n for the pending pod's own affinity
// (when q matches all its terms) and anti-affinity terms.
func (c *podCheck) addIncoming(q *terms, n *v1.Node, d int) {
	if n == nil {
		return
	}
	if matchesAll(c.t.aff, q, c.tp.nsLabels) {
		for k := range c.t.aff {
			if v, ok := n.Labels[c.t.aff[k].key]; ok {
				c.affCount[pair{c.t.aff[k].key, v}] += d
			}
		}
	}
	for k := range c.t.anti {
		at := &c.t.anti[k]
		if v, ok := n.Labels[at.key]; ok && at.matches(q.ns, q.labels, c.tp.nsLabels) {
			c.antiCount[pair{at.key, v}] += d
		}
	}
}

// matchesAll reports whether pod q matches every term of ts (none: false).
func matchesAll(ts []affTerm, q *terms, nsLabels func(string) labels.Set) bool {
	if len(ts) == 0 {
		return false
	}
	for k := range ts {
		if !ts[k].matches(q.ns, q.labels, nsLabels) {
			return false
		}
	}
	return true
}

// spreadCounts reports whether node n counts for spread constraint k of
// the pending pod: it has every constraint's key and passes the
// constraint's node inclusion policies.
func (c *podCheck) spreadCounts(k int, n *v1.Node) bool {
	for _, st := range c.t.spread {
		if _, ok := n.Labels[st.key]; !ok {
			return false
		}
	}
	st := &c.t.spread[k]
	if st.honorAffinity {
		if ok, _ := c.t.nodeReq.Match(n); !ok {
			return false
		}
	}
	if st.honorTaints {
		if _, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, c.t.tol, doNotSchedule, false); bad {
			return false
		}
	}
	return true
}

func doNotSchedule(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}

// spreadDomains makes node n's domains known to the spread counts (with
// no pods yet).
func (c *podCheck) spreadDomains(n *v1.Node) {
	for k := range c.t.spread {
		if c.spreadCounts(k, n) {
			v := n.Labels[c.t.spread[k].key]
			c.spread[k][v] += 0
		}
	}
}

// addSpread counts pod p on node n in the spread constraints it matches.
func (c *podCheck) addSpread(p *placed, n *v1.Node, d int) {
	if n == nil || p.deleting || p.t.ns != c.t.ns {
		return
	}
	for k := range c.t.spread {
		st := &c.t.spread[k]
		if st.sel.Empty() || !st.sel.Matches(p.t.labels) || !c.spreadCounts(k, n) {
			continue
		}
		c.spread[k][n.Labels[st.key]] += d
	}
}

// check returns why the pending pod cannot go to node (kube-scheduler's
// reason), "" when it can. The filters run in kube-scheduler's order:
// NodePorts, PodTopologySpread, InterPodAffinity.
func (c *podCheck) check(node string) string {
	n := c.tp.nodes[node]
	if n == nil {
		return reasonNodeAffinity
	}
	if c.t.err != nil {
		return "parsing pod: " + c.t.err.Error() // placed nowhere, as kube-scheduler does
	}
	if len(c.t.ports) > 0 && !c.portsFree(node) {
		return reasonPorts
	}
	if why := c.checkSpread(n); why != "" {
		return why
	}
	return c.checkAffinity(n)
}

// portsFree reports whether none of the pending pod's host ports is taken
// on node.
func (c *podCheck) portsFree(node string) bool {
	for _, i := range c.tp.byNode[node] {
		if portsClash(c.t.ports, c.tp.pods[i].t.ports) {
			return false
		}
	}
	return !portsClash(c.t.ports, c.ports[node])
}

func portsClash(a, b []hostPort) bool {
	for _, x := range a {
		for _, y := range b {
			if x.conflicts(y) {
				return true
			}
		}
	}
	return false
}

// checkSpread is PodTopologySpread's Filter.
func (c *podCheck) checkSpread(n *v1.Node) string {
	for k := range c.t.spread {
		st := &c.t.spread[k]
		v, ok := n.Labels[st.key]
		if !ok {
			return reasonSpreadLabel
		}
		counts := c.spread[k]
		low, first := 0, true
		for _, m := range counts {
			if first || m < low {
				low, first = m, false
			}
		}
		if len(counts) < st.minDomains {
			low = 0
		}
		self := 0
		if st.sel.Matches(c.t.labels) {
			self = 1
		}
		if counts[v]+self-low > st.maxSkew {
			return reasonSpread
		}
	}
	return ""
}

// checkAffinity is InterPodAffinity's Filter.
func (c *podCheck) checkAffinity(n *v1.Node) string {
	if len(c.t.aff) > 0 {
		exist := true
		for k := range c.t.aff {
			v, ok := n.Labels[c.t.aff[k].key]
			if !ok {
				return reasonAffinity
			}
			if c.affCount[pair{c.t.aff[k].key, v}] <= 0 {
				exist = false
			}
		}
		if !exist && !(countsEmpty(c.affCount) && matchesAll(c.t.aff, c.t, c.tp.nsLabels)) {
			return reasonAffinity
		}
	}
	for k := range c.t.anti {
		if v, ok := n.Labels[c.t.anti[k].key]; ok && c.antiCount[pair{c.t.anti[k].key, v}] > 0 {
			return reasonAnti
		}
	}
	for key, v := range n.Labels {
		if c.exAnti[pair{key, v}] > 0 {
			return reasonExistingAnti
		}
	}
	return ""
}

// countsEmpty reports whether no domain has a count (kube-scheduler deletes
// the pairs that drop to zero).
func countsEmpty(m map[pair]int) bool {
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}
