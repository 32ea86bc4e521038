package kube

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// podAccepts reports whether node n accepts pod p as the Kubernetes
// scheduler's filters would, for the constraints gpusched honours: the
// node selector and the required node affinity (both through the
// scheduler's own matcher), and the taints with effect NoSchedule or
// NoExecute that the pod does not tolerate. A malformed affinity rejects
// the node.
func podAccepts(p *v1.Pod, n *v1.Node) bool {
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(p).Match(n); err != nil || !ok {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations,
		func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}, false)
	return !untolerated
}

// eligibility caches podAccepts by constraint signature (pods.go's
// constraintSig) and node name, for as long as no node changes in a way
// rounds see (world.nodesVersion).
type eligibility struct {
	version uint64
	bySig   map[string]map[string]bool
}

// accepts reports whether node n accepts the pods of signature sig, p
// being one of them; version is the world's node version.
func (e *eligibility) accepts(version uint64, sig string, p *v1.Pod, n *nodeInfo) bool {
	if e.bySig == nil || e.version != version {
		e.bySig, e.version = map[string]map[string]bool{}, version
	}
	m := e.bySig[sig]
	if m == nil {
		m = map[string]bool{}
		e.bySig[sig] = m
	}
	ok, seen := m[n.name]
	if !seen {
		ok = podAccepts(p, n.obj) && gpuSourceFits(p, n)
		m[n.name] = ok
	}
	return ok
}
