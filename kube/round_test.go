package kube

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
)

// Scenario tests of rounds: a world fed with Node and Pod objects as the
// informers would feed it, one round, and the Bindings it decides (no API
// server: the workers that would make the calls do not run).

// testSched is a scheduler with no client, for rounds only.
func testSched(t *testing.T, policy, placer string, opts ...func(*recipe.Options)) *Scheduler {
	t.Helper()
	o := recipe.DefaultOptions()
	for _, f := range opts {
		f(&o)
	}
	s, err := New(nil, Config{Names: recipe.Names{Policy: policy, Placer: placer, Scaler: "none"}, Options: &o,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// t0 is the scenarios' clock.
var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

type nodeOpt func(*v1.Node)

func mkNode(name, product string, gpus int, opts ...nodeOpt) *v1.Node {
	q := resource.MustParse(fmt.Sprint(gpus))
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelProduct: product}}}
	n.Status.Allocatable = v1.ResourceList{ResourceGPU: q}
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	for _, o := range opts {
		o(n)
	}
	return n
}

type podOpt func(*v1.Pod)

func mkPod(name string, gpus int, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(t0), Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: DefaultSchedulerName, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{ResourceGPU: resource.MustParse(fmt.Sprint(gpus))}}}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func gang(job string, min int) podOpt {
	return func(p *v1.Pod) {
		p.Labels[LabelJob] = job
		p.Annotations[AnnMinReplicas] = fmt.Sprint(min)
	}
}

// feed gives the world nodes and pods (through the informers'
// transforms) and runs one round at now; it returns the pods bound, by
// pod name, and the round.
func feed(t *testing.T, s *Scheduler, now time.Time, objs ...any) (map[string]string, *round) {
	t.Helper()
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Node:
			n, _ := stripNode(o)
			s.w.setNode(n.(*v1.Node))
		case *v1.Pod:
			if o.Spec.SchedulerName != DefaultSchedulerName {
				f, _ := stripForeign(o)
				s.w.setForeign(f.(*v1.Pod))
				continue
			}
			p, _ := stripPod(o)
			s.w.setPod(p.(*v1.Pod), now.Add(-time.Minute))
		}
	}
	r := &round{s: s, w: s.w, now: now, t: model.Time(now.UnixMilli())}
	r.run()
	if r.cluster != nil {
		s.prevCluster = r.cluster
	}
	bound := map[string]string{}
	for _, b := range r.work.binds {
		for _, p := range b.pods {
			bound[p.name] = p.node
		}
	}
	return bound, r
}

// reasonOf returns the wait reason queued for pod name's condition.
func reasonOf(r *round, name string) string {
	for _, st := range r.work.status {
		if st.name == name {
			return st.why
		}
	}
	return ""
}

