package kube

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// The node filters of kube-scheduler that depend on the pods around a node
// (docs/KUBERNETES.md, "Pod affinity, topology spread and host ports"):
// NodePorts, InterPodAffinity (required affinity and anti-affinity, and
// the anti-affinity of the pods already placed against the new one) and
// PodTopologySpread (DoNotSchedule constraints), with the semantics of
// their kube-scheduler 1.36 plugins. terms is what a pod asks of them,
// parsed once per pod; podCheck (affinity.go) evaluates them on a node.

// hostPort is a host port a pod's container asks for.
type hostPort struct {
	ip, proto string
	port      int32
}

// affTerm is a required pod (anti-)affinity term: the pods in namespaces
// ns (all when allNS; those whose namespace labels match nsSel when it is
// set) whose labels match sel, in the topology domain of key.
type affTerm struct {
	sel   labels.Selector
	ns    map[string]bool
	nsSel labels.Selector
	allNS bool
	key   string
}

// spreadTerm is a DoNotSchedule topology spread constraint.
type spreadTerm struct {
	maxSkew    int
	minDomains int
	key        string
	sel        labels.Selector
	// honorAffinity and honorTaints are the node inclusion policies.
	honorAffinity, honorTaints bool
}

// terms is what a pod asks of the filters that look at other pods, and
// what it is to them: its namespace and labels, host ports, required
// affinity and anti-affinity terms and DoNotSchedule spread constraints.
// err says why they could not be read (the pod is placed nowhere).
type terms struct {
	ns     string
	labels labels.Set
	ports  []hostPort
	aff    []affTerm
	anti   []affTerm
	spread []spreadTerm
	// nodeReq is the pod's required node affinity and selector, and tol its
	// tolerations (spread's node inclusion policies).
	nodeReq nodeaffinity.RequiredNodeAffinity
	tol     []v1.Toleration
	err     error
	// The preferences kube-scheduler scores (preferences.go): preferred
	// node affinity, weighted pod affinity (negative weights: preferred
	// anti-affinity) and ScheduleAnyway spread constraints.
	prefNode *nodeaffinity.PreferredSchedulingTerms
	prefPod  []weightedTerm
	soft     []spreadTerm
}

// constrained reports whether the pod asks anything of the pods around a
// node.
func (t *terms) constrained() bool {
	return t != nil && (len(t.ports) > 0 || len(t.aff) > 0 || len(t.anti) > 0 || len(t.spread) > 0 || t.err != nil)
}

// podTerms reads what pod p asks of the filters that look at other pods.
func podTerms(p *v1.Pod) *terms {
	t := &terms{ns: p.Namespace, labels: labels.Set(p.Labels), ports: hostPorts(p), tol: p.Spec.Tolerations}
	if a := p.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			t.aff, t.err = affTerms(p.Namespace, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "podAffinity")
		}
		if a.PodAntiAffinity != nil && t.err == nil {
			t.anti, t.err = affTerms(p.Namespace, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "podAntiAffinity")
		}
	}
	if t.err == nil {
		t.spread, t.err = spreadTerms(p, v1.DoNotSchedule)
	}
	if t.err == nil {
		t.err = t.readPreferences(p)
	}
	if len(t.spread) > 0 || len(t.soft) > 0 {
		t.nodeReq = nodeaffinity.GetRequiredNodeAffinity(p)
	}
	return t
}

// hostPorts returns the host ports of the pod's containers and of its
// sidecars (restartable init containers), as kube-scheduler counts them.
func hostPorts(p *v1.Pod) []hostPort {
	var out []hostPort
	add := func(c *v1.Container) {
		for _, cp := range c.Ports {
			if cp.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: cp.HostIP, proto: string(cp.Protocol), port: cp.HostPort}
			if hp.ip == "" {
				hp.ip = "0.0.0.0"
			}
			if hp.proto == "" {
				hp.proto = string(v1.ProtocolTCP)
			}
			out = append(out, hp)
		}
	}
	for i := range p.Spec.InitContainers {
		if c := &p.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range p.Spec.Containers {
		add(&p.Spec.Containers[i])
	}
	return out
}

