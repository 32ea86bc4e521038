package kube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHetero: seed 003's placer on a K80 node (created first, its name
// sorting first) and a V100 node, one GPU each, under --placer hetero. A
// batch Job of A3C (V100/K80 speed ratio 2.1 in the throughput matrix)
// arrives first and gets the V100, the fastest free GPU. Then a pod of
// CycleGAN (ratio 8.8) arrives: both cannot have the V100, and the swap
// raises total normalised throughput, so gpusched moves the A3C job (its
// pod is deleted, the Job controller creates it again, and it is bound to
// the K80 it was moved to) and binds CycleGAN to the V100 once the A3C pod
// is gone — as the simulator's hetero placer decides.
func TestHetero(t *testing.T) {
	e := newEnv(t)
	k80, v100 := e.name+"-a-k80", e.name+"-b-v100"
	e.node(k80, "Tesla-K80", 1)
	e.node(v100, "Tesla-V100-SXM2-16GB", 1)
	e.gpusched("--placer", "hetero")
	ctx := context.Background()

	slow := e.batchJob("a3c", 1, 1, map[string]string{"gpusched.io/model": "A3C"})
	if _, err := e.cs.BatchV1().Jobs(e.name).Create(ctx, slow, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := ""
	e.eventually("the A3C job bound", 60*time.Second, func() string {
		for name, p := range e.jobPods("a3c") {
			if p.Spec.NodeName == "" {
				return name + " pending: " + condition(p)
			}
			if p.Spec.NodeName != v100 {
				t.Fatalf("A3C, alone, went to %s; the V100 is faster for it", p.Spec.NodeName)
			}
			first = name
			return ""
		}
		return "no pod"
	})

	fast := e.podSpec("cyclegan", 1)
	fast.Annotations["gpusched.io/model"] = "CycleGAN"
	e.create(fast)
	if node := e.waitBound("cyclegan", 90*time.Second); node != v100 {
		t.Fatalf("CycleGAN bound to %s, want the V100 node %s", node, v100)
	}
	e.eventually("the A3C job on the K80", 90*time.Second, func() string {
		pods := e.jobPods("a3c")
		for name, p := range pods {
			if name == first {
				return "the first A3C pod is still there"
			}
			if p.Spec.NodeName != k80 {
				return fmt.Sprintf("%s on %q", name, p.Spec.NodeName)
			}
			return ""
		}
		return "no pod"
	})
	if !e.hasEvent(first, "Preempted", "moved to other GPUs by the hetero placer (its pods start again on "+k80+")") {
		t.Errorf("no Preempted event saying why the A3C pod was moved: %+v", e.events(first))
	}
}
