package kube_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
	"github.com/gpusched/gpusched/kube"
)

// The elastic tests run on a bed of their own with Volcano's job
// controller (kubebed.Options.Volcano); without the Volcano source in
// ../shared they skip, naming the missing file.
var volcanoShared = kubebed.NewShared(kubebed.Options{Volcano: true})

var vcJobs = schema.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}

// venv is a test's share of a bed with a dynamic client.
type venv struct {
	*kenv
	dyn dynamic.Interface
}

func newVolcanoEnv(t *testing.T) *venv {
	t.Helper()
	return newDynEnv(t, newEnvOn(t, volcanoShared))
}

// vcJob is a Volcano Job of the test's scheduler: a launcher without GPUs
// (when launcher), a worker task of workers pods of 1 GPU, minAvailable
// min, and max-replicas max (0: none), with Volcano's svc plugin (pods
// named <pod>.<job> in DNS).
func (e *venv) vcJob(name string, launcher bool, workers, min, max int) {
	e.t.Helper()
	ann := ""
	if max > 0 {
		ann = fmt.Sprintf("\n  annotations: {%s: %q}", kube.AnnMaxReplicas, strconv.Itoa(max))
	}
	tasks := ""
	if launcher {
		tasks = `
  - name: launcher
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 5
        containers: [{name: launch, image: horovod}]`
	}
	manifest := fmt.Sprintf(`apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: %s%s
spec:
  schedulerName: %s
  queue: default
  minAvailable: %d
  plugins: {svc: []}
  tasks:%s
  - name: worker
    replicas: %d
    template:
      spec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 5
        containers:
        - {name: train, image: horovod, resources: {limits: {nvidia.com/gpu: "1"}}}
`, name, ann, e.name, min, tasks, workers)
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		e.t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if _, err := e.dyn.Resource(vcJobs).Namespace(e.name).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// jobPods returns the live pods of Volcano Job job and task ("" any).
func (e *venv) jobPods(job, task string) []v1.Pod {
	e.t.Helper()
	list, err := e.cs.CoreV1().Pods(e.name).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []v1.Pod
	for _, p := range list.Items {
		if p.Annotations["volcano.sh/job-name"] == job && (task == "" || p.Annotations["volcano.sh/task-spec"] == task) &&
			p.DeletionTimestamp == nil && p.Status.Phase != v1.PodFailed && p.Status.Phase != v1.PodSucceeded {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// bound returns the names of the pods of job and task bound to a node, and
// whether every live pod of theirs is.
func (e *venv) bound(job, task string) ([]string, bool) {
	var names []string
	all := true
	for _, p := range e.jobPods(job, task) {
		if p.Spec.NodeName == "" {
			all = false
			continue
		}
		names = append(names, p.Name)
	}
	return names, all
}

// hosts returns job's host list ConfigMap: its lines and generation.
func (e *venv) hosts(job string) ([]string, int64, bool) {
	cm, err := e.cs.CoreV1().ConfigMaps(e.name).Get(context.Background(), job+kube.HostsSuffix, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, 0, false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	gen, err := strconv.ParseInt(cm.Data[kube.GenerationKey], 10, 64)
	if err != nil {
		e.t.Fatalf("configmap %s: generation %q: %v", cm.Name, cm.Data[kube.GenerationKey], err)
	}
	lines := strings.Fields(cm.Data[kube.HostsKey])
	return lines, gen, true
}

// workersAre waits until job's workers are exactly names, all bound, and
// its host list names exactly them (as <pod>.<job>:1), and returns the
// host list's generation.
func (e *venv) workersAre(job string, names []string, timeout time.Duration) int64 {
	e.t.Helper()
	var gen int64
	want := make([]string, len(names))
	for i, n := range names {
		want[i] = n + "." + job + ":1"
	}
	e.eventually(fmt.Sprintf("job %s's workers %v bound and in its host list", job, names), timeout, func() string {
		got, all := e.bound(job, "worker")
		if !all || !slices.Equal(got, names) {
			return fmt.Sprintf("bound workers %v (all live ones bound: %v)", got, all)
		}
		lines, g, ok := e.hosts(job)
		if !ok {
			return "no host list"
		}
		gen = g
		if !slices.Equal(lines, want) {
			return fmt.Sprintf("host list %v (generation %d)", lines, g)
		}
		return ""
	})
	return gen
}

func names(job string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-worker-%d", job, i))
	}
	slices.Sort(out)
	return out
}

// watchdog polls the bed while a test runs: no node ever holds pods asking
// for more GPUs than it has, and the generation of each host list only
// moves forward (up whenever the list changes). stop ends it and reports.
func (e *venv) watchdog(nodes map[string]int64, jobs ...string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var problems []string
	type seen struct {
		lines []string
		gen   int64
	}
	last := map[string]seen{}
	changes := map[string]int{}
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(150 * time.Millisecond):
			}
			list, err := e.cs.CoreV1().Pods(e.name).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				continue
			}
			used := map[string]int64{}
			for _, p := range list.Items {
				if p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
					used[p.Spec.NodeName] += p.Spec.Containers[0].Resources.Limits.Name("nvidia.com/gpu", "").Value()
				}
			}
			mu.Lock()
			for n, u := range used {
				if c, ok := nodes[n]; ok && u > c {
					problems = append(problems, fmt.Sprintf("node %s holds pods of %d GPUs, has %d", n, u, c))
				}
			}
			for _, j := range jobs {
				cm, err := e.cs.CoreV1().ConfigMaps(e.name).Get(context.Background(), j+kube.HostsSuffix, metav1.GetOptions{})
				if err != nil {
					continue
				}
				gen, _ := strconv.ParseInt(cm.Data[kube.GenerationKey], 10, 64)
				s := seen{strings.Fields(cm.Data[kube.HostsKey]), gen}
				if old, ok := last[j]; ok {
					switch {
					case gen < old.gen:
						problems = append(problems, fmt.Sprintf("%s: generation went back from %d to %d", j, old.gen, gen))
					case gen == old.gen && !slices.Equal(s.lines, old.lines):
						problems = append(problems, fmt.Sprintf("%s: host list changed at generation %d", j, gen))
					case gen > old.gen:
						changes[j]++
					}
				}
				last[j] = s
			}
			mu.Unlock()
		}
	}()
	return func() {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			e.t.Error(p)
		}
		e.t.Logf("host list changes seen: %v", changes)
	}
}