func TestRoundConstraints(t *testing.T) {
	dedicated := func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
	}
	tolerates := func(p *v1.Pod) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "x", Effect: v1.TaintEffectNoSchedule}}
	}
	pool := func(v string) nodeOpt { return func(n *v1.Node) { n.Labels["pool"] = v } }
	selects := func(v string) podOpt { return func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"pool": v} } }
	affine := func(vals ...string) podOpt {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: vals}}}}}}}
		}
	}
	notReady := func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }
	cordoned := func(n *v1.Node) { n.Spec.Unschedulable = true }
	foreign := func(node string) podOpt {
		return func(p *v1.Pod) { p.Spec.SchedulerName, p.Spec.NodeName = "default-scheduler", node }
	}
	v100 := "Tesla-V100-SXM2-16GB"
	tests := []struct {
		name   string
		objs   []any
		bound  map[string]string
		reason map[string]string
	}{
		{"a taint keeps pods that do not tolerate it away",
			[]any{mkNode("a", v100, 8, dedicated), mkNode("b", v100, 8), mkPod("p", 8), mkPod("q", 8, tolerates)},
			map[string]string{"p": "b", "q": "a"}, nil},
		{"node selector and required node affinity",
			[]any{mkNode("a", v100, 8, pool("x")), mkNode("b", v100, 8, pool("y")), mkPod("p", 4, selects("y")), mkPod("q", 4, affine("x", "z"))},
			map[string]string{"p": "b", "q": "a"}, nil},
		{"no node accepts the pod",
			[]any{mkNode("a", v100, 8, pool("x")), mkPod("p", 4, selects("y"))},
			map[string]string{}, map[string]string{"p": engine.WaitNeverFits + ": no Ready node with nvidia.com/gpu accepts its pods (node selector, node affinity or taints)"}},
		{"other schedulers' pods hold GPUs",
			[]any{mkNode("a", v100, 8), mkNode("b", v100, 8), mkPod("other", 6, foreign("a")), mkPod("p", 4)},
			map[string]string{"p": "b"}, nil},
		{"not Ready and cordoned nodes are not used",
			[]any{mkNode("a", v100, 8, notReady), mkNode("b", v100, 8, cordoned), mkPod("p", 1)},
			map[string]string{}, map[string]string{"p": waitNoNodes}},
		{"pods are whole: 6 and 2 free GPUs do not hold two pods of 4",
			[]any{mkNode("a", v100, 8), mkNode("b", v100, 8), mkPod("o1", 2, foreign("a")), mkPod("o2", 6, foreign("b")),
				mkPod("g-0", 4, gang("g", 2)), mkPod("g-1", 4, gang("g", 2))},
			map[string]string{}, map[string]string{"g-0": engine.WaitBlocked, "g-1": engine.WaitBlocked}},
		{"a gang is placed pod by pod on whole nodes",
			[]any{mkNode("a", v100, 8), mkNode("b", v100, 8), mkPod("o1", 2, foreign("a")), mkPod("o2", 2, foreign("b")),
				mkPod("g-0", 4, gang("g", 2)), mkPod("g-1", 4, gang("g", 2))},
			map[string]string{"g-0": "a", "g-1": "b"}, nil},
		{"incomplete gang",
			[]any{mkNode("a", v100, 8), mkPod("g-0", 4, gang("g", 3)), mkPod("g-1", 4, gang("g", 3))},
			map[string]string{}, map[string]string{"g-0": "waiting for the gang: 2 of its 3 pods (gpusched.io/min-replicas) exist"}},
		{"a gang larger than the nodes can ever hold",
			[]any{mkNode("a", v100, 8), mkNode("b", v100, 8), mkPod("g-0", 8, gang("g", 3)), mkPod("g-1", 8, gang("g", 3)), mkPod("g-2", 8, gang("g", 3))},
			map[string]string{}, map[string]string{"g-0": engine.WaitNeverFits + ": its gang of 3 pods of 8 GPUs does not fit the nodes it may use (room for 2 such pods)"}},
		{"pods of one job that ask for different GPUs",
			[]any{mkNode("a", v100, 8), mkPod("g-0", 4, gang("g", 2)), mkPod("g-1", 2, gang("g", 2))},
			map[string]string{}, map[string]string{"g-1": "its pods ask for different numbers of nvidia.com/gpu: g-0 4, g-1 2; a job's pods must be alike"}},
		{"a GPU type the cluster lacks",
			[]any{mkNode("a", v100, 8), mkPod("p", 1, func(p *v1.Pod) { p.Annotations[AnnGPUType] = "Tesla-K80" })},
			map[string]string{}, map[string]string{"p": engine.WaitNeverFits + ": no Ready node with GPU type k80 (gpusched.io/gpu-type) accepts its pods"}},
		{"a GPU type by product name",
			[]any{mkNode("a", "Tesla-K80", 8), mkNode("b", v100, 8), mkPod("p", 1, func(p *v1.Pod) { p.Annotations[AnnGPUType] = "V100" })},
			map[string]string{"p": "b"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSched(t, "fifo", "pack")
			bound, r := feed(t, s, t0, tc.objs...)
			checkRound(t, bound, r, tc.bound, tc.reason)
		})
	}
}

