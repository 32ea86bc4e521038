package kube_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// The PodGroup APIs of the tests (kube/groups.go).
var (
	nativeGroups  = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1alpha2", Resource: "podgroups"}
	cosGroups     = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
	volcanoGroups = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
)

// newDynEnv adds a dynamic client (Volcano's objects, PodGroups, JobSets)
// to a test's share of a bed.
func newDynEnv(t *testing.T, e *kenv) *venv {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", e.bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &venv{kenv: e, dyn: dyn}
}

// applyCRD applies a CRD committed under testdata/crds and waits until it
// is Established.
func (g *venv) applyCRD(file, name string) {
	g.t.Helper()
	ctx := context.Background()
	if out, err := g.bed.Kubectl(ctx, "apply", "-f", "testdata/crds/"+file); err != nil {
		g.t.Fatalf("apply %s: %v\n%s", file, err, out)
	}
	if out, err := g.bed.Kubectl(ctx, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/"+name); err != nil {
		g.t.Fatalf("CRD %s: %v\n%s", name, err, out)
	}
}

// group creates a PodGroup of gvr with spec.
func (g *venv) group(gvr schema.GroupVersionResource, name string, spec map[string]any) {
	g.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "PodGroup",
		"metadata": map[string]any{"name": name, "namespace": g.name}, "spec": spec}}
	if _, err := g.dyn.Resource(gvr).Namespace(g.name).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		g.t.Fatal(err)
	}
}

// groupStatus returns a PodGroup's status as JSON.
func (g *venv) groupStatus(gvr schema.GroupVersionResource, name string) string {
	g.t.Helper()
	u, err := g.dyn.Resource(gvr).Namespace(g.name).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		g.t.Fatal(err)
	}
	b, _ := json.Marshal(u.Object["status"])
	return string(b)
}

// waitStatus waits until a PodGroup's status holds every fragment.
func (g *venv) waitStatus(gvr schema.GroupVersionResource, name string, fragments ...string) {
	g.t.Helper()
	g.eventually("PodGroup "+name+" status "+strings.Join(fragments, " "), 30*time.Second, func() string {
		st := g.groupStatus(gvr, name)
		for _, f := range fragments {
			if !strings.Contains(st, f) {
				return st
			}
		}
		return ""
	})
}

// member creates a pod of gpus GPUs that names its group with mod.
func (g *venv) member(name string, gpus int, mod func(*v1.Pod)) {
	g.t.Helper()
	p := g.podSpec(name, gpus)
	mod(p)
	g.create(p)
}

// waitEvent waits for a FailedScheduling Event on pod holding text.
func (g *venv) waitEvent(pod, text string) {
	g.t.Helper()
	g.eventually("an Event on "+pod+" saying "+text, 30*time.Second, func() string {
		if !g.hasEvent(pod, "FailedScheduling", text) {
			return fmt.Sprintf("events %v", eventTexts(g.events(pod)))
		}
		return ""
	})
}

func eventTexts(evs []v1.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Reason+": "+ev.Message)
	}
	return out
}

// unbound fails the test if any of pods is bound.
func (g *venv) unbound(pods ...string) {
	g.t.Helper()
	for _, name := range pods {
		if p := g.pod(name); p == nil || p.Spec.NodeName != "" {
			g.t.Fatalf("%s: bound or gone: %+v", name, p)
		}
	}
}

func nativeMember(group string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group} }
}

func cosMember(group string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Labels["scheduling.x-k8s.io/pod-group"] = group }
}

