package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DRA's unit and scenario tests: devices' attributes to GPU type and
// memory, claims to GPU counts, and rounds that allocate claims with
// kube-scheduler's structured allocator (no API server).

// gpuDevice is a device as NVIDIA's DRA driver publishes a whole GPU.
func gpuDevice(name, product, mem string) resourceapi.Device {
	typ := "gpu"
	d := resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"type": {StringValue: &typ}}}
	if product != "" {
		d.Attributes["productName"] = resourceapi.DeviceAttribute{StringValue: &product}
	}
	if mem != "" {
		d.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(mem)}}
	}
	return d
}

// mkSlice is node's ResourceSlice of driver with devices.
func mkSlice(node, driver string, devs ...resourceapi.Device) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + driver},
		Spec: resourceapi.ResourceSliceSpec{Driver: driver, NodeName: &node,
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}, Devices: devs}}
}

// gpuClass is NVIDIA's DeviceClass gpu.nvidia.com.
func gpuClass() *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}}}}
}

// mkClaim is a claim in namespace ns of one request for count devices of
// class (allocationMode All when count is 0), with CEL selectors.
func mkClaim(name, class string, count int64, sel ...string) *resourceapi.ResourceClaim {
	req := resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
	if count == 0 {
		req.AllocationMode, req.Count = resourceapi.DeviceAllocationModeAll, 0
	}
	for _, s := range sel {
		req.Selectors = append(req.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: s}})
	}
	return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("claim-" + name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &req}}}}}
}

// withClaim gives a pod (of no nvidia.com/gpu) the claim named.
func withClaim(claim string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: "gpu", ResourceClaimName: &claim})
	}
}

// draNodeObj is a Ready node with no nvidia.com/gpu (its GPUs come from
// slices) but CPUs and memory.
func draNodeObj(name string) *v1.Node {
	n := mkNode(name, "", 0)
	delete(n.Labels, LabelProduct)
	n.Status.Allocatable = v1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110")}
	return n
}

// feedDRA records slices, classes and claims, then runs feed.
func feedDRA(t *testing.T, s *Scheduler, now time.Time, objs ...any) (map[string]string, *round) {
	t.Helper()
	var rest []any
	s.w.mu.Lock()
	for _, o := range objs {
		switch o := o.(type) {
		case *resourceapi.ResourceSlice:
			s.w.setSlice(o)
		case *resourceapi.DeviceClass:
			s.w.setClass(o)
		case *resourceapi.ResourceClaim:
			s.w.setClaim(o)
		default:
			rest = append(rest, o)
		}
	}
	s.w.mu.Unlock()
	return feed(t, s, now, rest...)
}

