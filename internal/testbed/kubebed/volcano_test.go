package kubebed_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

const volcanoJob = `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bert}
spec:
  schedulerName: gpusched
  queue: default
  minAvailable: 2
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: train, image: trainer, resources: {limits: {nvidia.com/gpu: "4"}}}
`

// TestVolcano checks Volcano's job controller in the bed: a Volcano Job
// with schedulerName gpusched gets its PodGroup at once, its pods only once
// the PodGroup is Inqueue (what vc-scheduler's enqueue action, or gpusched,
// sets), and more pods when its task's replicas grow.
func TestVolcano(t *testing.T) {
	bed := kubebed.Start(t, kubebed.Options{Volcano: true})
	defer func() {
		if t.Failed() {
			t.Logf("vc-controller-manager log:\n%s", bed.Log("vc-controller-manager"))
		}
	}()
	addNode(t, bed, "gpu-0")
	queues := get(t, bed, "get", "queues.scheduling.volcano.sh")
	if names := objectNames(queues); !slices.Contains(names, "root") || !slices.Contains(names, "default") {
		t.Fatalf("queues %v, want root and default", names)
	}
	kubectl(t, bed, volcanoJob, "create", "-f", "-")

	var group object
	eventually(t, "the Job's PodGroup", func() string {
		for _, pg := range get(t, bed, "get", "podgroups.scheduling.volcano.sh") {
			for _, o := range pg.Metadata.OwnerReferences {
				if o.Kind == "Job" && o.Name == "bert" {
					group = pg
					return ""
				}
			}
		}
		return "no PodGroup owned by Job bert"
	})
	t.Logf("PodGroup %s created in phase %q", group.Metadata.Name, group.Status.Phase)
	time.Sleep(2 * time.Second)
	if pods := jobPods(t, bed); len(pods) != 0 {
		t.Fatalf("pods %v exist before the PodGroup is Inqueue", objectNames(pods))
	}

	kubectl(t, bed, "", "patch", "podgroups.scheduling.volcano.sh", group.Metadata.Name,
		"--type", "merge", "-p", `{"status":{"phase":"Inqueue"}}`)
	waitPods(t, bed, "bert-worker-0", "bert-worker-1")
	for _, p := range jobPods(t, bed) {
		if p.Status.Phase != "Pending" || p.Spec.NodeName != "" || p.Spec.SchedulerName != "gpusched" {
			t.Errorf("pod %s: phase %q, node %q, scheduler %q; want Pending, unbound, gpusched",
				p.Metadata.Name, p.Status.Phase, p.Spec.NodeName, p.Spec.SchedulerName)
		}
	}
	for _, p := range []string{"bert-worker-0", "bert-worker-1"} {
		bind(t, bed, p, "gpu-0")
	}
	waitPhase(t, bed, "bert-worker-0", "Running")
	waitPhase(t, bed, "bert-worker-1", "Running")

	kubectl(t, bed, "", "patch", "jobs.batch.volcano.sh", "bert", "--type", "json",
		"-p", `[{"op":"replace","path":"/spec/tasks/0/replicas","value":3}]`)
	waitPods(t, bed, "bert-worker-0", "bert-worker-1", "bert-worker-2")
}

// jobPods lists the pods of Volcano Job bert.
func jobPods(t *testing.T, bed *kubebed.Bed) []object {
	return get(t, bed, "get", "pods", "-l", "volcano.sh/job-name=bert")
}

// waitPods waits until the pods of Volcano Job bert are exactly names.
func waitPods(t *testing.T, bed *kubebed.Bed, names ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("pods %v", names), func() string {
		got := objectNames(jobPods(t, bed))
		slices.Sort(got)
		if !slices.Equal(got, names) {
			return fmt.Sprintf("pods %v", got)
		}
		return ""
	})
}

func objectNames(objs []object) []string {
	var names []string
	for _, o := range objs {
		names = append(names, o.Metadata.Name)
	}
	return names
}