// TestPodGroups: on two 8-GPU nodes, Kubernetes' own PodGroup (gang
// minCount 2) and scheduler-plugins' PodGroup (minMember 3, its CRD from
// testdata) are gangs: their pods wait, with a FailedScheduling Event
// naming the PodGroup, until minimum members exist, then bind at once;
// the native group's PodGroupScheduled condition goes False
// (Unschedulable, the wait reason) then True (Scheduled), as
// kube-scheduler sets it, and the scheduler-plugins group's phase goes
// Pending then Running with its running count, as its controller sets it.
// Bad input binds nothing: a pod naming a group that does not exist, and
// a pod claimed by two groups (neither group binds).
func TestPodGroups(t *testing.T) {
	g := newDynEnv(t, newEnv(t))
	g.applyCRD("scheduling.x-k8s.io_podgroups.yaml", "podgroups.scheduling.x-k8s.io")
	g.node(g.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	g.node(g.name+"-b", "Tesla-V100-SXM2-16GB", 8)
	g.group(nativeGroups, "nat", map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": 2}}})
	g.group(cosGroups, "cos", map[string]any{"minMember": 3})
	g.gpusched()

	g.member("nat-0", 4, nativeMember("nat"))
	g.member("cos-0", 2, cosMember("cos"))
	g.member("cos-1", 2, cosMember("cos"))
	g.waitEvent("nat-0", "waiting for the gang: 1 of its 2 pods (PodGroup "+g.name+"/nat gang minCount 2) exist")
	g.waitEvent("cos-1", "waiting for the gang: 2 of its 3 pods (PodGroup "+g.name+"/cos minMember 3) exist")
	g.waitStatus(nativeGroups, "nat", `"reason":"Unschedulable"`, `"status":"False"`, `"type":"PodGroupScheduled"`, "waiting for the gang: 1 of its 2 pods")
	g.waitStatus(cosGroups, "cos", `"phase":"Pending"`)
	g.unbound("nat-0", "cos-0", "cos-1")

	g.member("nat-1", 4, nativeMember("nat"))
	g.member("cos-2", 2, cosMember("cos"))
	for _, name := range []string{"nat-0", "nat-1", "cos-0", "cos-1", "cos-2"} {
		g.waitBound(name, 30*time.Second)
	}
	g.waitStatus(nativeGroups, "nat", `"reason":"Scheduled"`, `"status":"True"`)
	g.waitStatus(cosGroups, "cos", `"phase":"Running"`, `"running":3`)

	// Bad input: a group that does not exist; a pod claimed by two groups.
	g.member("orphan", 1, cosMember("nosuch"))
	g.group(cosGroups, "dup-a", map[string]any{"minMember": 1})
	g.group(nativeGroups, "dup-b", map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": 1}}})
	g.member("dup-x", 1, func(p *v1.Pod) { cosMember("dup-a")(p); nativeMember("dup-b")(p) })
	g.waitEvent("orphan", "its pod group "+g.name+"/nosuch (scheduling.x-k8s.io, named by label scheduling.x-k8s.io/pod-group) does not exist")
	two := "pod dup-x names two pod groups: scheduling.k8s.io dup-b (spec.schedulingGroup.podGroupName) and scheduling.x-k8s.io dup-a (label scheduling.x-k8s.io/pod-group)"
	g.waitEvent("dup-x", two)
	// dup-a alone would bind (minMember 1): while dup-x is in doubt, it
	// does not.
	g.member("dup-a-0", 1, cosMember("dup-a"))
	g.waitEvent("dup-a-0", two)
	g.unbound("orphan", "dup-x", "dup-a-0")
}

func volcanoMember(group string, byLabel bool) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if byLabel {
			p.Labels["scheduling.volcano.sh/group-name"] = group
		} else {
			p.Annotations["scheduling.k8s.io/group-name"] = group
		}
	}
}

// TestVolcanoPodGroups: on the Volcano bed (its CRDs; no vc-scheduler),
// Volcano PodGroups named by annotation (MPI Operator, KubeRay) and by
// label (Kubeflow Trainer v2) are gangs of their minMember, and their
// status moves as vc-scheduler moves it: Inqueue with the gang plugin's
// Unschedulable condition (NotEnoughTasks while members are missing,
// NotEnoughResources while GPUs are), then Running with the Scheduled
// condition and the count of Running pods.
func TestVolcanoPodGroups(t *testing.T) {
	g := newDynEnv(t, newEnvOn(t, volcanoShared))
	g.node(g.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	g.node(g.name+"-b", "Tesla-V100-SXM2-16GB", 8)
	g.group(volcanoGroups, "vca", map[string]any{"minMember": 2, "queue": "default"})
	g.group(volcanoGroups, "vcl", map[string]any{"minMember": 2, "queue": "default"})
	g.gpusched()

	g.member("vca-0", 4, volcanoMember("vca", false))
	g.waitEvent("vca-0", "waiting for the gang: 1 of its 2 pods (PodGroup "+g.name+"/vca minMember 2) exist")
	g.waitStatus(volcanoGroups, "vca", `"phase":"Inqueue"`, `"reason":"NotEnoughTasks"`, `"type":"Unschedulable"`, "1/1 tasks in gang unschedulable")
	g.unbound("vca-0")
	g.member("vca-1", 4, volcanoMember("vca", false))
	g.waitBound("vca-0", 30*time.Second)
	g.waitBound("vca-1", 30*time.Second)
	g.waitStatus(volcanoGroups, "vca", `"phase":"Running"`, `"running":2`, `"type":"Scheduled"`, `"reason":"tasks in gang are ready to be scheduled"`)

	// Two pods of 8 GPUs: 8 GPUs are free, the gang needs 16.
	g.member("vcl-0", 8, volcanoMember("vcl", true))
	g.member("vcl-1", 8, volcanoMember("vcl", true))
	g.waitStatus(volcanoGroups, "vcl", `"phase":"Inqueue"`, `"reason":"NotEnoughResources"`, "2/2 tasks in gang unschedulable: waiting for free GPUs")
	g.unbound("vcl-0", "vcl-1")
	zero := int64(0)
	for _, name := range []string{"vca-0", "vca-1"} {
		if err := g.cs.CoreV1().Pods(g.name).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
	}
	g.waitBound("vcl-0", 30*time.Second)
	g.waitBound("vcl-1", 30*time.Second)
	g.waitStatus(volcanoGroups, "vcl", `"phase":"Running"`, `"running":2`)
}

// TestSchedulingGates: pods with scheduling gates (Kueue's
// kueue.x-k8s.io/admission) are never bound, and a gang waits for all of
// its gates; once the gates go, with a nodeSelector injected as Kueue's
// topology-aware scheduling injects one, the gang is bound, and only to
// the node it names.
func TestSchedulingGates(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b"} {
		host := e.name + "-" + n
		e.node(host, "Tesla-V100-SXM2-16GB", 8, func(node *v1.Node) { node.Labels["kubernetes.io/hostname"] = host })
	}
	e.gpusched()
	for _, name := range []string{"tas-0", "tas-1"} {
		p := e.podSpec(name, 2)
		p.Labels["gpusched.io/job"] = "tas"
		p.Annotations["gpusched.io/min-replicas"] = "2"
		p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}}
		e.create(p)
	}
	lift := func(name string) {
		t.Helper()
		patch := `[{"op":"remove","path":"/spec/schedulingGates"},{"op":"add","path":"/spec/nodeSelector","value":{"kubernetes.io/hostname":"` + e.name + `-b"}}]`
		if _, err := e.cs.CoreV1().Pods(e.name).Patch(context.Background(), name, "application/json-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Gated: the API server's SchedulingGated condition stays; no Binding.
	time.Sleep(3 * time.Second)
	for _, name := range []string{"tas-0", "tas-1"} {
		if p := e.pod(name); p.Spec.NodeName != "" || !strings.Contains(condition(p), "SchedulingGated") {
			t.Fatalf("%s: node %q, condition %s", name, p.Spec.NodeName, condition(p))
		}
	}
	lift("tas-0")
	e.eventually("tas-0 waiting for its gang's gates", 30*time.Second, func() string {
		if c := condition(e.pod("tas-0")); !strings.Contains(c, "waiting for its pods' scheduling gates to be removed: kueue.x-k8s.io/admission") {
			return c
		}
		return ""
	})
	if p := e.pod("tas-0"); p.Spec.NodeName != "" {
		t.Fatalf("tas-0 bound to %s while tas-1 is gated", p.Spec.NodeName)
	}
	lift("tas-1")
	for _, name := range []string{"tas-0", "tas-1"} {
		if node := e.waitBound(name, 30*time.Second); node != e.name+"-b" {
			t.Errorf("%s bound to %s, not to the node its selector names", name, node)
		}
	}
}

// TestKueuePodGroup: plain pods that Kueue's pod integration groups
// (label kueue.x-k8s.io/pod-group-name, annotation
// kueue.x-k8s.io/pod-group-total-count; Kueue itself does not run here:
// the test writes what it writes) are one gang of the total count: one
// pod waits, with a FailedScheduling Event, until the other exists, then
// both bind; a malformed count binds nothing and is named in an Event.
func TestKueuePodGroup(t *testing.T) {
	e := newEnv(t)
	e.node(e.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	e.gpusched()
	member := func(name, group, count string) {
		p := e.podSpec(name, 2)
		p.Labels["kueue.x-k8s.io/pod-group-name"] = group
		p.Annotations["kueue.x-k8s.io/pod-group-total-count"] = count
		e.create(p)
	}
	member("kq-0", "kq", "2")
	member("bad-0", "bad", "two")
	g := &venv{kenv: e}
	g.waitEvent("kq-0", "waiting for the gang: 1 of its 2 pods (kueue.x-k8s.io/pod-group-total-count) exist")
	g.waitEvent("bad-0", `annotation kueue.x-k8s.io/pod-group-total-count="two": want the group's number of pods`)
	g.unbound("kq-0", "bad-0")
	member("kq-1", "kq", "2")
	e.waitBound("kq-0", 30*time.Second)
	e.waitBound("kq-1", 30*time.Second)
	g.unbound("bad-0")
}