func TestGPUAttributes(t *testing.T) {
	mig := gpuDevice("mig-0", "NVIDIA A100-SXM4-40GB", "5Gi")
	migType := "mig"
	mig.Attributes["type"] = resourceapi.DeviceAttribute{StringValue: &migType}
	untyped := gpuDevice("gpu-9", "NVIDIA L4", "")
	delete(untyped.Attributes, "type")
	tests := []struct {
		name    string
		driver  string
		dev     resourceapi.Device
		gpu     bool
		typ     string
		memMiB  int
		product string
	}{
		{"A100 40GB", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi"), true, "a100", 40960, "NVIDIA A100-SXM4-40GB"},
		{"A100 80GB", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-80GB", "81920Mi"), true, "a100-80", 81920, "NVIDIA A100-SXM4-80GB"},
		{"H100 in bytes", DriverGPU, gpuDevice("gpu-1", "NVIDIA H100 80GB HBM3", "85520809984"), true, "h100", 81559, "NVIDIA H100 80GB HBM3"},
		{"V100", DriverGPU, gpuDevice("gpu-2", "Tesla V100-SXM2-16GB", "16Gi"), true, "v100", 16384, "Tesla V100-SXM2-16GB"},
		{"no type attribute: a GPU", DriverGPU, untyped, true, "l4", 0, "NVIDIA L4"},
		{"a MIG device is not a whole GPU", DriverGPU, mig, false, "", 0, ""},
		{"another driver's device", "cpu.example.com", gpuDevice("cpu-0", "EPYC", "1Gi"), false, "", 0, ""},
		{"no product name", DriverGPU, gpuDevice("gpu-3", "", ""), true, "unknown", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isGPU(tc.driver, &tc.dev); got != tc.gpu {
				t.Fatalf("isGPU = %v, want %v", got, tc.gpu)
			}
			if !tc.gpu {
				return
			}
			product, mem := gpuAttributes(&tc.dev)
			typ, _ := ProductType(product)
			if product != tc.product || typ != tc.typ || mem != tc.memMiB {
				t.Errorf("product %q type %q memory %d MiB, want %q %q %d", product, typ, mem, tc.product, tc.typ, tc.memMiB)
			}
		})
	}
}

// TestNodeFromSlices: a node's GPUs, type and memory come from its
// slices' GPU devices when it has no nvidia.com/gpu; its labels win.
func TestNodeFromSlices(t *testing.T) {
	w := newWorld()
	labelled := draNodeObj("b")
	labelled.Labels[LabelProduct], labelled.Labels[LabelMemory] = "Tesla-V100-SXM2-32GB", "32768"
	w.setNode(draNodeObj("a"))
	w.setNode(labelled)
	w.setSlice(mkSlice("a", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi"), gpuDevice("gpu-1", "NVIDIA A100-SXM4-40GB", "40Gi")))
	w.setSlice(mkSlice("b", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi")))
	w.setSlice(mkSlice("a", "nic.example.com", resourceapi.Device{Name: "eth0"}))
	for _, tc := range []struct {
		node      string
		gpus, ext int
		typ       string
		mem       int
	}{{"a", 2, 0, "a100", 40960}, {"b", 1, 0, "v100m32", 32768}} {
		n := w.nodes[tc.node]
		if n.gpus != tc.gpus || n.extGPUs != tc.ext || n.typ != tc.typ || n.memMiB != tc.mem || !n.usable() {
			t.Errorf("node %s: gpus %d ext %d type %s memory %d usable %v, want %d %d %s %d true",
				tc.node, n.gpus, n.extGPUs, n.typ, n.memMiB, n.usable(), tc.gpus, tc.ext, tc.typ, tc.mem)
		}
	}
	w.deleteSlice(mkSlice("a", DriverGPU))
	if n := w.nodes["a"]; n.gpus != 0 || n.usable() {
		t.Errorf("node a without its slice: %d GPUs, usable %v", n.gpus, n.usable())
	}
}

func TestClaimGPUs(t *testing.T) {
	w := newWorld()
	w.setSlice(mkSlice("a", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi"), gpuDevice("gpu-1", "NVIDIA A100-SXM4-40GB", "40Gi"),
		gpuDevice("gpu-2", "NVIDIA H100 80GB HBM3", "80Gi")))
	w.setSlice(mkSlice("b", DriverGPU, gpuDevice("gpu-0", "NVIDIA H100 80GB HBM3", "80Gi")))
	w.setSlice(mkSlice("a", "nic.example.com", resourceapi.Device{Name: "eth0"}))
	w.setClass(gpuClass())
	w.setClass(&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "nic"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "device.driver == 'nic.example.com'"}}}}})
	allocated := mkClaim("held", "gpu.nvidia.com", 2)
	allocated.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: DriverGPU, Pool: "a", Device: "gpu-0"}, {Request: "gpu", Driver: DriverGPU, Pool: "a", Device: "gpu-1"}}}}
	deleting := mkClaim("going", "gpu.nvidia.com", 1)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	twoReqs := mkClaim("two", "gpu.nvidia.com", 1)
	twoReqs.Spec.Devices.Requests = append(twoReqs.Spec.Devices.Requests, resourceapi.DeviceRequest{Name: "nic",
		Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "nic", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}},
		resourceapi.DeviceRequest{Name: "more", FirstAvailable: []resourceapi.DeviceSubRequest{{Name: "h100", DeviceClassName: "gpu.nvidia.com",
			AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2}}})
	for _, c := range []*resourceapi.ResourceClaim{
		mkClaim("one", "gpu.nvidia.com", 1), mkClaim("four", "gpu.nvidia.com", 4), mkClaim("all", "gpu.nvidia.com", 0),
		mkClaim("all-h100", "gpu.nvidia.com", 0, "device.attributes['gpu.nvidia.com'].productName.matches('H100')"),
		mkClaim("big", "gpu.nvidia.com", 1, "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('64Gi')) >= 0"),
		mkClaim("none", "gpu.nvidia.com", 1, "device.attributes['gpu.nvidia.com'].productName == 'B200'"),
		mkClaim("nic", "nic", 1), mkClaim("noclass", "tpu.example.com", 1), mkClaim("badcel", "gpu.nvidia.com", 1, "device.nosuch("),
		allocated, deleting, twoReqs,
	} {
		w.setClaim(c)
	}
	tmpl := "gpu-template"
	tests := []struct {
		name  string
		claim string // the pod's claim by name; "" for one from a template
		made  string // the claim the controller made from the template
		gpus  int
		why   string
	}{
		{"one GPU", "one", "", 1, ""},
		{"ExactCount 4 (more than a node has: counted as asked)", "four", "", 4, ""},
		{"All: the most one node has", "all", "", 3, ""},
		{"All of a product (CEL on productName)", "all-h100", "", 1, ""},
		{"CEL on memory capacity", "big", "", 1, ""},
		{"a selector no GPU matches: no GPUs", "none", "", 0, ""},
		{"a class of other devices: no GPUs", "nic", "", 0, ""},
		{"two requests, one of GPUs, and firstAvailable", "two", "", 3, ""},
		{"allocated: its GPU devices", "held", "", 2, ""},
		{"a missing class", "noclass", "", 0, "waiting for ResourceClaim ns/noclass: its request gpu names DeviceClass tpu.example.com, which does not exist"},
		{"a malformed CEL selector", "badcel", "", 0, "waiting for ResourceClaim ns/badcel: request gpu: CEL selector \"device.nosuch(\""},
		{"a missing claim", "nosuch", "", 0, "waiting for ResourceClaim ns/nosuch: it does not exist"},
		{"a claim being deleted", "going", "", 0, "waiting for ResourceClaim ns/going: it is being deleted"},
		{"from a template, not made yet", "", "", 0, "waiting for the ResourceClaim of its pod claim \"gpu\": the resourceclaim controller of kube-controller-manager has not made it from ResourceClaimTemplate ns/gpu-template yet"},
		{"from a template, made", "", "one", 1, ""},
		{"from a template, no claim needed", "", "-", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mkPod("p", 0, withClaim(tc.claim))
			if tc.claim == "" {
				p.Spec.ResourceClaims[0] = v1.PodResourceClaim{Name: "gpu", ResourceClaimTemplateName: &tmpl}
				switch tc.made {
				case "":
				case "-":
					p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu"}}
				default:
					p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &tc.made}}
				}
			}
			gpus, why := w.dra.claimGPUs(p)
			if gpus != tc.gpus || !strings.HasPrefix(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("got %d GPUs, why %q; want %d, %q", gpus, why, tc.gpus, tc.why)
			}
		})
	}
}

