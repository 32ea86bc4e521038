package kube

import (
	"cmp"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/cel"
)

// Dynamic Resource Allocation (resource.k8s.io/v1): the world's side.
// ResourceSlices publish devices, DeviceClasses select them, and a pod's
// ResourceClaims ask for them. gpusched counts the GPU devices of every
// node's slices among the node's GPUs (beside nvidia.com/gpu), reads GPU
// type and memory from the devices' attributes, and counts the GPUs a
// pod's claims ask for among the pod's GPUs (claims.go allocates them).

// Names of NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu)
// that gpusched reads from ResourceSlices.
const (
	// DriverGPU is the driver of NVIDIA's GPUs.
	DriverGPU = "gpu.nvidia.com"
	// attrType is the device's kind: "gpu" for a whole GPU ("mig" and
	// "vfio" devices are not whole GPUs gpusched places).
	attrType = "type"
	// attrProduct is the GPU's product name ("NVIDIA A100-SXM4-40GB").
	attrProduct = "productName"
	// capMemory is the GPU's memory (a quantity of bytes).
	capMemory = "memory"
)

// draWorld is what the world keeps of resource.k8s.io (guarded by
// world.mu).
type draWorld struct {
	// on: the API is served and watched.
	on      bool
	slices  map[string]*resourceapi.ResourceSlice
	classes map[string]*resourceapi.DeviceClass
	// claims by namespace/name.
	claims map[string]*resourceapi.ResourceClaim
	// nodes holds each node's GPU devices (from its slices).
	nodes map[string]draNode
	// gpus indexes the GPU devices of all slices by driver/pool/device.
	gpus map[deviceKey]string
	// pods are gpusched's pods with claims.
	pods map[types.UID]bool
	// inflight holds the allocations gpusched decided and has not yet
	// seen in the claim's status, by claim namespace/name.
	inflight map[string]*resourceapi.AllocationResult
	// version changes with every slice, class or claim change.
	version uint64
	// waits holds why a pod of pods cannot be placed yet ("" or absent
	// when it can); cel caches compiled CEL selectors.
	waits map[types.UID]string
	cel   *cel.Cache
	// devices changes with every slice or class change; matches caches
	// matchingGPUs by class and selectors while it does not.
	devices, matchesAt uint64
	matches            map[string]int
}

// deviceKey names one device.
type deviceKey struct{ driver, pool, device string }

// draNode sums up a node's GPU devices: how many, the product of the
// first, and the smallest memory among them (MiB, 0 when none says).
type draNode struct {
	gpus    int
	product string
	memMiB  int
}

func newDRAWorld() draWorld {
	return draWorld{slices: map[string]*resourceapi.ResourceSlice{}, classes: map[string]*resourceapi.DeviceClass{},
		claims: map[string]*resourceapi.ResourceClaim{}, nodes: map[string]draNode{}, gpus: map[deviceKey]string{},
		pods: map[types.UID]bool{}, inflight: map[string]*resourceapi.AllocationResult{}, waits: map[types.UID]string{}}
}

// isGPU reports whether a device of driver is a whole GPU: NVIDIA's
// driver's devices of type "gpu" (or of no type).
func isGPU(driver string, d *resourceapi.Device) bool {
	if driver != DriverGPU {
		return false
	}
	t, ok := d.Attributes[attrType]
	return !ok || t.StringValue != nil && *t.StringValue == "gpu"
}

// gpuAttributes returns a GPU device's product name ("" when it has none)
// and memory in MiB (0 when it has none).
func gpuAttributes(d *resourceapi.Device) (product string, memMiB int) {
	if a, ok := d.Attributes[attrProduct]; ok && a.StringValue != nil {
		product = *a.StringValue
	}
	if c, ok := d.Capacity[capMemory]; ok {
		memMiB = int(c.Value.Value() >> 20)
	}
	return product, memMiB
}

// setSlice records an added or changed ResourceSlice and re-reads the
// node it belongs to; it reports whether a round should look.
func (w *world) setSlice(s *resourceapi.ResourceSlice) bool {
	old := w.dra.slices[s.Name]
	w.dra.slices[s.Name] = s
	w.dra.version++
	w.dra.devices++
	w.reindex(old, s)
	return true
}

// deleteSlice forgets a ResourceSlice.
func (w *world) deleteSlice(s *resourceapi.ResourceSlice) bool {
	old := w.dra.slices[s.Name]
	delete(w.dra.slices, s.Name)
	w.dra.version++
	w.dra.devices++
	w.reindex(old, nil)
	return true
}

// sliceNode returns the node a slice's devices are on, "" when they are
// not on one node.
func sliceNode(s *resourceapi.ResourceSlice) string {
	if s == nil || s.Spec.NodeName == nil {
		return ""
	}
	return *s.Spec.NodeName
}