// TestRoundUnknownProduct: a product outside the catalog is its own type,
// with the memory its nodes label; a MIG slice is not its GPU.
func TestRoundUnknownProduct(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	mem := func(m string) nodeOpt { return func(n *v1.Node) { n.Labels[LabelMemory] = m } }
	_, r := feed(t, s, t0, mkNode("a", "NVIDIA-GeForce-RTX-4090", 8, mem("24564")), mkNode("b", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 7, mem("4864")),
		mkNode("c", "NVIDIA-A100-SXM4-80GB", 8, mem("81920")), mkPod("p", 1))
	var got []string
	for _, ty := range r.cluster.Types {
		got = append(got, fmt.Sprintf("%s:%d:%g", ty.Name, ty.MemMiB, ty.TFLOPS))
	}
	want := "rtx-4090:24564:1 nvidia-a100-sxm4-40gb-mig-1g-5gb:4864:1 a100-80:81920:19.5"
	if strings.Join(got, " ") != want {
		t.Errorf("types %v, want %s", got, want)
	}
	if !s.warned["product NVIDIA-GeForce-RTX-4090"] || s.warned["product NVIDIA-A100-SXM4-80GB"] {
		t.Errorf("warnings: %v", s.warned)
	}
}

// TestRoundPreemptReserves: under tiresias, a newcomer preempts the
// running job; its start waits for the victim's pods (a reservation that
// keeps it out of the engine, so nothing else is stopped for it), and it
// is bound in the round after they are gone.
func TestRoundPreemptReserves(t *testing.T) {
	s := testSched(t, "tiresias", "pack", func(o *recipe.Options) { o.TiresiasThresholds = []float64{1} })
	old := mkPod("old", 8, func(p *v1.Pod) { p.Spec.NodeName = "a" })
	_, _ = feed(t, s, t0, mkNode("a", "Tesla-V100-SXM2-16GB", 8), old)
	bound, r := feed(t, s, t0.Add(10*time.Second), mkPod("new", 8))
	if len(bound) != 0 || len(r.work.deletes) != 1 || r.work.deletes[0].name != "old" {
		t.Fatalf("round 2: bound %v, deletes %+v", bound, r.work.deletes)
	}
	if got := reasonOf(r, "new"); got != engine.WaitHeld {
		t.Errorf("the newcomer waits for %q", got)
	}
	// The victim is terminating: the newcomer keeps waiting, nothing more
	// is deleted.
	term := old.DeepCopy()
	term.DeletionTimestamp = &metav1.Time{Time: t0.Add(11 * time.Second)}
	bound, r = feed(t, s, t0.Add(12*time.Second), term)
	if len(bound) != 0 || len(r.work.deletes) != 0 {
		t.Fatalf("round 3: bound %v, deletes %+v", bound, r.work.deletes)
	}
	s.w.mu.Lock()
	s.w.deletePod("old", t0.Add(13*time.Second))
	s.w.mu.Unlock()
	bound, _ = feed(t, s, t0.Add(14*time.Second))
	if bound["new"] != "a" {
		t.Fatalf("round 4: bound %v", bound)
	}
}

// checkRound fails t unless the round bound exactly the pods of wantBound,
// each to its node, and the pods of wantReason wait with those reasons.
func checkRound(t *testing.T, bound map[string]string, r *round, wantBound, wantReason map[string]string) {
	t.Helper()
	for pod, node := range wantBound {
		if bound[pod] != node {
			t.Errorf("%s bound to %q, want %q (bound: %v)", pod, bound[pod], node, bound)
		}
	}
	if len(bound) != len(wantBound) {
		t.Errorf("bound %v, want %v", bound, wantBound)
	}
	for pod, want := range wantReason {
		if got := reasonOf(r, pod); got != want {
			t.Errorf("%s waits for %q, want %q", pod, got, want)
		}
	}
}
