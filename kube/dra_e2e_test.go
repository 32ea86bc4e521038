package kube_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpusched/gpusched/kube"
)

// TestDRA: GPUs from Dynamic Resource Allocation on the bed (kube-apiserver
// v1.36.1 serves resource.k8s.io/v1, kube-controller-manager runs the
// resourceclaim controller; no kube-scheduler, no DRA driver: the test
// publishes the kwok node's ResourceSlice as NVIDIA's driver would). One
// node with one GPU device and no nvidia.com/gpu:
//
//   - p1's claim c1 (one GPU of the test's DeviceClass) is allocated the
//     device, reserved for p1 with the delete-protection finalizer, and p1
//     bound to the node;
//   - p2's claim c2 for the same device waits, and p2's PodScheduled
//     condition names c2;
//   - p1 completes (kwok, after 8 s): the resourceclaim controller takes it
//     from c1's reservedFor and clears c1's allocation, and p2 is bound
//     with the device;
//   - p3's claim comes from a ResourceClaimTemplate: the controller makes
//     it and names it in p3's status; it waits for the device too, naming
//     the claim made for it, until p2 is deleted; then it is allocated and
//     p3 bound.
func TestDRA(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	node := e.name + "-0"
	e.node(node, "", 0, func(n *v1.Node) {
		delete(n.Labels, "nvidia.com/gpu.product")
		delete(n.Status.Capacity, "nvidia.com/gpu")
		delete(n.Status.Allocatable, "nvidia.com/gpu")
	})
	class := e.draClassAndSlice(node)
	e.claim(&resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: oneGPU(class)})
	e.claim(&resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c2"}, Spec: oneGPU(class)})
	tmpl := &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: e.name},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: oneGPU(class)}}
	if _, err := e.cs.ResourceV1().ResourceClaimTemplates(e.name).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.gpusched()

	p1 := e.claimPod("p1", "c1", "")
	p1.Annotations["pod-complete.stage.kwok.x-k8s.io/delay"] = "8s"
	e.create(p1)
	if got := e.waitBound("p1", 30*time.Second); got != node {
		t.Fatalf("p1 bound to %q", got)
	}
	e.checkClaim("c1", node, "p1")

	e.create(e.claimPod("p2", "c2", ""))
	e.eventually("p2 pending with a condition naming ResourceClaim c2", 20*time.Second, func() string {
		p := e.pod("p2")
		if p.Spec.NodeName != "" {
			return "p2 bound to " + p.Spec.NodeName + " while p1 holds the device"
		}
		if !strings.Contains(condition(p), "waiting for ResourceClaim "+e.name+"/c2: ") {
			return condition(p)
		}
		return ""
	})
	t.Logf("p2 waits: %s", condition(e.pod("p2")))

	// p1 completes; the resourceclaim controller releases c1.
	if got := e.waitBound("p2", 60*time.Second); got != node {
		t.Fatalf("p2 bound to %q", got)
	}
	if p := e.pod("p1"); p.Status.Phase != v1.PodSucceeded {
		t.Errorf("p2 bound while p1 is %s", p.Status.Phase)
	}
	c1, err := e.cs.ResourceV1().ResourceClaims(e.name).Get(ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c1.Status.Allocation != nil || len(c1.Status.ReservedFor) != 0 {
		t.Errorf("c1 still allocated or reserved after p1 completed: %+v", c1.Status)
	}
	e.checkClaim("c2", node, "p2")

	e.create(e.claimPod("p3", "", "gpu"))
	made := ""
	e.eventually("p3's claim made from the template and named in its pending condition", 30*time.Second, func() string {
		p := e.pod("p3")
		if p.Spec.NodeName != "" {
			return "p3 bound while p2 holds the device"
		}
		if len(p.Status.ResourceClaimStatuses) == 0 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return "no claim made yet"
		}
		made = *p.Status.ResourceClaimStatuses[0].ResourceClaimName
		if !strings.Contains(condition(p), "waiting for ResourceClaim "+e.name+"/"+made+": ") {
			return condition(p)
		}
		return ""
	})
	zero := int64(0)
	if err := e.cs.CoreV1().Pods(e.name).Delete(ctx, "p2", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if got := e.waitBound("p3", 60*time.Second); got != node {
		t.Fatalf("p3 bound to %q", got)
	}
	e.checkClaim(made, node, "p3")
}

// draClassAndSlice creates the test's DeviceClass (NVIDIA's selector) and
// node's ResourceSlice of one A100 as NVIDIA's DRA driver publishes it;
// the test's cleanup deletes both. It returns the class's name.
func (e *kenv) draClassAndSlice(node string) string {
	e.t.Helper()
	ctx := context.Background()
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: e.name + ".gpu.nvidia.com"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}}}}
	if _, err := e.cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	typ, product, uuid := "gpu", "NVIDIA A100-SXM4-40GB", "GPU-"+e.name
	slice := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com"},
		Spec: resourceapi.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: &node,
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourceapi.Device{{Name: "gpu-0",
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"type": {StringValue: &typ}, "productName": {StringValue: &product}, "uuid": {StringValue: &uuid}},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse("40Gi")}}}}}}
	if _, err := e.cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.cs.ResourceV1().ResourceSlices().Delete(ctx, slice.Name, metav1.DeleteOptions{})
		_ = e.cs.ResourceV1().DeviceClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
	})
	return class.Name
}