// reindex keeps the GPU device index and the node sums when slice old
// became s (either may be nil): the slices of their pools are indexed
// again (only the newest generation of a pool counts), and the nodes of
// those slices summed up and re-read. A change costs a walk over the
// slices' names, not over every device.
func (w *world) reindex(old, s *resourceapi.ResourceSlice) {
	d := &w.dra
	pools := map[[2]string]bool{}
	for _, x := range []*resourceapi.ResourceSlice{old, s} {
		if x != nil {
			pools[[2]string{x.Spec.Driver, x.Spec.Pool.Name}] = true
			d.unindex(x)
		}
	}
	nodes := map[string]bool{sliceNode(old): true, sliceNode(s): true}
	var members []*resourceapi.ResourceSlice
	newest := map[[2]string]int64{}
	for _, x := range d.slices {
		if k := [2]string{x.Spec.Driver, x.Spec.Pool.Name}; pools[k] {
			members = append(members, x)
			newest[k] = max(newest[k], x.Spec.Pool.Generation)
		}
	}
	for _, x := range members {
		d.unindex(x)
		if x.Spec.Pool.Generation == newest[[2]string{x.Spec.Driver, x.Spec.Pool.Name}] {
			d.index(x)
		}
		nodes[sliceNode(x)] = true
	}
	for name := range nodes {
		if name != "" {
			w.sumNode(name)
		}
	}
}

// index and unindex add and remove a slice's GPU devices in the index.
func (d *draWorld) index(s *resourceapi.ResourceSlice) {
	for i := range s.Spec.Devices {
		if isGPU(s.Spec.Driver, &s.Spec.Devices[i]) {
			d.gpus[deviceKey{s.Spec.Driver, s.Spec.Pool.Name, s.Spec.Devices[i].Name}] = sliceNode(s)
		}
	}
}

func (d *draWorld) unindex(s *resourceapi.ResourceSlice) {
	for i := range s.Spec.Devices {
		k := deviceKey{s.Spec.Driver, s.Spec.Pool.Name, s.Spec.Devices[i].Name}
		if node, ok := d.gpus[k]; ok && node == sliceNode(s) {
			delete(d.gpus, k)
		}
	}
}

// sumNode sums up the indexed GPU devices of node name's slices (the
// product of the first by slice name, the smallest memory) and re-reads
// the node.
func (w *world) sumNode(name string) {
	d := &w.dra
	var sum draNode
	var mine []*resourceapi.ResourceSlice
	for _, s := range d.slices {
		if sliceNode(s) == name {
			mine = append(mine, s)
		}
	}
	slices.SortFunc(mine, func(a, b *resourceapi.ResourceSlice) int { return cmp.Compare(a.Name, b.Name) })
	for _, s := range mine {
		for i := range s.Spec.Devices {
			dev := &s.Spec.Devices[i]
			if _, ok := d.gpus[deviceKey{s.Spec.Driver, s.Spec.Pool.Name, dev.Name}]; !ok {
				continue
			}
			product, mem := gpuAttributes(dev)
			sum.gpus++
			if sum.product == "" {
				sum.product = product
			}
			if mem > 0 && (sum.memMiB == 0 || mem < sum.memMiB) {
				sum.memMiB = mem
			}
		}
	}
	if sum.gpus > 0 {
		d.nodes[name] = sum
	} else {
		delete(d.nodes, name)
	}
	if n := w.nodes[name]; n != nil {
		w.setNode(n.obj)
	}
}

func sortedSlices(m map[string]*resourceapi.ResourceSlice) []*resourceapi.ResourceSlice {
	return slices.SortedFunc(maps.Values(m), func(a, b *resourceapi.ResourceSlice) int { return cmp.Compare(a.Name, b.Name) })
}

// addDRA adds a node's GPU devices to what newNodeInfo read from the
// Node: their number to its GPUs; their product and memory where the
// Node's labels do not say (the labels win).
func (d *draWorld) addDRA(ni *nodeInfo) {
	ni.extGPUs = ni.gpus
	dn, ok := d.nodes[ni.name]
	if !ok {
		return
	}
	ni.draGPUs = dn.gpus
	ni.gpus += dn.gpus
	if ni.product == "" && dn.product != "" {
		ni.product = dn.product
		ni.typ, ni.known = ProductType(dn.product)
	}
	if ni.memMiB == 0 && ni.badMemory == "" && dn.memMiB > 0 {
		ni.memMiB = dn.memMiB
	}
}

// gpuSourceFits reports whether node n can give pod p its GPUs the way
// p asks for them: a pod without claims needs nvidia.com/gpu (a node
// whose GPUs all come from DRA has none to give it).
func gpuSourceFits(p *v1.Pod, n *nodeInfo) bool {
	return len(p.Spec.ResourceClaims) > 0 || n.draGPUs == 0 || n.extGPUs > 0
}

