package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeResourcesFit: issue 26's case on the bed, as kube-scheduler's
// NodeResourcesFit decides it. A node with 4 GPUs and 4 CPUs receives three
// 1-GPU pods that each request 2 CPUs: exactly 2 are bound, the third
// stays pending with a PodScheduled=False condition that names cpu. The
// same for memory (8Gi, 4Gi per pod) and for the node's pod limit
// (allocatable pods 2). One gpusched runs the cases one after the other,
// each on its own node (the pods select it); a case's pods are deleted
// before the next, so that its waiting pod is not ahead of the next case's
// in fifo's queue.
func TestNodeResourcesFit(t *testing.T) {
	e := newEnv(t)
	e.gpusched()
	for _, tc := range []struct {
		res   string
		alloc v1.ResourceList // of the node, besides its 4 GPUs
		req   v1.ResourceList // of each pod, besides its GPU
	}{
		{"cpu", v1.ResourceList{"cpu": resource.MustParse("4")}, v1.ResourceList{"cpu": resource.MustParse("2")}},
		{"memory", v1.ResourceList{"memory": resource.MustParse("8Gi")}, v1.ResourceList{"memory": resource.MustParse("4Gi")}},
		{"pods", v1.ResourceList{"pods": resource.MustParse("2")}, nil},
	} {
		node := e.name + "-" + tc.res
		e.node(node, "Tesla-V100-SXM2-16GB", 4, func(n *v1.Node) {
			n.Labels["fit"] = tc.res
			for k, q := range tc.alloc {
				n.Status.Capacity[k], n.Status.Allocatable[k] = q, q
			}
		})
		var names []string
		for i := range 3 {
			p := e.podSpec(fmt.Sprintf("%s-%d", tc.res, i), 1)
			p.Spec.NodeSelector = map[string]string{"fit": tc.res}
			p.Spec.Containers[0].Resources.Requests = tc.req
			e.create(p)
			names = append(names, p.Name)
		}
		e.eventually(tc.res+": 2 of the 3 pods bound, the third pending with a condition naming "+tc.res, 60*time.Second, func() string {
			return e.twoOfThree(names, tc.res)
		})
		// No third pod is bound later: the two hold the node's tc.res.
		time.Sleep(2 * time.Second)
		if state := e.twoOfThree(names, tc.res); state != "" {
			t.Fatalf("%s: after 2 s more: %s", tc.res, state)
		}
		zero := int64(0)
		for _, name := range names {
			if err := e.cs.CoreV1().Pods(e.name).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// twoOfThree returns "" when exactly two of the pods are bound and the
// third pending with a PodScheduled=False condition whose message names
// res, else what it sees.
func (e *kenv) twoOfThree(names []string, res string) string {
	var bound []string
	var pending *v1.Pod
	for _, name := range names {
		p := e.pod(name)
		if p == nil {
			return "no pod " + name
		}
		if p.Spec.NodeName != "" {
			bound = append(bound, name)
		} else {
			pending = p
		}
	}
	if len(bound) != 2 || pending == nil {
		return fmt.Sprintf("bound %v", bound)
	}
	for _, c := range pending.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable &&
			strings.Contains(c.Message, "not enough free "+res) {
			return ""
		}
	}
	return "bound " + strings.Join(bound, ",") + "; " + pending.Name + ": " + condition(pending)
}
