package kube_test

import (
	"context"
	"fmt"
	"strings"
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
)

// tasJob creates a suspended batch/v1 Job in LocalQueue queue of pods
// pods of gpus GPUs each, all required by Kueue's TAS on one node.
func (g *venv) tasJob(name, queue string, pods int32, gpus int) {
	g.t.Helper()
	yes := true
	pod := g.podSpec("", gpus)
	pod.Annotations[requiredTAS] = hostLabel
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.name, Labels: map[string]string{"kueue.x-k8s.io/queue-name": queue}},
		Spec: batchv1.JobSpec{Parallelism: &pods, Completions: &pods, Suspend: &yes,
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: pod.Annotations}, Spec: pod.Spec}}}
	if _, err := g.cs.BatchV1().Jobs(g.name).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		g.t.Fatalf("create TAS Job %s: %v", name, err)
	}
}

// gateWatch follows a Job's pods from their creation: it records which
// pods carried Kueue's topology gate and every pod seen bound while gated
// or bound off the node its nodeSelector names.
type gateWatch struct {
	mu     sync.Mutex
	gated  map[string]bool
	bound  map[string]bool
	breaks []string
}

// watchGates starts a gateWatch on the pods of Job job; the test's cleanup
// stops it.
func (g *venv) watchGates(job string) *gateWatch {
	g.t.Helper()
	w, err := g.cs.CoreV1().Pods(g.name).Watch(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		g.t.Fatalf("watch the pods of %s: %v", job, err)
	}
	gw := &gateWatch{gated: map[string]bool{}, bound: map[string]bool{}}
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
	switch {
	case p.Spec.NodeName == "":
	case len(p.Spec.SchedulingGates) > 0:
		gw.breaks = append(gw.breaks, fmt.Sprintf("%s on %s with gates %v", p.Name, p.Spec.NodeName, p.Spec.SchedulingGates))
	case p.Spec.NodeSelector[hostLabel] != p.Spec.NodeName:
		gw.breaks = append(gw.breaks, fmt.Sprintf("%s on %s, its nodeSelector %v", p.Name, p.Spec.NodeName, p.Spec.NodeSelector))
	}
}

// report returns how many pods the watch saw with the topology gate and
// bound, and the breaks.
func (gw *gateWatch) report() (gated, bound int, breaks []string) {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	return count(gw.gated), count(gw.bound), append([]string(nil), gw.breaks...)
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

// tasQueue creates a Topology (block, host), a ResourceFlavor of the
// test's nodes on it, a ClusterQueue of gpus GPUs of that flavour and a
// LocalQueue "lq" in the test's namespace; the test's cleanup deletes the
// cluster-scoped ones.
func (g *venv) tasQueue(gpus int64) {
	g.t.Helper()
	topo, flavor, cq := g.name+"-topo", g.name+"-tas", g.name+"-cq"
	g.kueueObject("topologies", "Topology", "", topo, map[string]any{
		"levels": []any{map[string]any{"nodeLabel": blockLabel}, map[string]any{"nodeLabel": hostLabel}}})
	g.kueueObject("resourceflavors", "ResourceFlavor", "", flavor, map[string]any{
		"nodeLabels": map[string]any{e2eLabel: g.name}, "topologyName": topo})
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
// kubernetes.io/hostname) on a TAS flavour of three 8-GPU nodes in two
// blocks. Kueue admits it, creates its pods with the gate
// kueue.x-k8s.io/topology, picks a host, then lifts the gate and injects a
// nodeSelector naming it. gpusched binds both pods only after the gate goes
// and only to that host (checked on every state a watch sees).
func TestKueueTAS(t *testing.T) {
	g := newDynEnv(t, newEnvOn(t, kueueShared))
	for _, n := range []struct{ name, block string }{{"a", "x"}, {"b", "x"}, {"c", "y"}} {
		name := g.name + "-" + n.name
		block := g.name + "-" + n.block
		g.node(name, "Tesla-V100-SXM2-16GB", 8, func(node *v1.Node) {
			node.Labels[hostLabel], node.Labels[blockLabel] = name, block
		})
	}
	g.gpusched()
	g.tasQueue(24)
	gw := g.watchGates("tas")
	g.tasJob("tas", "lq", 2, 4)

	g.eventually("TAS Job admitted and bound", 90*time.Second, func() string {
		nodes := g.batchJobNodes("tas")
		if _, bound, _ := gw.report(); bound != 2 || len(nodes) != 2 {
			return fmt.Sprintf("suspended %v, pods on %q (watched: %d bound)", g.suspended("tas"), nodes, bound)
		}
		return ""
	})
	nodes := g.batchJobNodes("tas")
	if nodes[0] != nodes[1] || !strings.HasPrefix(nodes[0], g.name+"-") {
		t.Errorf("pods on %q: TAS required one host of the test's", nodes)
	}
	gated, _, breaks := gw.report()
	if gated != 2 {
		t.Errorf("%d pods seen with the gate %s, want 2 (Kueue's TAS did not gate them)", gated, topologyGate)
	}
	for _, b := range breaks {
		t.Errorf("bound against TAS: %s", b)
	}
	t.Logf("TAS: both pods gated by %s, then bound to %s as Kueue's nodeSelector says", topologyGate, nodes[0])
}
