package kubebed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

// waitTimeout bounds each wait for the bed's controllers.
const waitTimeout = 60 * time.Second

// object holds the fields of Kubernetes objects the tests look at.
type object struct {
	Metadata struct {
		Name            string            `json:"name"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		NodeName      string `json:"nodeName"`
		SchedulerName string `json:"schedulerName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
		Allocatable map[string]string `json:"allocatable"`
	} `json:"status"`
}

func (o object) condition(typ string) string {
	for _, c := range o.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// kubectl runs kubectl on bed, failing t on error.
func kubectl(t *testing.T, bed *kubebed.Bed, stdin string, args ...string) []byte {
	t.Helper()
	out, err := bed.KubectlInput(context.Background(), stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// get returns the objects `kubectl get ARGS -o json` lists.
func get(t *testing.T, bed *kubebed.Bed, args ...string) []object {
	t.Helper()
	var list struct{ Items []object }
	out := kubectl(t, bed, "", append(args, "-o", "json")...)
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("kubectl get %v: %v", args, err)
	}
	return list.Items
}

// eventually polls check until it returns "" and fails t with check's
// last answer after waitTimeout.
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		state := check()
		if state == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v; last: %s", what, waitTimeout, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gpuNode is a kwok node with 8 V100s, as the Kubernetes mode sees GPUs.
const gpuNode = `apiVersion: v1
kind: Node
metadata:
  name: %s
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {nvidia.com/gpu.product: Tesla-V100-SXM2-16GB, nvidia.com/gpu.count: "8"}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
`

// addNode creates a kwok GPU node and waits until it is Ready.
func addNode(t *testing.T, bed *kubebed.Bed, name string) {
	t.Helper()
	kubectl(t, bed, fmt.Sprintf(gpuNode, name), "create", "-f", "-")
	eventually(t, "node "+name+" Ready", func() string {
		nodes := get(t, bed, "get", "nodes", "--field-selector", "metadata.name="+name)
		if len(nodes) != 1 || nodes[0].condition("Ready") != "True" {
			return fmt.Sprintf("%+v", nodes)
		}
		if got := nodes[0].Status.Allocatable["nvidia.com/gpu"]; got != "8" {
			t.Fatalf("node %s allocatable nvidia.com/gpu = %q, want 8", name, got)
		}
		return ""
	})
}

// waitReady waits until node's Ready condition is status.
func waitReady(t *testing.T, bed *kubebed.Bed, node, status string) {
	t.Helper()
	eventually(t, "node "+node+" Ready="+status, func() string {
		nodes := get(t, bed, "get", "nodes", "--field-selector", "metadata.name="+node)
		if len(nodes) != 1 || nodes[0].condition("Ready") != status {
			return fmt.Sprintf("%+v", nodes)
		}
		return ""
	})
}

// bind binds pod to node through the pods/binding subresource, as a
// scheduler does.
func bind(t *testing.T, bed *kubebed.Bed, pod, node string) {
	t.Helper()
	binding := fmt.Sprintf(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":%q},`+
		`"target":{"apiVersion":"v1","kind":"Node","name":%q}}`, pod, node)
	kubectl(t, bed, binding, "create", "--raw", "/api/v1/namespaces/default/pods/"+pod+"/binding", "-f", "-")
}

// waitPhase waits until pod has phase.
func waitPhase(t *testing.T, bed *kubebed.Bed, pod, phase string) {
	t.Helper()
	eventually(t, "pod "+pod+" "+phase, func() string {
		pods := get(t, bed, "get", "pods", "--field-selector", "metadata.name="+pod)
		if len(pods) != 1 || pods[0].Status.Phase != phase {
			return fmt.Sprintf("%+v", pods)
		}
		return ""
	})
}

const pod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
  annotations: {%s}
spec:
  schedulerName: gpusched
  containers:
  - {name: train, image: trainer, resources: {limits: {nvidia.com/gpu: "4"}}}
`

// TestBed is the bed's smoke test: kwok GPU nodes become Ready, a pod bound
// with a Binding runs (and, annotated, completes), an Indexed Job's pods
// wait for a scheduler named gpusched, a labelled node turns NotReady and
// back, and `down` leaves nothing running.
// It runs on a Shared bed, as a package's tests would.
func TestBed(t *testing.T) {
	shared := kubebed.NewShared(kubebed.Options{})
	stopped := false
	defer func() {
		if !stopped {
			shared.Stop()
		}
	}()
	bed := shared.Get(t)
	if again := shared.Get(t); again != bed {
		t.Fatalf("a second Get started another bed: %s, then %s", bed.Dir, again.Dir)
	}
	t.Logf("bed: Kubernetes %s, kwok %s, API %s", bed.K8sVersion, bed.KwokVersion, bed.Server)
	if out := kubectl(t, bed, "", "version", "-o", "json"); !strings.Contains(string(out), `"gitVersion": "`+bed.K8sVersion+`"`) {
		t.Errorf("kubectl version does not report %s:\n%s", bed.K8sVersion, out)
	}
	addNode(t, bed, "gpu-0")

	t.Run("BoundPodRuns", func(t *testing.T) {
		kubectl(t, bed, fmt.Sprintf(pod, "p-run", ""), "create", "-f", "-")
		bind(t, bed, "p-run", "gpu-0")
		waitPhase(t, bed, "p-run", "Running")
		time.Sleep(2 * time.Second) // pods without the completion annotation keep running
		waitPhase(t, bed, "p-run", "Running")
	})
	t.Run("AnnotatedPodCompletes", func(t *testing.T) {
		kubectl(t, bed, fmt.Sprintf(pod, "p-done", `pod-complete.stage.kwok.x-k8s.io/delay: "1s"`), "create", "-f", "-")
		bind(t, bed, "p-done", "gpu-0")
		waitPhase(t, bed, "p-done", "Succeeded")
	})
	t.Run("IndexedJobPodsPending", func(t *testing.T) { indexedJob(t, bed) })
	t.Run("NodeNotReadyLabel", func(t *testing.T) {
		addNode(t, bed, "gpu-1")
		kubectl(t, bed, "", "label", "node", "gpu-1", "node-not-ready.stage.kwok.x-k8s.io=true")
		waitReady(t, bed, "gpu-1", "False")
		kubectl(t, bed, "", "label", "node", "gpu-1", "node-not-ready.stage.kwok.x-k8s.io-")
		waitReady(t, bed, "gpu-1", "True")
	})

	pids := processes(t, bed.Dir)
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "watchdog"} {
		if pids[name] == "" {
			t.Errorf("run/ lists no %s: %v", name, pids)
		}
	}
	stopped = true
	if err := shared.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bed.Dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind: %v", bed.Dir, err)
	}
	checkStopped(t, pids)
}

// TestBedStopsWhenOwnerExits starts a bed owned by another process (as
// Up does with the test binary) and checks that the bed stops by itself
// once that process exits without stopping it.
func TestBedStopsWhenOwnerExits(t *testing.T) {
	kubebed.SkipIfShort(t)
	root, err := kubebed.Root()
	if err != nil {
		t.Fatal(err)
	}
	owner := exec.Command("sleep", "600")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	dir := t.TempDir()
	script := filepath.Join(root, "scripts", "testbed")
	up := exec.Command(script, "up", dir, "--owner", strconv.Itoa(owner.Process.Pid))
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("testbed up: %v\n%s", err, out)
	}
	defer exec.Command(script, "down", dir).Run()
	pids := processes(t, dir)
	owner.Process.Kill()
	owner.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for len(running(pids)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	checkStopped(t, pids)
}

// running returns the names of pids whose processes still run (zombies,
// exited but not yet reaped, do not count).
func running(pids map[string]string) []string {
	var names []string
	for name, pid := range pids {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%s/stat", pid))
		if err == nil && !strings.Contains(string(st), ") Z ") {
			names = append(names, name)
		}
	}
	return names
}

func checkStopped(t *testing.T, pids map[string]string) {
	t.Helper()
	if left := running(pids); len(left) > 0 {
		t.Errorf("still running after the bed stopped: %v (pids %v)", left, pids)
	}
}

// processes returns the PIDs `up` recorded in dir/run, by name.
func processes(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = strings.Fields(string(b))[0]
	}
	return pids
}

const indexedJobYAML = `apiVersion: batch/v1
kind: Job
metadata: {name: resnet}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  template:
    spec:
      schedulerName: gpusched
      restartPolicy: Never
      containers:
      - {name: train, image: trainer, resources: {limits: {nvidia.com/gpu: "4"}}}
`

// indexedJob checks that the Job controller creates an Indexed Job's pods,
// which stay Pending and unbound: no scheduler named gpusched runs.
func indexedJob(t *testing.T, bed *kubebed.Bed) {
	kubectl(t, bed, indexedJobYAML, "create", "-f", "-")
	var pods []object
	eventually(t, "the Job's 2 pods", func() string {
		pods = get(t, bed, "get", "pods", "-l", "batch.kubernetes.io/job-name=resnet")
		if len(pods) != 2 {
			return fmt.Sprintf("%d pods", len(pods))
		}
		return ""
	})
	time.Sleep(time.Second)
	pods = get(t, bed, "get", "pods", "-l", "batch.kubernetes.io/job-name=resnet")
	indexes := map[string]bool{}
	for _, p := range pods {
		if p.Status.Phase != "Pending" || p.Spec.NodeName != "" || p.Spec.SchedulerName != "gpusched" {
			t.Errorf("pod %s: phase %q, node %q, scheduler %q; want Pending, unbound, gpusched",
				p.Metadata.Name, p.Status.Phase, p.Spec.NodeName, p.Spec.SchedulerName)
		}
		indexes[p.Metadata.Annotations["batch.kubernetes.io/job-completion-index"]] = true
	}
	if !indexes["0"] || !indexes["1"] {
		t.Errorf("completion indexes %v, want 0 and 1", indexes)
	}
}