// setClass records a DeviceClass.
func (w *world) setClass(c *resourceapi.DeviceClass) bool {
	w.dra.classes[c.Name] = c
	w.dra.version++
	w.dra.devices++
	return len(w.dra.pods) > 0
}

// deleteClass forgets a DeviceClass.
func (w *world) deleteClass(c *resourceapi.DeviceClass) bool {
	delete(w.dra.classes, c.Name)
	w.dra.version++
	w.dra.devices++
	return len(w.dra.pods) > 0
}

// setClaim records a ResourceClaim; an allocation gpusched made is no
// longer in flight once the claim shows one.
func (w *world) setClaim(c *resourceapi.ResourceClaim) bool {
	key := c.Namespace + "/" + c.Name
	old := w.dra.claims[key]
	w.dra.claims[key] = c
	w.dra.version++
	if c.Status.Allocation != nil {
		delete(w.dra.inflight, key)
	}
	// Devices allocated or freed change what other schedulers' claims
	// hold; claims of gpusched's pods change what its pods wait for.
	return old == nil || (old.Status.Allocation == nil) != (c.Status.Allocation == nil) ||
		len(old.Status.ReservedFor) != len(c.Status.ReservedFor) || len(w.dra.pods) > 0
}

// deleteClaim forgets a ResourceClaim.
func (w *world) deleteClaim(c *resourceapi.ResourceClaim) bool {
	key := c.Namespace + "/" + c.Name
	delete(w.dra.claims, key)
	delete(w.dra.inflight, key)
	w.dra.version++
	return true
}

// notePod keeps the set of gpusched's pods with claims and reports
// whether the pod's claims changed (the resourceclaim controller names
// the claims it made from templates in the pod's status).
func (d *draWorld) notePod(old, pi *podInfo) bool {
	if len(pi.obj.Spec.ResourceClaims) == 0 {
		delete(d.pods, pi.uid)
		return false
	}
	d.pods[pi.uid] = true
	if old == nil {
		return true
	}
	if !slices.EqualFunc(old.obj.Status.ResourceClaimStatuses, pi.obj.Status.ResourceClaimStatuses,
		func(a, b v1.PodResourceClaimStatus) bool {
			return a.Name == b.Name && ptrEq(a.ResourceClaimName, b.ResourceClaimName)
		}) {
		return true
	}
	pi.gpus = old.gpus // its claims' GPUs, as the last round counted them (draRefresh)
	return false
}

// forgetPod forgets a pod that is gone.
func (d *draWorld) forgetPod(uid types.UID) {
	delete(d.pods, uid)
	delete(d.waits, uid)
}

func ptrEq(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// keepClaims is stripPod's part for DRA: the pod's claims and the names
// of the claims made for it.
func keepClaims(out, p *v1.Pod) {
	out.Spec.ResourceClaims = p.Spec.ResourceClaims
	out.Status.ResourceClaimStatuses = p.Status.ResourceClaimStatuses
}

// draInformers returns the informers of ResourceSlices, DeviceClasses and
// ResourceClaims when the API server serves resource.k8s.io/v1.
func (s *Scheduler) draInformers() ([]cache.SharedIndexInformer, []cache.TransformFunc, []cache.ResourceEventHandler) {
	if s.client == nil || !s.servesDRA() {
		s.log.Info("resource.k8s.io/v1 is not served: no Dynamic Resource Allocation")
		return nil, nil, nil
	}
	s.w.mu.Lock()
	s.w.dra.on = true
	s.w.mu.Unlock()
	w := s.w
	infs := []cache.SharedIndexInformer{
		resourceinformers.NewResourceSliceInformer(s.client, 0, cache.Indexers{}),
		resourceinformers.NewDeviceClassInformer(s.client, 0, cache.Indexers{}),
		resourceinformers.NewResourceClaimInformer(s.client, "", 0, cache.Indexers{}),
	}
	trs := []cache.TransformFunc{dropManagedFields, dropManagedFields, dropManagedFields}
	hs := []cache.ResourceEventHandler{
		s.handler(onWorld(s, w.setSlice), onWorld(s, w.deleteSlice)),
		s.handler(onWorld(s, w.setClass), onWorld(s, w.deleteClass)),
		s.handler(onWorld(s, w.setClaim), onWorld(s, w.deleteClaim)),
	}
	return infs, trs, hs
}

// servesDRA reports whether the API server serves ResourceSlices,
// DeviceClasses and ResourceClaims of resource.k8s.io/v1.
func (s *Scheduler) servesDRA() bool {
	list, err := s.client.Discovery().ServerResourcesForGroupVersion(resourceapi.SchemeGroupVersion.String())
	if err != nil {
		return false
	}
	want := map[string]bool{"resourceslices": true, "deviceclasses": true, "resourceclaims": true}
	for _, r := range list.APIResources {
		delete(want, r.Name)
	}
	return len(want) == 0
}

// dropManagedFields is the transform of the DRA informers.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
