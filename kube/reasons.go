package kube

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// reasonGPUType is why a node whose GPU type a job's gpusched.io/gpu-type
// rules out does not take its pods (gpusched's own filter).
const reasonGPUType = "node(s) had another GPU type than " + AnnGPUType

// filterSummary returns a waiting job's reason with kube-scheduler's
// account of the nodes ("0/3 nodes are available: 1 node(s) didn't match
// pod anti-affinity rules, 2 Insufficient nvidia.com/gpu."), for a job
// whose pods some node's filters rule out: alone when no node admits its
// first pod, after why otherwise. Jobs whose pods every node accepts keep
// why (the bulk of a large queue: no per-node look).
func (r *round) filterSummary(rj *rjob, why string) string {
	if len(rj.pending) == 0 || len(r.nodes) == 0 {
		return why
	}
	fr := r.s.filters
	dynamic := fr != nil && fr.dyn[rj.kj.mj] != nil
	if !dynamic && rj.set.gpuType == "" && r.acceptedEverywhere(rj) || r.w.assumed[rj.pending[0].uid] != "" {
		return why
	}
	var c *podCheck
	if dynamic {
		c = newPodCheck(rj.pending[0].t, fr.tp)
		for _, b := range fr.bound {
			c.add(b.t, b.node)
		}
	}
	var sum summary
	key := summaryKey{rj.sig, rj.set.gpuType, rj.pod}
	if cached, hit := r.summaries[key]; hit && c == nil && rj.sig != "" {
		sum = cached // the same for every job of its constraints
	} else {
		sum = r.summarize(rj, c)
		if c == nil && rj.sig != "" {
			if r.summaries == nil {
				r.summaries = map[summaryKey]summary{}
			}
			r.summaries[key] = sum
		}
	}
	switch {
	case !sum.filtered:
		return why
	case sum.ok == 0:
		return sum.text
	}
	return why + " (" + sum.text + ")"
}

// summary is kube-scheduler's account of the nodes for a job's pod: how
// many admit it, and the text; filtered says some filter (not only free
// GPUs) ruled a node out.
type summary struct {
	ok       int
	text     string
	filtered bool
}

// summaryKey identifies the jobs that share a summary in a round's
// reasons: their constraint signature, GPU type and GPUs per pod.
type summaryKey struct {
	sig, typ string
	pod      int
}

// summarize builds the summary for the job's first pending pod.
func (r *round) summarize(rj *rjob, c *podCheck) summary {
	counts, sum := map[string]int{}, summary{}
	for _, n := range r.nodes {
		reason := r.nodeReason(rj, n, c)
		switch reason {
		case "":
			sum.ok++
		case "Insufficient " + string(ResourceGPU):
			counts[reason]++
		default:
			counts[reason]++
			sum.filtered = true
		}
	}
	sum.text = nodesAvailable(sum.ok, len(r.nodes), counts)
	return sum
}

// acceptedEverywhere reports whether every node accepts the job's pods
// (taints, node affinity, volumes): for a job in the engine's state, the
// round's shapes know (a job they lack, or whose shape has no node list,
// may use every node) without hashing its signature again.
func (r *round) acceptedEverywhere(rj *rjob) bool {
	if !rj.inState {
		return r.sigOf(rj).usable == nil
	}
	sh, ok := r.s.shapes[rj.kj.mj]
	return !ok || sh.elig == nil
}

// nodesAvailable formats kube-scheduler's account: ok of total nodes are
// available, and why the others are not, by reason (sorted, as
// kube-scheduler sorts them).
func nodesAvailable(ok, total int, counts map[string]int) string {
	var parts []string
	for reason, k := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", k, reason))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d/%d nodes are available: %s.", ok, total, strings.Join(parts, ", "))
}

// nodeReason returns why node n does not take the job's first pending pod
// now, "" when it does: the first filter that fails, in kube-scheduler's
// order (TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit for
// GPUs, PodTopologySpread, InterPodAffinity), gpusched's GPU type first.
func (r *round) nodeReason(rj *rjob, n *nodeInfo, c *podCheck) string {
	p := rj.pending[0]
	if rj.set.gpuType != "" && n.typ != rj.set.gpuType {
		return reasonGPUType
	}
	if why := staticReason(p.obj, n.obj); why != "" {
		return why
	}
	if c != nil && len(c.t.ports) > 0 && !c.portsFree(n.name) {
		return reasonPorts
	}
	free := 0
	if ci, ok := r.cidx[n.name]; ok && r.state != nil {
		free = bits.OnesCount64(r.state.FreeMask(ci))
	}
	if free < rj.pod {
		return "Insufficient " + string(ResourceGPU)
	}
	if why := r.w.volumeReason(p.obj, n.obj); why != "" {
		return why
	}
	if c != nil {
		return c.check(n.name)
	}
	return ""
}

// staticReason returns why node n rejects pod p for its taints or node
// affinity (podAccepts), "" when it does not.
func staticReason(p *v1.Pod, n *v1.Node) string {
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations, doNotSchedule, false)
	if untolerated {
		return reasonTaints
	}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(p).Match(n); err != nil || !ok {
		return reasonNodeAffinity
	}
	return ""
}

// vetoReason is the wait reason of a job whose placement a pod bound
// earlier in the round ruled out (veto).
func vetoReason(why string) string {
	return "its placement clashed with pods bound in the same round (" + why + "); it is placed again in the next round"
}

// admitsPod reports whether a running job's replacement pod p may be
// bound on cluster node ni given the pods bound so far, and records it as
// bound when it may.
func (r *round) admitsPod(p *podInfo, ni int) bool {
	fr := r.s.filters
	if fr == nil {
		return true
	}
	node := r.cluster.Nodes[ni].Name
	c := newPodCheck(p.t, fr.tp)
	for _, b := range fr.bound {
		c.add(b.t, b.node)
	}
	if c.check(node) != "" {
		return false
	}
	fr.bound = append(fr.bound, boundPod{node: node, t: p.t})
	return true
}