// oneGPU is a claim spec of one device of class.
func oneGPU(class string) resourceapi.ResourceClaimSpec {
	return resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu",
		Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class}}}}}
}

// claim creates a ResourceClaim in the test's namespace.
func (e *kenv) claim(c *resourceapi.ResourceClaim) {
	e.t.Helper()
	c.Namespace = e.name
	if _, err := e.cs.ResourceV1().ResourceClaims(e.name).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// claimPod is a pod of the test's scheduler whose container uses one
// claim: the named claim, else one from template.
func (e *kenv) claimPod(name, claim, template string) *v1.Pod {
	p := e.podSpec(name, 0)
	p.Spec.Containers[0].Resources = v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}
	pc := v1.PodResourceClaim{Name: "gpu"}
	if claim != "" {
		pc.ResourceClaimName = &claim
	} else {
		pc.ResourceClaimTemplateName = &template
	}
	p.Spec.ResourceClaims = []v1.PodResourceClaim{pc}
	return p
}

// checkClaim checks that claim name is allocated the node's device gpu-0,
// reserved for pod, with kube-scheduler's finalizer.
func (e *kenv) checkClaim(name, node, pod string) {
	e.t.Helper()
	c, err := e.cs.ResourceV1().ResourceClaims(e.name).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		e.t.Fatalf("claim %s does not exist", name)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	a := c.Status.Allocation
	var devs []string
	if a != nil {
		for _, r := range a.Devices.Results {
			devs = append(devs, fmt.Sprintf("%s/%s/%s for %s", r.Driver, r.Pool, r.Device, r.Request))
		}
	}
	want := fmt.Sprintf("gpu.nvidia.com/%s/gpu-0 for gpu", node)
	if len(devs) != 1 || devs[0] != want {
		e.t.Errorf("claim %s allocated %v, want [%s]", name, devs, want)
	}
	if len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].Name != pod || c.Status.ReservedFor[0].Resource != "pods" {
		e.t.Errorf("claim %s reserved for %+v, want pod %s", name, c.Status.ReservedFor, pod)
	}
	if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
		e.t.Errorf("claim %s has finalizers %v, want %s", name, c.Finalizers, resourceapi.Finalizer)
	}
	if a != nil && a.NodeSelector == nil {
		e.t.Errorf("claim %s: allocation without a node selector", name)
	}
}

// TestDRAClaimConflict: a claim another scheduler allocated and reserved
// after gpusched's round read it is not overwritten: gpusched's write
// (at the resource version the round saw) conflicts and is counted as
// claim_conflict; written against the claim as it is now, a claim
// allocated elsewhere is refused without a call. The world's side of the
// conflict (the pod placed again) is TestRoundDRAConflict.
func TestDRAClaimConflict(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	node := e.name + "-0"
	class := e.draClassAndSlice(node)
	e.claim(&resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: oneGPU(class)})
	api := e.cs.ResourceV1().ResourceClaims(e.name)
	seen, err := api.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alloc := &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.nvidia.com", Pool: node, Device: "gpu-0"}}}}
	// The other scheduler's pod (it must exist: the resourceclaim
	// controller takes gone pods from reservedFor).
	theirs := e.claimPod("theirs", "c", "")
	theirs.Spec.SchedulerName = "another-scheduler"
	created, err := e.cs.CoreV1().Pods(e.name).Create(ctx, theirs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The other scheduler: finalizer, then allocation and reservation.
	other := seen.DeepCopy()
	other.Finalizers = append(other.Finalizers, resourceapi.Finalizer)
	if other, err = api.Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	other.Status.Allocation = alloc
	other.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "theirs", UID: created.UID}}
	if other, err = api.UpdateStatus(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	result, err := kube.WriteClaimForTest(ctx, e.cs, seen, alloc, "ours", "uid-ours")
	if result != "claim_conflict" || !apierrors.IsConflict(err) {
		t.Errorf("write over a stale claim: result %q, err %v; want claim_conflict", result, err)
	}
	result, err = kube.WriteClaimForTest(ctx, e.cs, other, alloc, "ours", "uid-ours")
	if result != "claim_error" || err == nil || !strings.Contains(err.Error(), "allocated elsewhere") {
		t.Errorf("write over a claim allocated elsewhere: result %q, err %v", result, err)
	}
	now, err := api.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(now.Status.ReservedFor) != 1 || now.Status.ReservedFor[0].Name != "theirs" {
		t.Errorf("the other scheduler's reservation changed: %+v", now.Status.ReservedFor)
	}
}
