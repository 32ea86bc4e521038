package kube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

// jobsetShared is a bed with the real JobSet controller and webhooks
// (scripts/testbed --jobset).
var jobsetShared = kubebed.NewShared(kubebed.Options{JobSet: true})

var jobSets = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

// jobSet returns a JobSet of the test's scheduler: replicated jobs a and b,
// one Job each of pods pods (parallelism and completions) asking gpus
// GPUs.
func (g *venv) jobSet(name string, pods, gpus int) *unstructured.Unstructured {
	rj := func(n string) map[string]any {
		return map[string]any{"name": n, "replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"parallelism": int64(pods), "completions": int64(pods),
			"template": map[string]any{"spec": map[string]any{"schedulerName": g.name, "restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "train", "image": "train:latest",
					"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}}}}}}}}}
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"name": name, "namespace": g.name},
		"spec":     map[string]any{"replicatedJobs": []any{rj("a"), rj("b")}}}}
}

// TestJobSet: with the real JobSet controller, a JobSet of two replicated
// jobs of 4 pods of 2 GPUs each (16 GPUs) whose pods name gpusched is one
// gang: on one 8-GPU node nothing of it binds, and its pods say why (a
// FailedScheduling Event); once a second node comes, all 8 pods, of both
// replicated jobs, are bound together.
func TestJobSet(t *testing.T) {
	g := newDynEnv(t, newEnvOn(t, jobsetShared))
	g.node(g.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	g.gpusched()
	ctx := context.Background()
	if _, err := g.dyn.Resource(jobSets).Namespace(g.name).Create(ctx, g.jobSet("train", 4, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	g.eventually("the JobSet controller's 8 pods", 60*time.Second, func() string {
		list, err := g.cs.CoreV1().Pods(g.name).List(ctx, metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name=train"})
		if err != nil {
			return err.Error()
		}
		names = names[:0]
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		if len(names) != 8 {
			return fmt.Sprintf("%d pods", len(names))
		}
		return ""
	})
	for _, name := range names {
		g.waitEvent(name, "its gang of 8 pods of 2 GPUs does not fit the nodes it may use (room for 4 such pods)")
	}
	g.unbound(names...)

	g.node(g.name+"-b", "Tesla-V100-SXM2-16GB", 8)
	jobs := map[string]int{}
	for _, name := range names {
		g.waitBound(name, 30*time.Second)
		jobs[g.pod(name).Labels["jobset.sigs.k8s.io/replicatedjob-name"]]++
	}
	if jobs["a"] != 4 || jobs["b"] != 4 {
		t.Fatalf("bound pods by replicated job: %v", jobs)
	}
}