// TestRoundDRA: rounds place pods with claims on the nodes where the
// allocator finds devices, allocate them there, and name the claim that
// waits.
func TestRoundDRA(t *testing.T) {
	a100 := func(node string, n int) *resourceapi.ResourceSlice {
		var devs []resourceapi.Device
		for i := range n {
			devs = append(devs, gpuDevice(fmt.Sprintf("gpu-%d", i), "NVIDIA A100-SXM4-40GB", "40Gi"))
		}
		return mkSlice(node, DriverGPU, devs...)
	}
	h100 := mkSlice("h", DriverGPU, gpuDevice("gpu-0", "NVIDIA H100 80GB HBM3", "80Gi"), gpuDevice("gpu-1", "NVIDIA H100 80GB HBM3", "80Gi"))
	isH100 := "device.attributes['gpu.nvidia.com'].productName.matches('H100')"
	tests := []struct {
		name    string
		objs    []any
		bound   map[string]string
		devices map[string]string // claim → devices allocated, "node/device ..."
		reason  map[string]string
	}{
		{"one GPU claim: allocated on the node with devices",
			[]any{draNodeObj("a"), a100("a", 1), gpuClass(), mkClaim("c1", "gpu.nvidia.com", 1), mkPod("p", 0, withClaim("c1"))},
			map[string]string{"p": "a"}, map[string]string{"c1": "a/gpu-0"}, nil},
		{"a selector picks the H100 node",
			[]any{draNodeObj("a"), draNodeObj("h"), a100("a", 4), h100, gpuClass(), mkClaim("c1", "gpu.nvidia.com", 2, isH100),
				mkPod("p", 0, withClaim("c1"))},
			map[string]string{"p": "h"}, map[string]string{"c1": "h/gpu-0 h/gpu-1"}, nil},
		{"two claims for one device: the second waits, naming its claim",
			[]any{draNodeObj("a"), a100("a", 1), gpuClass(), mkClaim("c1", "gpu.nvidia.com", 1), mkClaim("c2", "gpu.nvidia.com", 1),
				mkPod("p1", 0, withClaim("c1")), mkPod("p2", 0, withClaim("c2"))},
			map[string]string{"p1": "a"}, map[string]string{"c1": "a/gpu-0"}, map[string]string{"p2": "waiting for free GPUs"}},
		{"a pod without claims does not go to a node whose GPUs are devices",
			[]any{draNodeObj("a"), a100("a", 8), mkNode("b", "Tesla-V100-SXM2-16GB", 1, func(n *v1.Node) {
				n.Status.Allocatable["cpu"], n.Status.Allocatable["pods"] = resource.MustParse("64"), resource.MustParse("110")
			}), mkPod("p", 1), mkPod("q", 1)},
			map[string]string{"p": "b"}, nil, map[string]string{"q": "waiting for free GPUs"}},
		{"a claim asking more than any node has",
			[]any{draNodeObj("a"), a100("a", 2), gpuClass(), mkClaim("c1", "gpu.nvidia.com", 4), mkPod("p", 0, withClaim("c1"))},
			map[string]string{}, nil, map[string]string{"p": "waiting for ResourceClaim ns/c1: no free devices that its requests select on the nodes its pod may use (with the devices allocated now)"}},
		{"a class of no GPUs: the pod asks for none",
			[]any{draNodeObj("a"), a100("a", 2), gpuClass(), &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "nic"},
				Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "device.driver == 'nic.example.com'"}}}}},
				mkClaim("c1", "nic", 1), mkPod("p", 0, withClaim("c1"))},
			map[string]string{}, nil, map[string]string{"p": "pod p asks for 0 nvidia.com/gpu; gpusched places pods that ask for 1 to 64 (others belong to another scheduler)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSched(t, "fifo", "pack")
			bound, r := feedDRA(t, s, t0, tc.objs...)
			if fmt.Sprint(bound) != fmt.Sprint(tc.bound) {
				t.Errorf("bound %v, want %v", bound, tc.bound)
			}
			got := map[string]string{}
			for _, b := range r.work.binds {
				for _, pb := range b.pods {
					for _, c := range pb.claims {
						var devs []string
						for _, res := range c.alloc.Devices.Results {
							devs = append(devs, res.Pool+"/"+res.Device)
						}
						got[c.obj.Name] = strings.Join(devs, " ")
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(map[string]string(tc.devices)) && len(got)+len(tc.devices) > 0 {
				t.Errorf("devices %v, want %v", got, tc.devices)
			}
			for pod, want := range tc.reason {
				if got := reasonOf(r, pod); got != want {
					t.Errorf("%s waits for %q, want %q", pod, got, want)
				}
			}
		})
	}
}

