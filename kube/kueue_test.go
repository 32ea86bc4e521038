package kube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

// kueueShared is a bed with the real Kueue controller (scripts/testbed
// --kueue).
var kueueShared = kubebed.NewShared(kubebed.Options{Kueue: true})

// kueueObject creates a Kueue object of resource res (cluster-scoped when
// ns is "") from its spec. With -count above 1, the previous run's object
// of that name may still be held by Kueue's finalizers: it waits for it to
// go, as newEnvOn does for namespaces.
func (g *venv) kueueObject(res, kind, ns, name string, spec map[string]any) {
	g.t.Helper()
	gvr := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: res}
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	u := map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": meta, "spec": spec}
	var client dynamic.ResourceInterface = g.dyn.Resource(gvr)
	if ns != "" {
		client = g.dyn.Resource(gvr).Namespace(ns)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		_, err := client.Create(context.Background(), &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
			g.t.Fatalf("create %s %s: %v", kind, name, err)
		}
	}
}

// queuedJob creates a suspended batch/v1 Job in LocalQueue queue (as
// Kueue's webhook would suspend it) of 2 pods of 2 GPUs, each running for
// run once bound.
func (g *venv) queuedJob(name, queue string, run time.Duration) {
	g.t.Helper()
	two, yes := int32(2), true
	pod := g.podSpec("", 2)
	pod.Annotations["pod-complete.stage.kwok.x-k8s.io/delay"] = run.String()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.name, Labels: map[string]string{"kueue.x-k8s.io/queue-name": queue}},
		Spec: batchv1.JobSpec{Parallelism: &two, Completions: &two, Suspend: &yes,
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: pod.Annotations}, Spec: pod.Spec}}}
	if _, err := g.cs.BatchV1().Jobs(g.name).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		g.t.Fatal(err)
	}
}

// batchJobNodes returns the nodes of a Job's pods: "" for a pending one.
func (g *venv) batchJobNodes(job string) []string {
	g.t.Helper()
	list, err := g.cs.CoreV1().Pods(g.name).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		g.t.Fatal(err)
	}
	var nodes []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != v1.PodSucceeded {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return nodes
}

// suspended reports whether a Job is suspended.
func (g *venv) suspended(job string) bool {
	g.t.Helper()
	j, err := g.cs.BatchV1().Jobs(g.name).Get(context.Background(), job, metav1.GetOptions{})
	if err != nil {
		g.t.Fatal(err)
	}
	return j.Spec.Suspend != nil && *j.Spec.Suspend
}

// TestKueue: with the real Kueue controller, a ClusterQueue of 8 GPUs
// admits two Jobs of 4 GPUs (2 pods of 2) and holds a third; Kueue
// unsuspends the admitted ones, gpusched binds their pods (on 16 GPUs:
// Kueue's quota, not gpusched, holds the third); when the first Job's
// pods finish, Kueue admits the third and gpusched binds it.
func TestKueue(t *testing.T) {
	g := newDynEnv(t, newEnvOn(t, kueueShared))
	g.node(g.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	g.node(g.name+"-b", "Tesla-V100-SXM2-16GB", 8)
	g.gpusched()
	flavor, cq := g.name+"-gpu", g.name+"-cq"
	g.kueueObject("resourceflavors", "ResourceFlavor", "", flavor, map[string]any{})
	g.kueueObject("clusterqueues", "ClusterQueue", "", cq, map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{"coveredResources": []any{"nvidia.com/gpu"},
			"flavors": []any{map[string]any{"name": flavor, "resources": []any{map[string]any{"name": "nvidia.com/gpu", "nominalQuota": int64(8)}}}}}}})
	g.kueueObject("localqueues", "LocalQueue", g.name, "lq", map[string]any{"clusterQueue": cq})
	t.Cleanup(func() {
		ctx := context.Background()
		for _, r := range []struct{ res, name string }{{"clusterqueues", cq}, {"resourceflavors", flavor}} {
			_ = g.dyn.Resource(schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: r.res}).
				Delete(ctx, r.name, metav1.DeleteOptions{})
		}
	})

	g.queuedJob("first", "lq", 15*time.Second)
	g.queuedJob("second", "lq", time.Hour)
	time.Sleep(2 * time.Second) // the third arrives last: Kueue admits in order
	g.queuedJob("third", "lq", time.Hour)
	for _, job := range []string{"first", "second"} {
		g.eventually(job+" admitted and bound", 60*time.Second, func() string {
			nodes := g.batchJobNodes(job)
			if len(nodes) != 2 || nodes[0] == "" || nodes[1] == "" {
				return fmt.Sprintf("suspended %v, pods on %q", g.suspended(job), nodes)
			}
			return ""
		})
	}
	if !g.suspended("third") || len(g.batchJobNodes("third")) != 0 {
		t.Fatalf("third: suspended %v, pods %q; Kueue should hold it", g.suspended("third"), g.batchJobNodes("third"))
	}
	g.eventually("third admitted and bound after first finished", 90*time.Second, func() string {
		nodes := g.batchJobNodes("third")
		if len(nodes) != 2 || nodes[0] == "" || nodes[1] == "" {
			return fmt.Sprintf("suspended %v, pods on %q; first %q", g.suspended("third"), nodes, g.batchJobNodes("first"))
		}
		return ""
	})
	if nodes := g.batchJobNodes("second"); len(nodes) != 2 || nodes[0] == "" {
		t.Fatalf("second: %q", nodes)
	}
}
