package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// batchJob returns an Indexed batch/v1 Job of the test's scheduler: n pods
// of gpus GPUs each, with annotations on its pod template.
func (e *kenv) batchJob(name string, n int32, gpus int, ann map[string]string) *batchv1.Job {
	mode := batchv1.IndexedCompletion
	grace := int64(30)
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.name},
		Spec: batchv1.JobSpec{Parallelism: &n, Completions: &n, CompletionMode: &mode,
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann},
				Spec: v1.PodSpec{SchedulerName: e.name, RestartPolicy: v1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{Name: "train", Image: "train:latest", Resources: v1.ResourceRequirements{
						Limits: v1.ResourceList{"nvidia.com/gpu": resource.MustParse(fmt.Sprint(gpus))}}}}}}}}
}

// jobPods returns the live pods of batch Job name, by name.
func (e *kenv) jobPods(name string) map[string]*v1.Pod {
	e.t.Helper()
	list, err := e.cs.CoreV1().Pods(e.name).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*v1.Pod{}
	for i := range list.Items {
		if p := &list.Items[i]; p.DeletionTimestamp == nil {
			out[p.Name] = p
		}
	}
	return out
}

// TestIndexedJob: the 4 pods of an Indexed Job (parallelism 4, 1 GPU
// each) are placed as a gang; a job of 8 pods that cannot fit beside it
// waits, none of its pods bound; when one pod of the first is deleted,
// the Job controller creates it again and gpusched binds it again (a
// running job's replacement comes before waiting jobs).
func TestIndexedJob(t *testing.T) {
	e := newEnv(t)
	e.node(e.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	e.gpusched()
	ctx := context.Background()
	if _, err := e.cs.BatchV1().Jobs(e.name).Create(ctx, e.batchJob("four", 4, 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the 4 pods of the Indexed Job bound", 60*time.Second, func() string {
		pods := e.jobPods("four")
		bound := 0
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if len(pods) != 4 || bound != 4 {
			return fmt.Sprintf("%d pods, %d bound", len(pods), bound)
		}
		return ""
	})
	if _, err := e.cs.BatchV1().Jobs(e.name).Create(ctx, e.batchJob("eight", 8, 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the 8-pod job waiting for GPUs", 60*time.Second, func() string {
		pods := e.jobPods("eight")
		if len(pods) != 8 {
			return fmt.Sprintf("%d pods", len(pods))
		}
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				t.Fatalf("pod %s of a gang that cannot fit was bound to %s", p.Name, p.Spec.NodeName)
			}
			if !strings.Contains(condition(p), "waiting for free GPUs") {
				return p.Name + ": " + condition(p)
			}
		}
		return ""
	})

	var victim string
	for name := range e.jobPods("four") {
		victim = name
		break
	}
	if err := e.cs.CoreV1().Pods(e.name).Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Indexed Job's replacement pod bound", 90*time.Second, func() string {
		pods := e.jobPods("four")
		bound := 0
		for name, p := range pods {
			if p.Spec.NodeName != "" && name != victim {
				bound++
			}
		}
		if _, old := pods[victim]; old || bound != 4 {
			return fmt.Sprintf("%d pods, %d bound (old pod still there: %v)", len(pods), bound, old)
		}
		return ""
	})
	for _, p := range e.jobPods("eight") {
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s of the waiting gang was bound to %s", p.Name, p.Spec.NodeName)
		}
	}
}