// TestRoundDRARelease: a device allocated to another pod's claim is not
// free; once the resourceclaim controller clears that allocation (its pod
// done), the waiting claim gets the device. A claim allocated for a pod
// of gpusched's counts as that pod's GPUs, not twice.
func TestRoundDRARelease(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	held := mkClaim("c1", "gpu.nvidia.com", 1)
	held.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: DriverGPU, Pool: "a", Device: "gpu-0"}}}}
	held.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "other", UID: "other"}}
	objs := []any{draNodeObj("a"), mkSlice("a", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi"),
		gpuDevice("gpu-1", "NVIDIA A100-SXM4-40GB", "40Gi")), gpuClass(), held, mkClaim("c2", "gpu.nvidia.com", 2), mkPod("p", 0, withClaim("c2"))}
	bound, r := feedDRA(t, s, t0, objs...)
	if len(bound) != 0 || r.free[0] != 1 {
		t.Fatalf("round 1: bound %v, free %v", bound, r.free)
	}
	released := held.DeepCopy()
	released.Status = resourceapi.ResourceClaimStatus{}
	bound, r = feedDRA(t, s, t0.Add(time.Second), released)
	if bound["p"] != "a" || len(r.work.binds[0].pods[0].claims) != 1 {
		t.Fatalf("round 2: bound %v", bound)
	}
	// The informer shows c2 allocated and reserved for p, and p bound: p's
	// two GPUs are its claim's, counted once.
	w := r.work.binds[0].pods[0].claims[0]
	done := w.obj.DeepCopy()
	done.Status.Allocation = w.alloc
	done.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "p"}}
	p := mkPod("p", 0, withClaim("c2"), func(p *v1.Pod) { p.Spec.NodeName = "a" })
	_, r = feedDRA(t, s, t0.Add(2*time.Second), done, p)
	if r.base[0] != 2 || r.free[0] != 0 || len(s.w.dra.inflight) != 0 {
		t.Fatalf("round 3: base %v free %v inflight %v", r.base, r.free, s.w.dra.inflight)
	}
}

