package kube_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Kueue's topology-aware scheduling (TAS): the gate it puts on a TAS
// workload's pods, the annotation asking a topology level, and the node
// label of the bed's topology's upper level.
const (
	topologyGate = "kueue.x-k8s.io/topology"
	requiredTAS  = "kueue.x-k8s.io/podset-required-topology"
	hostLabel    = "kubernetes.io/hostname"
	blockLabel   = "gpusched.io/e2e-block"
	poolLabel    = "gpusched.io/e2e-tas"
)

// tasJob creates a batch/v1 Job in LocalQueue queue of pods pods of gpus
// GPUs each, all required by Kueue's TAS on one node. It is created
// unsuspended: it fails unless Kueue's mutating webhook suspends it.
func (g *venv) tasJob(name, queue string, pods int32, gpus int) {
	g.t.Helper()
	pod := g.podSpec("", gpus)
	pod.Annotations[requiredTAS] = hostLabel
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.name, Labels: map[string]string{"kueue.x-k8s.io/queue-name": queue}},
		Spec: batchv1.JobSpec{Parallelism: &pods, Completions: &pods,
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: pod.Annotations}, Spec: pod.Spec}}}
	created, err := g.cs.BatchV1().Jobs(g.name).Create(context.Background(), job, metav1.CreateOptions{})
	if err != nil {
		g.t.Fatalf("create TAS Job %s: %v", name, err)
	}
	if s := created.Spec.Suspend; s == nil || !*s {
		g.t.Fatalf("TAS Job %s created unsuspended: Kueue's Job webhook did not run", name)
	}
}

// gateWatch follows a Job's pods from their creation: it records which
// pods carried Kueue's topology gate and every pod seen bound while gated
// or bound off the node its nodeSelector names.
type gateWatch struct {
	mu     sync.Mutex
	gated  map[string]bool
	bound  map[string]bool
	breaks map[string]string // pod: its first break
}

// watchGates starts a gateWatch on the pods of Job job; the test's cleanup
// stops it.
func (g *venv) watchGates(job string) *gateWatch {
	g.t.Helper()
	w, err := g.cs.CoreV1().Pods(g.name).Watch(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		g.t.Fatalf("watch the pods of %s: %v", job, err)
	}
	gw := &gateWatch{gated: map[string]bool{}, bound: map[string]bool{}, breaks: map[string]string{}}
	g.t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && ev.Type != watch.Deleted {
				gw.see(p)
			}
		}
	}()
	return gw
}

// see records one state of a pod.
func (gw *gateWatch) see(p *v1.Pod) {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	gated := false
	for _, gate := range p.Spec.SchedulingGates {
		gated = gated || gate.Name == topologyGate
	}
	gw.gated[p.Name] = gw.gated[p.Name] || gated
	gw.bound[p.Name] = p.Spec.NodeName != ""
	if _, seen := gw.breaks[p.Name]; seen || p.Spec.NodeName == "" {
		return
	}
	if len(p.Spec.SchedulingGates) > 0 {
		gw.breaks[p.Name] = fmt.Sprintf("%s on %s with gates %v", p.Name, p.Spec.NodeName, p.Spec.SchedulingGates)
	} else if p.Spec.NodeSelector[hostLabel] != p.Spec.NodeName {
		gw.breaks[p.Name] = fmt.Sprintf("%s on %s, its nodeSelector %v", p.Name, p.Spec.NodeName, p.Spec.NodeSelector)
	}
}

// report returns how many pods the watch saw with the topology gate and
// bound, and the breaks.
func (gw *gateWatch) report() (gated, bound int, breaks []string) {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	for _, b := range gw.breaks {
		breaks = append(breaks, b)
	}
	sort.Strings(breaks)
	return count(gw.gated), count(gw.bound), breaks
}

// count returns how many values of m are true.
func count(m map[string]bool) int {
	n := 0
	for _, ok := range m {
		if ok {
			n++
		}
	}
	return n
}

