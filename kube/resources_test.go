package kube

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
)

// rl builds a resource list from name, quantity pairs.
func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// ctr is a container that requests kv.
func ctr(name string, kv ...string) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: rl(kv...)}}
}

// sidecar is an init container that keeps running (restartPolicy Always).
func sidecar(name string, kv ...string) v1.Container {
	c, always := ctr(name, kv...), v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// TestPodRequests: a pod asks for the sum of its containers, or its
// largest init container (with the sidecars started before it) when that
// is larger, plus its overhead, per resource; its sidecars run beside its
// containers; pod-level requests replace the containers' sum; a running
// pod whose resize allocated more counts the more. The GPUs are not among
// the other requests. The informers' transforms keep what it takes.
func TestPodRequests(t *testing.T) {
	gi := int64(1) << 30
	for _, tc := range []struct {
		name string
		spec v1.PodSpec
		stat func(*v1.PodStatus)
		want model.Resources
	}{
		{"containers add up", v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1", "memory", "1Gi", ResourceGPU.String(), "1"), ctr("b", "cpu", "500m")}},
			nil, model.Resources{"cpu": 1500, "memory": gi}},
		{"a larger init container", v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1", "memory", "1Gi")},
			InitContainers: []v1.Container{ctr("i1", "cpu", "3"), ctr("i2", "memory", "512Mi")}},
			nil, model.Resources{"cpu": 3000, "memory": gi}},
		{"overhead", v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1")}, Overhead: rl("cpu", "250m", "memory", "64Mi")},
			nil, model.Resources{"cpu": 1250, "memory": 64 << 20}},
		{"a sidecar runs beside the containers and the later init containers",
			v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1")}, InitContainers: []v1.Container{sidecar("s", "cpu", "1"), ctr("i", "cpu", "2")}},
			nil, model.Resources{"cpu": 3000}},
		{"a sidecar started after an init container",
			v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1")}, InitContainers: []v1.Container{ctr("i", "cpu", "2"), sidecar("s", "cpu", "1")}},
			nil, model.Resources{"cpu": 2000}},
		{"extended resources and storage", v1.PodSpec{Containers: []v1.Container{ctr("a", "rdma/hca", "2", "ephemeral-storage", "10Gi", "hugepages-2Mi", "4Mi")}},
			nil, model.Resources{"rdma/hca": 2, "ephemeral-storage": 10 * gi, "hugepages-2Mi": 4 << 20}},
		{"pod-level requests", v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1"), ctr("b", "cpu", "1")},
			Resources: &v1.ResourceRequirements{Requests: rl("cpu", "4")}},
			nil, model.Resources{"cpu": 4000}},
		{"a resize allocated more", v1.PodSpec{Containers: []v1.Container{ctr("a", "cpu", "1")}},
			func(s *v1.PodStatus) {
				s.ContainerStatuses = []v1.ContainerStatus{{Name: "a", AllocatedResources: rl("cpu", "2"), Resources: &v1.ResourceRequirements{Requests: rl("cpu", "2")}}}
			}, model.Resources{"cpu": 2000}},
		{"GPUs only", v1.PodSpec{Containers: []v1.Container{ctr("a", ResourceGPU.String(), "2")}}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mkPod("p", 1)
			p.Spec.Containers, p.Spec.InitContainers, p.Spec.Overhead, p.Spec.Resources = tc.spec.Containers, tc.spec.InitContainers, tc.spec.Overhead, tc.spec.Resources
			if tc.stat != nil {
				tc.stat(&p.Status)
			}
			if got := podRequests(p); !got.Equal(tc.want) {
				t.Errorf("podRequests = %v, want %v", got, tc.want)
			}
			ours, _ := stripPod(p)
			if got := newPodInfo(ours.(*v1.Pod)).req; !got.Equal(tc.want) {
				t.Errorf("after stripPod: %v, want %v", got, tc.want)
			}
			p.Spec.NodeName = "a"
			other, _ := stripForeign(p)
			w := newWorld()
			w.setForeign(other.(*v1.Pod))
			if got := w.foreign[p.UID].req; !got.Equal(tc.want) {
				t.Errorf("after stripForeign: %v, want %v", got, tc.want)
			}
		})
	}
}

// node and pod options of the resource scenarios.
func allocates(kv ...string) nodeOpt {
	return func(n *v1.Node) {
		for k, q := range rl(kv...) {
			n.Status.Allocatable[k] = q
		}
	}
}

func requests(kv ...string) podOpt {
	return func(p *v1.Pod) {
		for k, q := range rl(kv...) {
			p.Spec.Containers[0].Resources.Requests[k] = q
		}
	}
}