// elasticConfig writes a scheduler configuration file and returns its path.
func elasticConfig(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "sched.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestVolcanoThreshold is issue 16's first Done-when item. A Volcano Job
// (a launcher without GPUs, a worker task of 2, minAvailable 2,
// max-replicas 6, 1 GPU a worker) on 3 kwok nodes of 2 GPUs under the
// threshold scaler with p = 1, et = 0.5, st = 1.5 (mt = 1), a pass every
// 3 s, counting waiting jobs' minimums. Idle: a = 2 (its minimum), M = 4,
// T = 0 < et → expand by EM = mt·M = 4: it grows to 6 workers (the job
// starts at its minimum and grows in the same round; Volcano's controller
// creates the 4 new pods once gpusched patched the task's replicas).
// Then job b (2 workers, minAvailable 2) arrives: a = 2 + 2, M = 2,
// EU = 4, T = 2 > st → shrink by EM = (T − mt)·M = 2: workers 5 and 4
// go, b starts, and the pass maintains (a = 4, EU = 2, T = 1). At every
// step the host list matches the bound workers; the watchdog checks the
// generation and the GPUs of every node throughout.
func TestVolcanoThreshold(t *testing.T) {
	e := newVolcanoEnv(t)
	nodes := map[string]int64{}
	for i := range 3 {
		name := fmt.Sprintf("%s-n%d", e.name, i)
		e.node(name, "Tesla-V100-SXM2-16GB", 2)
		nodes[name] = 2
	}
	cfg := elasticConfig(t, "scaler: threshold\nelasticConfig:\n  elasticProportion: 1\n  expandThreshold: 0.5\n"+
		"  scalingThreshold: 1.5\n  hpaCheckMinutes: 0.05\n  countWaiting: true\n")
	e.gpusched("--config", cfg)
	stop := e.watchdog(nodes, "a")
	e.vcJob("a", true, 2, 2, 6)
	gen1 := e.workersAre("a", names("a", 6), 60*time.Second)
	if l, _ := e.bound("a", "launcher"); len(l) != 1 {
		t.Errorf("launcher bound: %v", l)
	}
	e.vcJob("b", false, 2, 2, 0)
	gen2 := e.workersAre("a", names("a", 4), 60*time.Second)
	e.eventually("b's 2 workers bound", 30*time.Second, func() string {
		if got, all := e.bound("b", "worker"); len(got) != 2 || !all {
			return fmt.Sprintf("bound %v", got)
		}
		return ""
	})
	if gen2 <= gen1 {
		t.Errorf("generation %d after the shrink, %d before: want it higher", gen2, gen1)
	}
	// It stays so: the pass maintains.
	time.Sleep(4 * time.Second)
	e.workersAre("a", names("a", 4), time.Second)
	u, err := e.dyn.Resource(vcJobs).Namespace(e.name).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, _, _ := unstructured.NestedSlice(u.Object, "spec", "tasks")
	if r := tasks[1].(map[string]any)["replicas"]; fmt.Sprint(r) != "4" {
		t.Errorf("worker task replicas %v, want 4", r)
	}
	stop()
}

// gauge returns the value of a gauge's series from gpusched's /metrics,
// and whether it has one.
func gauge(t *testing.T, addr, series string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestVolcanoFulfillment is the second Done-when item: three Volcano Jobs
// under the fulfillment scaler (seed 001; maximum load 1) on 3 nodes of 2
// GPUs, the scores in /metrics checked against (cur − min) / (max − min):
//   - a (min 1, max 4) alone grows to 4: score (4−1)/(4−1) = 1;
//   - b (min 1, max 3) starts at 1 on the 2 free GPUs and, lowest score
//     first, grows to 2: a 1, b (2−1)/(3−1) = 0.5;
//   - c (2 workers, min 2, not elastic) does not fit: the job of the
//     highest score donates a replica at a time — a 4→3 (score 2/3, still
//     above b's 0.5), a 3→2 — and c starts on a's GPUs once its pods are
//     gone: a (2−1)/3 = 1/3, b 0.5.
func TestVolcanoFulfillment(t *testing.T) {
	e := newVolcanoEnv(t)
	nodes := map[string]int64{}
	for i := range 3 {
		name := fmt.Sprintf("%s-n%d", e.name, i)
		e.node(name, "Tesla-V100-SXM2-16GB", 2)
		nodes[name] = 2
	}
	p := e.gpusched("--scaler", "fulfillment", "--config", elasticConfig(t, "fulfillment: {max_load: 1}\n"))
	addr := p.metricsAddr(t)
	stop := e.watchdog(nodes, "a", "b")
	scores := func(want map[string]float64) {
		t.Helper()
		e.eventually(fmt.Sprintf("fulfillment scores %v", want), 30*time.Second, func() string {
			for job, w := range want {
				got, ok := gauge(t, addr, `gpusched_job_fulfillment{job="`+e.name+"/"+job+`"}`)
				if !ok || math.Abs(got-w) > 1e-9 {
					return fmt.Sprintf("job %s: score %v (present %v), want %v", job, got, ok, w)
				}
			}
			return ""
		})
	}
	e.vcJob("a", false, 1, 1, 4)
	e.workersAre("a", names("a", 4), 60*time.Second)
	scores(map[string]float64{"a": 1})
	e.vcJob("b", false, 1, 1, 3)
	e.workersAre("b", names("b", 2), 60*time.Second)
	e.workersAre("a", names("a", 4), time.Second)
	scores(map[string]float64{"a": 1, "b": 0.5})
	e.vcJob("c", false, 2, 2, 0)
	e.workersAre("a", names("a", 2), 60*time.Second)
	e.eventually("c's 2 workers bound", 60*time.Second, func() string {
		if got, all := e.bound("c", "worker"); len(got) != 2 || !all {
			return fmt.Sprintf("bound %v", got)
		}
		return ""
	})
	e.workersAre("b", names("b", 2), time.Second)
	scores(map[string]float64{"a": 1.0 / 3, "b": 0.5})
	stop()
}

// TestBatchJobElastic is the third Done-when item: a batch/v1 Job with
// parallelism 2, gpusched.io/min-replicas 2 and max-replicas 4 (1 GPU a
// pod) on 2 nodes of 2 GPUs under the fulfillment scaler: gpusched raises
// parallelism to 4 and binds the Job controller's new pods; a gang of 2
// bare pods arrives and the Job gives it 2 replicas back (parallelism 2).
func TestBatchJobElastic(t *testing.T) {
	e := newVolcanoEnv(t)
	for i := range 2 {
		e.node(fmt.Sprintf("%s-n%d", e.name, i), "Tesla-V100-SXM2-16GB", 2)
	}
	e.gpusched("--scaler", "fulfillment", "--config", elasticConfig(t, "fulfillment: {max_load: 1}\n"))
	par := int32(2)
	tmpl := e.podSpec("x", 1)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "el", Namespace: e.name,
		Annotations: map[string]string{kube.AnnMinReplicas: "2", kube.AnnMaxReplicas: "4"}},
		Spec: batchv1.JobSpec{Parallelism: &par, Template: v1.PodTemplateSpec{Spec: tmpl.Spec}}}
	job.Spec.Template.Spec.RestartPolicy = v1.RestartPolicyNever
	ctx := context.Background()
	if _, err := e.cs.BatchV1().Jobs(e.name).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	state := func(wantPar int32, wantBound int) func() string {
		return func() string {
			j, err := e.cs.BatchV1().Jobs(e.name).Get(ctx, "el", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			list, err := e.cs.CoreV1().Pods(e.name).List(ctx, metav1.ListOptions{LabelSelector: "job-name=el"})
			if err != nil {
				return err.Error()
			}
			bound := 0
			for _, p := range list.Items {
				if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
					bound++
				}
			}
			if *j.Spec.Parallelism != wantPar || bound != wantBound {
				return fmt.Sprintf("parallelism %d, %d pods bound", *j.Spec.Parallelism, bound)
			}
			return ""
		}
	}
	e.eventually("parallelism 4 and 4 pods bound", 60*time.Second, state(4, 4))
	for i := range 2 {
		p := e.podSpec(fmt.Sprintf("g-%d", i), 1)
		p.Labels[kube.LabelJob] = "g"
		p.Annotations[kube.AnnMinReplicas] = "2"
		e.create(p)
	}
	e.waitBound("g-0", 60*time.Second)
	e.waitBound("g-1", 30*time.Second)
	e.eventually("parallelism 2 and 2 pods bound", 30*time.Second, state(2, 2))
}