// tasQueue creates a Topology (block, host), a ResourceFlavor on it of
// the test's nodes labelled poolLabel=true, a ClusterQueue of gpus GPUs of that flavour and a
// LocalQueue "lq" in the test's namespace; the test's cleanup deletes the
// cluster-scoped ones.
func (g *venv) tasQueue(gpus int64) {
	g.t.Helper()
	topo, flavor, cq := g.name+"-topo", g.name+"-tas", g.name+"-cq"
	g.kueueObject("topologies", "Topology", "", topo, map[string]any{
		"levels": []any{map[string]any{"nodeLabel": blockLabel}, map[string]any{"nodeLabel": hostLabel}}})
	g.kueueObject("resourceflavors", "ResourceFlavor", "", flavor, map[string]any{
		"nodeLabels": map[string]any{e2eLabel: g.name, poolLabel: "true"}, "topologyName": topo})
	g.kueueObject("clusterqueues", "ClusterQueue", "", cq, map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{"coveredResources": []any{"nvidia.com/gpu"},
			"flavors": []any{map[string]any{"name": flavor, "resources": []any{map[string]any{"name": "nvidia.com/gpu", "nominalQuota": gpus}}}}}}})
	g.kueueObject("localqueues", "LocalQueue", g.name, "lq", map[string]any{"clusterQueue": cq})
	g.t.Cleanup(func() {
		ctx := context.Background()
		for _, r := range []struct{ res, name string }{{"clusterqueues", cq}, {"resourceflavors", flavor}, {"topologies", topo}} {
			_ = g.dyn.Resource(schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: r.res}).
				Delete(ctx, r.name, metav1.DeleteOptions{})
		}
	})
}

// TestKueueTAS: Kueue's topology-aware scheduling, for real. A Job of 2
// pods of 4 GPUs requires one host (kueue.x-k8s.io/podset-required-topology:
// kubernetes.io/hostname) on a TAS flavour of two of three 8-GPU nodes,
// in two blocks, one of the two half taken by a pod outside Kueue. Kueue's webhook
// suspends the Job; Kueue admits it, creates its pods with the gate
// kueue.x-k8s.io/topology, picks a host, then lifts the gate and injects a
// nodeSelector naming it. gpusched binds both pods only after the gate goes
// and only to that host (checked on every state a watch sees).
func TestKueueTAS(t *testing.T) {
	g := newDynEnv(t, newEnvOn(t, kueueShared))
	for _, n := range []struct{ name, block, pool string }{{"a", "x", "true"}, {"b", "x", "false"}, {"c", "y", "true"}} {
		name := g.name + "-" + n.name
		block := g.name + "-" + n.block
		g.node(name, "Tesla-V100-SXM2-16GB", 8, func(node *v1.Node) {
			node.Labels[hostLabel], node.Labels[blockLabel], node.Labels[poolLabel] = name, block, n.pool
		})
	}
	g.gpusched()
	// A pod outside Kueue takes half of node a: of the flavour's nodes (a
	// and c) only c has room for both pods, which Kueue must see; gpusched
	// on its own would put them on b, the first empty node.
	fill := g.podSpec("fill", 4)
	fill.Spec.NodeSelector = map[string]string{hostLabel: g.name + "-a"}
	g.create(fill)
	g.waitBound("fill", 30*time.Second)
	g.tasQueue(24)
	gw := g.watchGates("tas")
	g.tasJob("tas", "lq", 2, 4)

	g.eventually("TAS Job admitted and bound", 90*time.Second, func() string {
		nodes := g.batchJobNodes("tas")
		_, bound, breaks := gw.report()
		if len(breaks) > 0 {
			t.Fatalf("bound against TAS: %q", breaks)
		}
		if bound != 2 || len(nodes) != 2 {
			return fmt.Sprintf("suspended %v, pods on %q (watched: %d bound)", g.suspended("tas"), nodes, bound)
		}
		return ""
	})
	nodes := g.batchJobNodes("tas")
	if want := g.name + "-c"; nodes[0] != want || nodes[1] != want {
		t.Errorf("pods on %q, want both on %s: the only host of the flavour with 8 free GPUs", nodes, want)
	}
	gated, _, breaks := gw.report()
	if gated != 2 {
		t.Errorf("%d pods seen with the gate %s, want 2 (Kueue's TAS did not gate them)", gated, topologyGate)
	}
	for _, b := range breaks {
		t.Errorf("bound against TAS: %s", b)
	}
	if !t.Failed() {
		t.Logf("TAS: both pods gated by %s, then bound to %s as Kueue's nodeSelector says", topologyGate, nodes[0])
	}
}