// FuzzClaimGPUs: any claim the API could hold (JSON) is read without a
// panic, into a count no larger than its requests can ask.
func FuzzClaimGPUs(f *testing.F) {
	for _, c := range []*resourceapi.ResourceClaim{mkClaim("a", "gpu.nvidia.com", 2), mkClaim("b", "gpu.nvidia.com", 0, "device.attributes['gpu.nvidia.com'].productName == 'x'"),
		mkClaim("c", "nosuch", 1), mkClaim("d", "gpu.nvidia.com", 1, "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('1Gi')) > 0")} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Add([]byte(`{"metadata":{"name":"e","namespace":"ns"},"spec":{"devices":{"requests":[{"name":"r","firstAvailable":[{"name":"s","deviceClassName":"gpu.nvidia.com","count":-3}]}]}}}`))
	w := newWorld()
	w.setSlice(mkSlice("a", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi"), gpuDevice("gpu-1", "", "")))
	w.setClass(gpuClass())
	f.Fuzz(func(t *testing.T, data []byte) {
		var c resourceapi.ResourceClaim
		if json.Unmarshal(data, &c) != nil {
			return
		}
		c.Namespace, c.Name = "ns", "fuzz"
		w.setClaim(&c)
		name := "fuzz"
		p := mkPod("p", 0, func(p *v1.Pod) {
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "x", ResourceClaimName: &name}}
		})
		gpus, _ := w.dra.claimGPUs(p)
		limit := 0
		for _, r := range c.Spec.Devices.Requests {
			n := int64(2) // allocationMode All: the devices of the node
			if r.Exactly != nil {
				n = max(n, r.Exactly.Count)
			}
			for _, s := range r.FirstAvailable {
				n = max(n, s.Count)
			}
			limit += int(n)
		}
		if a := c.Status.Allocation; a != nil {
			limit = len(a.Devices.Results)
		}
		if gpus < 0 || gpus > limit {
			t.Fatalf("%d GPUs from %s (at most %d)", gpus, data, limit)
		}
	})
}

// FuzzGPUAttributes: any product name and memory capacity map to a type
// and a memory without a panic.
func FuzzGPUAttributes(f *testing.F) {
	for _, s := range [][2]string{{"NVIDIA A100-SXM4-40GB", "40Gi"}, {"NVIDIA H100 80GB HBM3", "85520809984"}, {"", "0"}, {"MIG 1g.5gb", "-1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, product, mem string) {
		d := gpuDevice("gpu-0", product, "")
		q, err := resource.ParseQuantity(mem)
		if err == nil {
			d.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: q}}
		}
		got, _ := gpuAttributes(&d)
		if typ, _ := ProductType(got); got != product || typ == "" {
			t.Fatalf("product %q → %q, type %q", product, got, typ)
		}
	})
}