// uids returns the UIDs of job's live workers by name, and their nodes.
func (e *venv) uids(job string) (map[string]string, map[string]string) {
	ids, nodes := map[string]string{}, map[string]string{}
	for _, p := range e.jobPods(job, "worker") {
		ids[p.Name], nodes[p.Name] = string(p.UID), p.Spec.NodeName
	}
	return ids, nodes
}

// TestVolcanoWorkerLost is the fourth Done-when item. Job a (a launcher, 4
// workers, minAvailable 3, max 4) runs under the fulfillment scaler on 6
// nodes of 1 GPU (a worker a node). Deleting one worker's node (it is gone
// for good): within 15 s the host list drops the worker, the other workers
// keep their pods (same UIDs), and the replacement that Volcano's
// controller creates is bound on a free GPU. Then the nodes of two more
// workers go at once: 2 workers are left, below the minimum of 3, and the
// job restarts as a whole (every worker pod is new) and runs again with
// its gang on the 3 nodes that are left.
func TestVolcanoWorkerLost(t *testing.T) {
	e := newVolcanoEnv(t)
	for i := range 6 {
		e.node(fmt.Sprintf("%s-n%d", e.name, i), "Tesla-V100-SXM2-16GB", 1)
	}
	e.gpusched("--scaler", "fulfillment", "--config", elasticConfig(t, "fulfillment: {max_load: 1}\n"))
	e.vcJob("a", true, 4, 3, 4)
	e.workersAre("a", names("a", 4), 60*time.Second)
	ids, nodes := e.uids("a")
	lost := "a-worker-3"
	ctx := context.Background()
	_, gen0, _ := e.hosts("a")
	if err := e.cs.CoreV1().Nodes().Delete(ctx, nodes[lost], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	e.eventually("the host list without "+lost, 15*time.Second, func() string {
		lines, gen, _ := e.hosts("a")
		if !slices.Contains(lines, lost+".a:1") && len(lines) == 3 {
			return ""
		}
		// The replacement may be bound before a poll sees the list
		// without it: then the list changed twice (drop, then add) and
		// names a new pod.
		if now, _ := e.uids("a"); gen >= gen0+2 && now[lost] != "" && now[lost] != ids[lost] {
			t.Logf("replacement already in the host list (generation %d, was %d)", gen, gen0)
			return ""
		}
		return fmt.Sprintf("host list %v, generation %d (was %d)", lines, gen, gen0)
	})
	t.Logf("host list dropped %s %v after its node was deleted", lost, time.Since(t0).Round(10*time.Millisecond))
	now, _ := e.uids("a")
	for name, id := range ids {
		if name != lost && now[name] != id {
			t.Errorf("worker %s: UID %s, was %s: want it untouched", name, now[name], id)
		}
	}
	e.workersAre("a", names("a", 4), 60*time.Second)
	if now, _ := e.uids("a"); now[lost] == ids[lost] {
		t.Errorf("worker %s was not replaced", lost)
	}

	// Below the minimum: the nodes of two workers go (the free node is
	// cordoned first, so that no replacement can keep the job at its
	// minimum): 2 workers are left, and the job restarts as a whole.
	before, nodes := e.uids("a")
	busy := map[string]bool{}
	for _, n := range nodes {
		busy[n] = true
	}
	list, err := e.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: e2eLabel + "=" + e.name})
	if err != nil {
		t.Fatal(err)
	}
	var cordoned []string
	for _, n := range list.Items {
		if !busy[n.Name] {
			cordoned = append(cordoned, n.Name)
			e.cordon(n.Name, true)
		}
	}
	for _, w := range []string{"a-worker-1", "a-worker-2"} {
		if err := e.cs.CoreV1().Nodes().Delete(ctx, nodes[w], metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually("a's old worker pods all gone (restart)", 30*time.Second, func() string {
		now, _ := e.uids("a")
		for name, id := range now {
			if before[name] == id {
				return "worker " + name + " still has its old pod"
			}
		}
		return ""
	})
	for _, n := range cordoned {
		e.cordon(n, false)
	}
	// Running again on 3 workers, the host list naming exactly them. Both
	// are read in the same poll: while Volcano's controller replaces the
	// pods of the job's older versions, which 3 workers are bound may
	// change before it settles.
	e.eventually("a running again on 3 workers, all in its host list", 60*time.Second, func() string {
		got, all := e.bound("a", "worker")
		if len(got) != 3 || !all {
			return fmt.Sprintf("bound workers %v (all live ones bound: %v)", got, all)
		}
		want := make([]string, len(got))
		for i, n := range got {
			want[i] = n + ".a:1"
		}
		if lines, g, _ := e.hosts("a"); !slices.Equal(lines, want) {
			return fmt.Sprintf("bound workers %v; host list %v (generation %d)", got, lines, g)
		}
		return ""
	})
}

// cordon marks a node unschedulable (or schedulable again).
func (e *venv) cordon(name string, on bool) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%v}}`, on)
	if _, err := e.cs.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
