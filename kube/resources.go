package kube

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gpusched/gpusched/core/model"
)

// The resources besides GPUs, counted as kube-scheduler's NodeResourcesFit
// counts them (docs/KUBERNETES.md, "Resources besides GPUs"): a pod asks
// for what resourcehelper.PodRequests sums up (its containers, its largest
// init container with the sidecars started before it, its pod-level
// requests, its overhead; for a running pod, the larger of its spec and
// what an in-place resize has allocated) and for one pod; a node offers its
// allocatable, less what every pod bound there asks (terminated pods
// excepted).

// podRequests returns what a pod asks of a node besides GPUs (the
// nvidia.com/gpu request is the pod's GPUs), nil when nothing: CPU in
// millicores, every other resource in units (bytes for memory and
// storage). The pod's one unit of "pods" is not included.
func podRequests(p *v1.Pod) model.Resources {
	// kube-scheduler's options for the pods in a node's cache (NodeInfo)
	// under the default feature gates of Kubernetes 1.36: in-place resizes
	// (GA) and pod-level resources (beta) counted.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true}
	return fromList(resourcehelper.PodRequests(p, opts), false)
}

// fromList converts a resource list to model amounts, without GPUs (and
// without zero amounts unless zeros is set); nil when nothing is left.
func fromList(rl v1.ResourceList, zeros bool) model.Resources {
	var out model.Resources
	for name, q := range rl {
		if name == ResourceGPU {
			continue
		}
		v := q.Value()
		if name == v1.ResourceCPU {
			v = q.MilliValue()
		}
		if v == 0 && !zeros {
			continue
		}
		if out == nil {
			out = model.Resources{}
		}
		out[string(name)] = v
	}
	return out
}

// allocatable returns what a node offers pods besides GPUs: every resource
// of its status.allocatable ("pods": how many pods it runs), zeros too;
// nil when it advertises nothing else.
func allocatable(n *v1.Node) model.Resources { return fromList(n.Status.Allocatable, true) }

// add adds sign times req, and sign pods, to dst.
func add(dst, req model.Resources, sign int64) {
	for name, v := range req {
		dst[name] += sign * v
	}
	dst[model.ResourcePods] += sign
}

// maxInto raises each amount of dst to that of req.
func maxInto(dst *model.Resources, req model.Resources) {
	for name, v := range req {
		if *dst == nil {
			*dst = model.Resources{}
		}
		(*dst)[name] = max((*dst)[name], v)
	}
}

// capacity returns what node alloc offers once the pods it holds, taken,
// are counted: every resource alloc advertises, none below zero; nil when
// alloc is nil.
func capacity(alloc, taken model.Resources) model.Resources {
	if alloc == nil {
		return nil
	}
	out := make(model.Resources, len(alloc))
	for name, v := range alloc {
		out[name] = max(v-taken[name], 0)
	}
	return out
}

// tooLarge explains why a pod asking req (and one pod) fits none of the
// nodes whose largest allocatable amounts are most, "" when it may fit one:
// it asks more of a resource than any of them offers (a resource they do
// not advertise, they offer none of). A pod is not counted against nodes
// that advertise no pod limit, nor a request against nodes that advertise
// nothing besides GPUs (most is nil: the cluster is then GPUs only).
func tooLarge(req, most model.Resources) string {
	if most == nil {
		return ""
	}
	for _, name := range req.Names() {
		if q := req[name]; q > most[name] {
			return fmt.Sprintf("each of its pods asks for %s of %s, and the nodes it may use offer at most %s",
				model.FormatAmount(name, q), name, model.FormatAmount(name, most[name]))
		}
	}
	if pods, ok := most[model.ResourcePods]; ok && pods < 1 {
		return "the nodes it may use take no pods (allocatable pods is 0)"
	}
	return ""
}

// roomOn reports whether cluster node n has room, besides GPUs, for one
// more pod of job j: what the jobs there ask (the state's Used) and one
// more replica's request within its capacity.
func (r *round) roomOn(j *model.Job, n int) bool {
	req := r.state.Request(j)
	if req == nil {
		return true
	}
	capa, used := r.cluster.Capacity(n), r.state.Used(n)
	for i, q := range req {
		if q > 0 && used[i]+q > capa[i] {
			return false
		}
	}
	return true
}

// keepRequests copies into out, the stripped copy of pod p, what its
// requests are computed from: every container's requests (GPUs too, from
// their limits when only those are set) and restart policy, the pod-level
// requests, the overhead, and the resources of a resize in progress.
func keepRequests(out, p *v1.Pod) {
	s := &out.Spec
	s.Containers = keepContainers(p.Spec.Containers)
	s.InitContainers = keepContainers(p.Spec.InitContainers)
	s.Overhead = p.Spec.Overhead
	if r := p.Spec.Resources; r != nil && len(r.Requests) > 0 {
		s.Resources = &v1.ResourceRequirements{Requests: r.Requests}
	}
	st := &out.Status
	if r := p.Status.Resources; r != nil && len(r.Requests) > 0 {
		st.Resources = &v1.ResourceRequirements{Requests: r.Requests}
	}
	st.AllocatedResources = p.Status.AllocatedResources
	st.ContainerStatuses = keepStatuses(p.Status.ContainerStatuses)
	st.InitContainerStatuses = keepStatuses(p.Status.InitContainerStatuses)
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodResizePending {
			st.Conditions = append(st.Conditions, v1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason})
		}
	}
}

// keepContainers keeps, of each container, its name, requests and restart
// policy; the GPU request from the limits when only those set it.
func keepContainers(cs []v1.Container) []v1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]v1.Container, len(cs))
	for i, c := range cs {
		out[i].Name, out[i].RestartPolicy = c.Name, c.RestartPolicy
		out[i].Ports = keepHostPorts(c.Ports)
		out[i].Resources.Requests = c.Resources.Requests
		if _, ok := c.Resources.Requests[ResourceGPU]; !ok {
			if q, ok := c.Resources.Limits[ResourceGPU]; ok {
				rl := make(v1.ResourceList, len(c.Resources.Requests)+1)
				for k, v := range c.Resources.Requests {
					rl[k] = v
				}
				rl[ResourceGPU] = q
				out[i].Resources.Requests = rl
			}
		}
	}
	return out
}

// keepStatuses keeps the container statuses that an in-place resize
// concerns (their name and resources).
func keepStatuses(cs []v1.ContainerStatus) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for _, c := range cs {
		if c.Resources != nil || len(c.AllocatedResources) > 0 {
			st := v1.ContainerStatus{Name: c.Name, AllocatedResources: c.AllocatedResources}
			if c.Resources != nil {
				st.Resources = &v1.ResourceRequirements{Requests: c.Resources.Requests}
			}
			out = append(out, st)
		}
	}
	return out
}