func onNode(node string) podOpt { return func(p *v1.Pod) { p.Spec.NodeName = node } }

func otherScheduler(node string) podOpt {
	return func(p *v1.Pod) { p.Spec.SchedulerName, p.Spec.NodeName = "default-scheduler", node }
}

func phase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }

func terminating(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }

// TestCapacities: a node's capacity is its allocatable less what every pod
// bound there asks (one pod each), save gpusched's running jobs, which the
// state charges: other schedulers' pods (GPU or not), gpusched's
// terminating pods; not pods that succeeded or failed, nor unbound ones.
func TestCapacities(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	v100 := "Tesla-V100-SXM2-16GB"
	_, r := feed(t, s, t0,
		mkNode("a", v100, 8, allocates("cpu", "16", "memory", "64Gi", "pods", "10", "rdma/hca", "4")),
		mkNode("b", v100, 8, allocates("cpu", "16", "pods", "10")),
		mkPod("ds", 0, otherScheduler("a"), requests("cpu", "500m", "memory", "1Gi")),
		mkPod("other-gpu", 2, otherScheduler("a"), requests("cpu", "2", "rdma/hca", "1")),
		mkPod("done", 0, otherScheduler("a"), requests("cpu", "4"), phase(v1.PodSucceeded)),
		mkPod("failed", 0, otherScheduler("a"), requests("cpu", "4"), phase(v1.PodFailed)),
		mkPod("unbound", 0, otherScheduler(""), requests("cpu", "4")),
		mkPod("ours-running", 1, onNode("a"), requests("cpu", "3", "memory", "8Gi")),
		mkPod("ours-leaving", 1, onNode("a"), requests("cpu", "1"), terminating))
	c := r.cluster
	a, b := c.Nodes[0], c.Nodes[1]
	gi := int64(1) << 30
	want := model.Resources{"cpu": 16000 - 500 - 2000 - 1000, "memory": 64*gi - gi, "pods": 10 - 3, "rdma/hca": 3}
	if a.Name != "a" || !a.Capacity.Equal(want) {
		t.Errorf("node a: %s %v, want %v", a.Name, a.Capacity, want)
	}
	if a.GPUs != 8-2-1 {
		t.Errorf("node a: %d GPUs for gpusched, want 5", a.GPUs)
	}
	if !b.Capacity.Equal(model.Resources{"cpu": 16000, "pods": 10}) {
		t.Errorf("node b: %v", b.Capacity)
	}
	used := map[string]int64{}
	for i, name := range c.Resources() {
		used[name] = r.state.Used(0)[i]
	}
	if want := (map[string]int64{"cpu": 3000, "memory": 8 * gi, "pods": 1}); !model.Resources(used).Equal(want) {
		t.Errorf("node a: used %v, want %v", used, want)
	}
}

// TestRoundResources: three 1-GPU pods that each ask for half of what a
// 4-GPU node has of cpu, memory or pods: two are bound, the third waits
// for the resource, named in its reason; a pod that asks more than any
// node offers never fits; other schedulers' pods take their share.
func TestRoundResources(t *testing.T) {
	v100 := "Tesla-V100-SXM2-16GB"
	three := func(node nodeOpt, req podOpt) []any {
		return []any{mkNode("a", v100, 4, node), mkPod("p0", 1, req), mkPod("p1", 1, req), mkPod("p2", 1, req)}
	}
	for _, tc := range []struct {
		name   string
		objs   []any
		bound  int
		reason string // of the pods left
	}{
		{"cpu", three(allocates("cpu", "4", "memory", "64Gi", "pods", "110"), requests("cpu", "2")), 2,
			"waiting for free cpu: not enough free cpu on the nodes with free GPUs of a feasible type"},
		{"memory", three(allocates("cpu", "64", "memory", "8Gi", "pods", "110"), requests("memory", "4Gi")), 2,
			"waiting for free memory: not enough free memory on the nodes with free GPUs of a feasible type"},
		{"pods", three(allocates("cpu", "64", "memory", "64Gi", "pods", "2"), requests()), 2,
			"waiting for free pods: not enough free pods on the nodes with free GPUs of a feasible type"},
		{"an extended resource", three(allocates("rdma/hca", "1"), requests("rdma/hca", "1")), 1,
			"waiting for free rdma/hca: not enough free rdma/hca on the nodes with free GPUs of a feasible type"},
		{"a DaemonSet's pod takes its share", append(three(allocates("cpu", "4"), requests("cpu", "2")),
			mkPod("ds", 0, otherScheduler("a"), requests("cpu", "100m"))), 1, "not enough free cpu"},
		{"more than any node offers", three(allocates("cpu", "4"), requests("cpu", "6")), 0,
			engine.WaitNeverFits + ": each of its pods asks for 6 of cpu, and the nodes it may use offer at most 4"},
		{"a resource no node offers", three(allocates("cpu", "4"), requests("example.com/fpga", "1")), 0,
			engine.WaitNeverFits + ": each of its pods asks for 1 of example.com/fpga, and the nodes it may use offer at most 0"},
		{"nodes without other resources are not limited by them", three(func(*v1.Node) {}, requests("cpu", "2")), 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSched(t, "fifo", "pack")
			bound, r := feed(t, s, t0, tc.objs...)
			if len(bound) != tc.bound {
				t.Fatalf("bound %v, want %d pods", bound, tc.bound)
			}
			// The first pod left waits for the resource; under fifo, those
			// behind it wait behind it.
			first := true
			for _, name := range []string{"p0", "p1", "p2"} {
				if _, ok := bound[name]; ok {
					continue
				}
				got := reasonOf(r, name)
				if !strings.Contains(got, tc.reason) && (first || got != engine.WaitBehind) {
					t.Errorf("%s waits for %q, want %q", name, got, tc.reason)
				}
				first = false
			}
		})
	}
}

