package kube

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// Names gpusched reads from Nodes: the extended resource of NVIDIA's device
// plugin and the labels of NVIDIA's GPU Feature Discovery.
const (
	// ResourceGPU is the extended resource that counts a node's GPUs and a
	// container's GPU request.
	ResourceGPU v1.ResourceName = "nvidia.com/gpu"
	// LabelProduct is the GPU product label ("Tesla-V100-SXM2-16GB").
	LabelProduct = "nvidia.com/gpu.product"
	// LabelMemory is the memory of one GPU in MiB ("16384").
	LabelMemory = "nvidia.com/gpu.memory"
)

// nodeInfo is what a round needs of a Node.
type nodeInfo struct {
	name string
	// gpus is the allocatable nvidia.com/gpu (extGPUs) plus the GPU devices
	// of its ResourceSlices (draGPUs, dra.go); alloc the rest of its
	// allocatable resources (allocatable).
	gpus, extGPUs, draGPUs int
	alloc                  model.Resources
	// typ is the GPU type (ProductType of the product label); known says
	// whether the catalog has it.
	typ     string
	known   bool
	product string
	// memMiB is the nvidia.com/gpu.memory label, 0 when absent or
	// unreadable (badMemory then holds the label's value).
	memMiB    int
	badMemory string
	// ready: the Ready condition is True; schedulable: not cordoned.
	ready, schedulable bool
	// obj is the stripped Node (name, labels, taints) that node affinity and
	// taints are matched against.
	obj *v1.Node
}

// ProductType maps the nvidia.com/gpu.product label of a node to a GPU
// type and reports whether the catalog knows it: config.TypeFromName (the
// rules of docs/KUBERNETES.md, "GPU products"), except that a MIG slice
// ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb") is its own type, named by the whole
// product, since it is not the GPU its name starts with. A missing label
// gives "unknown".
func ProductType(product string) (typ string, known bool) {
	words := strings.FieldsFunc(strings.ToLower(product), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	if slices.Contains(words, "mig") {
		typ = strings.Join(words, "-")
	} else {
		typ = config.TypeFromName(product)
	}
	_, known = config.LookupType(typ)
	return typ, known
}

// newNodeInfo reads a Node.
func newNodeInfo(n *v1.Node) *nodeInfo {
	ni := &nodeInfo{name: n.Name, schedulable: !n.Spec.Unschedulable, obj: n, product: n.Labels[LabelProduct]}
	if q, ok := n.Status.Allocatable[ResourceGPU]; ok {
		ni.gpus = int(max(q.Value(), 0))
	}
	ni.alloc = allocatable(n)
	ni.typ, ni.known = ProductType(ni.product)
	if s, ok := n.Labels[LabelMemory]; ok {
		if m, err := strconv.Atoi(s); err == nil && m > 0 {
			ni.memMiB = m
		} else {
			ni.badMemory = s
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			ni.ready = c.Status == v1.ConditionTrue
		}
	}
	return ni
}

// usable reports whether gpusched may place pods on the node: Ready, not
// cordoned, with GPUs.
func (n *nodeInfo) usable() bool { return n.ready && n.schedulable && n.gpus > 0 }

// sameForScheduling reports whether two readings of a node differ in
// nothing a round looks at (kwok's and the kubelet's heartbeats change
// only times).
func (n *nodeInfo) sameForScheduling(o *nodeInfo) bool {
	return n.gpus == o.gpus && n.extGPUs == o.extGPUs && n.alloc.Equal(o.alloc) && n.typ == o.typ && n.memMiB == o.memMiB && n.ready == o.ready &&
		n.schedulable == o.schedulable && maps.Equal(n.obj.Labels, o.obj.Labels) &&
		slices.EqualFunc(n.obj.Spec.Taints, o.obj.Spec.Taints, func(a, b v1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value })
}

// stripNode is the node informer's transform: it keeps the name, labels,
// taints, cordon, allocatable resources and the Ready condition, and drops
// the rest (images, addresses, managed fields, heartbeat times).
func stripNode(obj any) (any, error) {
	n, ok := obj.(*v1.Node)
	if !ok {
		return obj, nil // a tombstone
	}
	out := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion,
		Labels: n.Labels}}
	out.Spec.Unschedulable, out.Spec.Taints = n.Spec.Unschedulable, n.Spec.Taints
	out.Status.Allocatable = n.Status.Allocatable
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			out.Status.Conditions = []v1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out, nil
}