// TestRoundDRAConflict: a pod whose claim write conflicted (another
// scheduler wrote the claim first) is not assumed bound any more, its
// allocation is no longer in flight, and the next round places it again
// with the claim as the informer then shows it.
func TestRoundDRAConflict(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	objs := []any{draNodeObj("a"), mkSlice("a", DriverGPU, gpuDevice("gpu-0", "NVIDIA A100-SXM4-40GB", "40Gi"),
		gpuDevice("gpu-1", "NVIDIA A100-SXM4-40GB", "40Gi")), gpuClass(), mkClaim("c", "gpu.nvidia.com", 1), mkPod("p", 0, withClaim("c"))}
	bound, r := feedDRA(t, s, t0, objs...)
	if bound["p"] != "a" || len(s.w.dra.inflight) != 1 {
		t.Fatalf("round 1: bound %v, in flight %v", bound, s.w.dra.inflight)
	}
	task := r.work.binds[0]
	conflict := &claimError{claim: "ns/c", err: apierrors.NewConflict(resourceapi.Resource("resourceclaims"), "c", fmt.Errorf("the object has been modified"))}
	if got := bindResult(conflict); got != "claim_conflict" {
		t.Errorf("bindResult %q", got)
	}
	s.bound(context.Background(), task, []error{conflict})
	if s.w.assumed["p"] != "" || len(s.w.dra.inflight) != 0 {
		t.Fatalf("after the conflict: assumed %v, in flight %v", s.w.assumed, s.w.dra.inflight)
	}
	// The other scheduler took gpu-0 for its pod: p gets gpu-1.
	theirs := mkClaim("c", "gpu.nvidia.com", 1)
	theirs.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: DriverGPU, Pool: "a", Device: "gpu-0"}}}}
	theirs.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "q", UID: "q"}}
	other := mkClaim("c2", "gpu.nvidia.com", 1)
	p2 := mkPod("p2", 0, withClaim("c2"))
	bound, r = feedDRA(t, s, t0.Add(time.Second), theirs, other, p2)
	if bound["p"] != "a" || bound["p2"] != "a" {
		t.Fatalf("round 2: bound %v", bound)
	}
	for _, b := range r.work.binds {
		for _, pb := range b.pods {
			if pb.name == "p" && (len(pb.claims) != 1 || pb.claims[0].alloc != nil) {
				t.Errorf("p's claim, allocated elsewhere meanwhile, is to be reserved only: %+v", pb.claims)
			}
			if pb.name == "p2" && (len(pb.claims) != 1 || pb.claims[0].alloc.Devices.Results[0].Device != "gpu-1") {
				t.Errorf("p2's claim: %+v", pb.claims)
			}
		}
	}
}

// BenchmarkRoundDRA is a round that places pods with claims at the
// benchmark's scale: 1,000 nodes whose 8 GPUs each are devices of their
// ResourceSlice (no nvidia.com/gpu), 4,000 pending single-pod jobs whose
// pods each have their own claim of one GPU (as from one template); the
// round allocates 4,000 claims with kube-scheduler's allocator.
func BenchmarkRoundDRA(b *testing.B) { benchDRA(b, 1000, 4000) }

// BenchmarkRoundDRASmall is BenchmarkRoundDRA at a tenth of its size.
func BenchmarkRoundDRASmall(b *testing.B) { benchDRA(b, 100, 400) }

func benchDRA(b *testing.B, nodes, pods int) {
	for b.Loop() {
		b.StopTimer()
		s := testSched(&testing.T{}, "fifo", "pack")
		s.w.mu.Lock()
		s.w.setClass(gpuClass())
		for i := range nodes {
			node := fmt.Sprintf("gpu-%04d", i)
			n, _ := stripNode(draNodeObj(node))
			s.w.setNode(n.(*v1.Node))
			var devs []resourceapi.Device
			for k := range 8 {
				devs = append(devs, gpuDevice(fmt.Sprintf("gpu-%d", k), "NVIDIA A100-SXM4-40GB", "40Gi"))
			}
			s.w.setSlice(mkSlice(node, DriverGPU, devs...))
		}
		for i := range pods {
			c := mkClaim(fmt.Sprintf("c-%04d", i), "gpu.nvidia.com", 1)
			s.w.setClaim(c)
			sp, _ := stripPod(mkPod(fmt.Sprintf("p-%04d", i), 0, withClaim(c.Name)))
			s.w.setPod(sp.(*v1.Pod), t0.Add(-time.Minute))
		}
		b.StartTimer()
		r := &round{s: s, w: s.w, now: t0, t: 0}
		r.run()
		s.w.mu.Unlock()
		if n := len(s.w.dra.inflight); n != pods {
			b.Fatalf("%d claims allocated, want %d", n, pods)
		}
	}
}