// TestRoundResourcesPreempt: under tiresias, a newcomer preempts the
// running job; its reserved start waits for the victim's terminating pod,
// which holds its cpu and GPUs, and is bound once the pod is gone, its cpu
// free again.
func TestRoundResourcesPreempt(t *testing.T) {
	s := testSched(t, "tiresias", "pack", func(o *recipe.Options) { o.TiresiasThresholds = []float64{1} })
	node := mkNode("a", "Tesla-V100-SXM2-16GB", 8, allocates("cpu", "8"))
	old := mkPod("old", 8, onNode("a"), requests("cpu", "6"))
	_, _ = feed(t, s, t0, node, old)
	bound, r := feed(t, s, t0.Add(10*time.Second), mkPod("new", 8, requests("cpu", "6")))
	if len(bound) != 0 || len(r.work.deletes) != 1 || r.work.deletes[0].name != "old" {
		t.Fatalf("round 2: bound %v, deletes %+v", bound, r.work.deletes)
	}
	term := old.DeepCopy()
	term.DeletionTimestamp = &metav1.Time{Time: t0.Add(11 * time.Second)}
	bound, r = feed(t, s, t0.Add(12*time.Second), term)
	if len(bound) != 0 || len(r.work.deletes) != 0 {
		t.Fatalf("round 3 (victim terminating): bound %v, deletes %+v", bound, r.work.deletes)
	}
	s.w.mu.Lock()
	s.w.deletePod("old", t0.Add(13*time.Second))
	s.w.mu.Unlock()
	if bound, r = feed(t, s, t0.Add(14*time.Second)); bound["new"] != "a" {
		t.Fatalf("round 4: bound %v, new waits for %q", bound, reasonOf(r, "new"))
	}
	if used := r.state.Used(0)[r.cluster.ResourceIndex("cpu")]; used != 6000 {
		t.Errorf("cpu used on a after the start: %d, want 6000", used)
	}
}

// TestRoundRefillRoom: a running job's replacement pod goes to a node
// with room for its cpu: not to the node its job runs on, whose cpu
// another scheduler's pod took meanwhile, though its GPUs fit best there.
func TestRoundRefillRoom(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	v100 := "Tesla-V100-SXM2-16GB"
	g0 := mkPod("g-0", 1, gang("g", 2), onNode("a"), requests("cpu", "3"))
	g1 := mkPod("g-1", 1, gang("g", 2), onNode("a"), requests("cpu", "3"))
	_, _ = feed(t, s, t0, mkNode("a", v100, 8, allocates("cpu", "8")), mkNode("b", v100, 8, allocates("cpu", "8")), g0, g1)
	s.w.mu.Lock()
	s.w.deletePod("g-1", t0.Add(time.Second))
	s.w.mu.Unlock()
	bound, r := feed(t, s, t0.Add(2*time.Second), mkPod("ds", 0, otherScheduler("a"), requests("cpu", "4")),
		mkPod("g-2", 1, gang("g", 2), requests("cpu", "3")))
	if bound["g-2"] != "b" {
		t.Fatalf("the replacement bound %v, want on b (waits for %q)", bound, reasonOf(r, "g-2"))
	}
}
