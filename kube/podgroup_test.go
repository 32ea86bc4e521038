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

// genv is a test's share of a bed with a dynamic client for PodGroups.
type genv struct {
	*kenv
	dyn dynamic.Interface
}

func newGroupEnv(t *testing.T, e *kenv) *genv {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", e.bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &genv{kenv: e, dyn: dyn}
}

// applyCRD applies a CRD committed under testdata/crds and waits until it
// is Established.
func (g *genv) applyCRD(file, name string) {
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
func (g *genv) group(gvr schema.GroupVersionResource, name string, spec map[string]any) {
	g.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "PodGroup",
		"metadata": map[string]any{"name": name, "namespace": g.name}, "spec": spec}}
	if _, err := g.dyn.Resource(gvr).Namespace(g.name).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		g.t.Fatal(err)
	}
}

// groupStatus returns a PodGroup's status as JSON.
func (g *genv) groupStatus(gvr schema.GroupVersionResource, name string) string {
	g.t.Helper()
	u, err := g.dyn.Resource(gvr).Namespace(g.name).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		g.t.Fatal(err)
	}
	b, _ := json.Marshal(u.Object["status"])
	return string(b)
}

// waitStatus waits until a PodGroup's status holds every fragment.
func (g *genv) waitStatus(gvr schema.GroupVersionResource, name string, fragments ...string) {
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
func (g *genv) member(name string, gpus int, mod func(*v1.Pod)) {
	g.t.Helper()
	p := g.podSpec(name, gpus)
	mod(p)
	g.create(p)
}

// waitEvent waits for a FailedScheduling Event on pod holding text.
func (g *genv) waitEvent(pod, text string) {
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
func (g *genv) unbound(pods ...string) {
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
	g := newGroupEnv(t, newEnv(t))
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