// conflicts reports whether host port a and b cannot be on one node.
func (a hostPort) conflicts(b hostPort) bool {
	return a.port == b.port && a.proto == b.proto && (a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0")
}

// affTerms reads required pod (anti-)affinity terms; what names the
// field in errors.
func affTerms(ns string, in []v1.PodAffinityTerm, what string) ([]affTerm, error) {
	var out []affTerm
	for i, at := range in {
		sel, err := metav1.LabelSelectorAsSelector(at.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution[%d].labelSelector: %w", what, i, err)
		}
		t := affTerm{sel: sel, key: at.TopologyKey}
		if len(at.Namespaces) > 0 {
			t.ns = map[string]bool{}
			for _, n := range at.Namespaces {
				t.ns[n] = true
			}
		}
		switch {
		case at.NamespaceSelector == nil:
			if t.ns == nil {
				t.ns = map[string]bool{ns: true}
			}
		case len(at.NamespaceSelector.MatchLabels) == 0 && len(at.NamespaceSelector.MatchExpressions) == 0:
			t.allNS = true
		default:
			if t.nsSel, err = metav1.LabelSelectorAsSelector(at.NamespaceSelector); err != nil {
				return nil, fmt.Errorf("spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution[%d].namespaceSelector: %w", what, i, err)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// matches reports whether a pod of namespace ns and labels ls, whose
// namespace has labels nsLabels, is one term t speaks of.
func (t *affTerm) matches(ns string, ls labels.Set, nsLabels func(string) labels.Set) bool {
	if !t.allNS && !t.ns[ns] && (t.nsSel == nil || !t.nsSel.Matches(nsLabels(ns))) {
		return false
	}
	return t.sel.Matches(ls)
}

// spreadTerms reads the pod's DoNotSchedule topology spread constraints,
// with their matchLabelKeys merged into the selector as kube-scheduler
// does.
func spreadTerms(p *v1.Pod, when v1.UnsatisfiableConstraintAction) ([]spreadTerm, error) {
	var out []spreadTerm
	for i, c := range p.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != when {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.topologySpreadConstraints[%d].labelSelector: %w", i, err)
		}
		if len(c.MatchLabelKeys) > 0 {
			set := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := p.Labels[k]; ok {
					set[k] = v
				}
			}
			if len(set) > 0 {
				if reqs, ok := sel.Requirements(); ok {
					merged := labels.SelectorFromSet(set)
					sel = merged.Add(reqs...)
				}
			}
		}
		st := spreadTerm{maxSkew: int(c.MaxSkew), minDomains: 1, key: c.TopologyKey, sel: sel, honorAffinity: true}
		if c.MinDomains != nil {
			st.minDomains = int(*c.MinDomains)
		}
		if c.NodeAffinityPolicy != nil {
			st.honorAffinity = *c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		}
		if c.NodeTaintsPolicy != nil {
			st.honorTaints = *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
		}
		out = append(out, st)
	}
	return out, nil
}

// keepAffinity keeps of a pod's affinity what the filters read: the
// required node affinity and the required pod affinity and anti-affinity.
func keepAffinity(a *v1.Affinity) *v1.Affinity {
	if a == nil {
		return nil
	}
	out := &v1.Affinity{}
	if na := a.NodeAffinity; na != nil && na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		out.NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: na.RequiredDuringSchedulingIgnoredDuringExecution}
	}
	if na := a.NodeAffinity; na != nil && len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		if out.NodeAffinity == nil {
			out.NodeAffinity = &v1.NodeAffinity{}
		}
		out.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = na.PreferredDuringSchedulingIgnoredDuringExecution
	}
	out.PodAffinity, out.PodAntiAffinity = a.PodAffinity, a.PodAntiAffinity
	if out.NodeAffinity == nil && out.PodAffinity == nil && out.PodAntiAffinity == nil {
		return nil
	}
	return out
}

// keepHostPorts keeps the container ports that take a host port.
func keepHostPorts(ps []v1.ContainerPort) []v1.ContainerPort {
	var out []v1.ContainerPort
	for _, p := range ps {
		if p.HostPort > 0 {
			out = append(out, v1.ContainerPort{HostPort: p.HostPort, HostIP: p.HostIP, Protocol: p.Protocol, ContainerPort: p.ContainerPort})
		}
	}
	return out
}

// sameTerms reports whether two readings of a placed pod are alike to
// the filters: labels, host ports and anti-affinity.
func sameTerms(a, b *terms) bool {
	if a == nil || b == nil {
		return a == b
	}
	return maps.Equal(a.labels, b.labels) && slices.Equal(a.ports, b.ports) && len(a.anti) == len(b.anti)
}

// noteAnti records whether pod uid has required anti-affinity terms.
func (w *world) noteAnti(uid types.UID, t *terms) {
	if t != nil && len(t.anti) > 0 {
		w.anti[uid] = true
	} else {
		delete(w.anti, uid)
	}
}

// noteAsking records whether gpusched's pod uid asks something of the
// filters that look at other pods or has preferences.
func (w *world) noteAsking(uid types.UID, t *terms) {
	if t.constrained() || t.prefers() {
		w.asking[uid] = true
	} else {
		delete(w.asking, uid)
	}
}
