package main

// Mode -volcano (make bench-volcano; docs/BENCHMARKS.md): gpusched and
// Volcano's own scheduler side by side on one bed (scripts/testbed up
// --volcano-scheduler): the same Volcano Jobs, differing only in
// spec.schedulerName, created all at once for one scheduler and then for
// the other, the order alternating over the repetitions.

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

// vcJobs and vcPodGroups are Volcano's Job and PodGroup resources.
func vcJobs() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}
}

func vcPodGroups() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
}

// vcResult is one scheduler's run: when the jobs were created, when each
// pod was first seen and first seen bound.
type vcResult struct {
	sched, ns       string
	rep             int
	start, lastJob  time.Time
	jobCreated      map[string]time.Time
	seen, bound     map[string]time.Time
	podJob          map[string]string
	cpu             map[string]float64 // CPU seconds by process during the run
	wall            time.Duration      // of the CPU window
	loadBefore, end string
	waited          int    // pods that got a PodScheduled=False condition
	events          string // the namespace's Events by source and reason
}

// eventCounts counts the Events of a namespace by source and reason.
func eventCounts(ctx context.Context, cs kubernetes.Interface, ns string) (string, error) {
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list Events: %w", err)
	}
	n := map[string]int{}
	for _, e := range list.Items {
		src := e.Source.Component
		if src == "" {
			src = e.ReportingController
		}
		n[src+" "+e.Reason]++
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%s %d", k, n[k]))
	}
	return strings.Join(out, ", "), nil
}

// runVolcano is mode -volcano: one bed with vc-controller-manager and
// vc-scheduler, o.nodes kwok nodes, gpusched running throughout, and
// o.reps rounds of o.jobs Volcano Jobs of o.jobSize pods for each
// scheduler named in o.schedulers, in alternating order.
func runVolcano(o options) error {
	ctx := context.Background()
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kubebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// vc-controller-manager creates the Jobs' pods: its default limit of
	// 50 API requests per second bounds both schedulers alike.
	os.Setenv("TESTBED_VC_CONTROLLER_FLAGS", o.vcControllerFlags)
	bed, err := kubebed.Up(ctx, filepath.Join(dir, "bed"), kubebed.Options{VolcanoScheduler: true})
	if err != nil {
		return err
	}
	defer bed.Down()
	rc, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 10000, 20000
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	t := time.Now()
	if err := createNodes(ctx, cs, o); err != nil {
		return err
	}
	log.Printf("%d nodes Ready and untainted in %.1f s", o.nodes, time.Since(t).Seconds())
	g, err := startGpusched(bin, bed, o)
	if err != nil {
		return err
	}
	defer g.stop()
	pids := bedPIDs(bed)
	for _, name := range []string{"vc-controller-manager", "vc-scheduler"} {
		if pid, ok := readPID(bed, name); ok {
			pids[name] = pid
		}
	}
	pids["gpusched"] = g.cmd.Process.Pid
	defer resumeAll(pids)
	if err := vcWarmup(ctx, cs, dyn, o, pids); err != nil {
		return err
	}
	scheds := strings.Split(o.schedulers, ",")
	var results []*vcResult
	for rep := range o.reps {
		order := slices.Clone(scheds)
		if rep%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			if other := otherBenches(); other != "" {
				log.Printf("note: another benchmark runs (it loads the machine for both schedulers alike):\n%s", other)
			}
			if o.pauseOther {
				alone(pids, s)
			}
			r, err := vcRun(ctx, cs, dyn, o, s, rep, pids)
			if err != nil {
				return fmt.Errorf("%s, repetition %d: %w", s, rep+1, err)
			}
			r.print(o)
			results = append(results, r)
		}
	}
	vcSummary(o, results)
	return nil
}

// vcWarmup runs o.warmup Volcano Jobs for each scheduler, unmeasured:
// on a fresh bed, vc-controller-manager created the first run's pods
// 1.5-4 s later than those of the runs after it, whatever scheduler
// they were for.
func vcWarmup(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, o options, pids map[string]int) error {
	if o.warmup <= 0 {
		return nil
	}
	w := o
	w.jobs = o.warmup
	for _, s := range strings.Split(o.schedulers, ",") {
		if o.pauseOther {
			alone(pids, s)
		}
		r, err := vcRun(ctx, cs, dyn, w, s, -1, pids)
		if err != nil {
			return fmt.Errorf("%s, warm-up: %w", s, err)
		}
		f := r.figures()
		log.Printf("%s warm-up: %d Jobs, %d pods bound in %.2f s (not counted)", s, w.jobs, f.bound, f.allBound.Seconds())
	}
	return nil
}

// schedProcess names the process of a scheduler name.
func schedProcess(sched string) string {
	if sched == "volcano" {
		return "vc-scheduler"
	}
	return "gpusched"
}

// alone lets only sched's scheduler run during its turn (-pause-other):
// it resumes the stopped one, gives it 10 s to catch up with what changed
// meanwhile, and stops (SIGSTOP) the other. vc-scheduler's informers take
// every PodGroup, whatever its scheduler (they filter the pods), so while
// it runs it also writes status and Events for gpusched's PodGroups.
func alone(pids map[string]int, sched string) {
	mine := schedProcess(sched)
	for _, name := range []string{"gpusched", "vc-scheduler"} {
		if name == mine {
			if procState(pids[name]) == "T" {
				_ = syscall.Kill(pids[name], syscall.SIGCONT)
				time.Sleep(10 * time.Second)
			}
			continue
		}
		_ = syscall.Kill(pids[name], syscall.SIGSTOP)
	}
	log.Printf("%s alone: the other scheduler stopped (SIGSTOP) for this turn", mine)
}

// resumeAll resumes the schedulers alone stopped, so that they can exit.
func resumeAll(pids map[string]int) {
	for _, name := range []string{"gpusched", "vc-scheduler"} {
		if pid, ok := pids[name]; ok {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
}

// procState returns a process's state letter from /proc (T: stopped).
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// readPID reads a bed process's ID from DIR/run/NAME.pid.
func readPID(bed *kubebed.Bed, name string) (int, bool) {
	data, err := os.ReadFile(filepath.Join(bed.Dir, "run", name+".pid"))
	if err != nil {
		return 0, false
	}
	var pid int
	_, err = fmt.Sscan(string(data), &pid)
	return pid, err == nil
}

// vcJob is a Volcano Job of size pods of 1 GPU in one task, minAvailable
// size, in Queue default, scheduled by sched.
func vcJob(name, sched string, size int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch.volcano.sh/v1alpha1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"schedulerName": sched,
			"queue":         "default",
			"minAvailable":  int64(size),
			"tasks": []any{map[string]any{
				"name":     "worker",
				"replicas": int64(size),
				"template": map[string]any{"spec": map[string]any{
					"restartPolicy":                 "Never",
					"terminationGracePeriodSeconds": int64(5),
					"containers": []any{map[string]any{
						"name": "train", "image": "train",
						"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1"}},
					}},
				}},
			}},
		},
	}}
}

// vcRun creates o.jobs Volcano Jobs for scheduler sched in a namespace of
// their own, waits until all their pods are bound (or none was for
// o.settle), then deletes them and waits until their pods and PodGroups
// are gone.
func vcRun(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, o options, sched string, rep int, pids map[string]int) (*vcResult, error) {
	ns := fmt.Sprintf("vc-%s-%d", sched, rep+1)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	r := &vcResult{sched: sched, ns: ns, rep: rep + 1, jobCreated: map[string]time.Time{}}
	w, err := startPodWatch(ctx, cs, ns)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	r.loadBefore = loadavg()
	cpu0 := cpuOf(pids)
	t0 := time.Now()
	var mu sync.Mutex
	r.start = time.Now()
	err = parallel(o.jobs, o.creators, func(i int) error {
		name := fmt.Sprintf("job-%03d", i)
		_, err := dyn.Resource(vcJobs()).Namespace(ns).Create(ctx, vcJob(name, sched, o.jobSize), metav1.CreateOptions{})
		now := time.Now()
		mu.Lock()
		r.jobCreated[name] = now
		if now.After(r.lastJob) {
			r.lastJob = now
		}
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create Volcano Jobs: %w", err)
	}
	log.Printf("%s run %d: %d Volcano Jobs created in %.2f s", sched, rep+1, o.jobs, r.lastJob.Sub(r.start).Seconds())
	w.waitSettled(o.jobs*o.jobSize, o.settle)
	cpu1 := cpuOf(pids)
	r.wall = time.Since(t0)
	r.cpu = map[string]float64{}
	for name := range cpu1 {
		r.cpu[name] = cpu1[name] - cpu0[name]
	}
	r.end = loadavg()
	r.seen, r.bound, r.podJob = w.snapshot()
	w.mu.Lock()
	r.waited = len(w.waited)
	w.mu.Unlock()
	if r.events, err = eventCounts(ctx, cs, ns); err != nil {
		return nil, err
	}
	return r, vcClean(ctx, cs, dyn, ns)
}

// cpuOf returns the CPU seconds each process has used so far.
func cpuOf(pids map[string]int) map[string]float64 {
	out := map[string]float64{}
	for name, pid := range pids {
		out[name] = procCPU(pid)
	}
	return out
}

// vcClean deletes the namespace's Volcano Jobs, their pods (at once, as
// kwok's nodes run nothing) and PodGroups, and waits until none is left.
func vcClean(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns string) error {
	bg := metav1.DeletePropagationBackground
	if err := dyn.Resource(vcJobs()).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete Volcano Jobs: %w", err)
	}
	zero := int64(0)
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		jobs, err := dyn.Resource(vcJobs()).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if err := cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("delete pods: %w", err)
		}
		if err := dyn.Resource(vcPodGroups()).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("delete PodGroups: %w", err)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		pgs, err := dyn.Resource(vcPodGroups()).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(jobs.Items)+len(pods.Items)+len(pgs.Items) == 0 {
			// Let both schedulers see the deletions before the next run.
			time.Sleep(5 * time.Second)
			return nil
		}
	}
	return fmt.Errorf("namespace %s: Volcano Jobs, pods or PodGroups left 3 minutes after deletion", ns)
}

// podWatch records when each pod of a namespace was first seen and first
// seen bound, and its Volcano Job.
type podWatch struct {
	watcher
	seen   map[string]time.Time
	job    map[string]string
	waited map[string]bool // pods given PodScheduled=False
	close  func()
}

func startPodWatch(ctx context.Context, cs kubernetes.Interface, ns string) (*podWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &podWatch{watcher: watcher{bound: map[string]time.Time{}}, seen: map[string]time.Time{}, job: map[string]string{},
		waited: map[string]bool{}, close: cancel}
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, err
	}
	go w.follow(ctx, cs, ns, list.ResourceVersion)
	return w, nil
}

// follow watches the namespace's pods from resource version rv until ctx
// ends, watching again from the last version seen when a watch ends (the
// API server ends watches now and then), and listing anew when that
// version is too old.
func (w *podWatch) follow(ctx context.Context, cs kubernetes.Interface, ns, rv string) {
	for ctx.Err() == nil {
		wi, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			if ctx.Err() != nil {
				break
			}
			if ev.Type == watch.Error {
				// 410 Gone: list, then watch from the list's version.
				log.Printf("pod watch of %s: %v; listing anew (pods first seen now are seen late)", ns, ev.Object)
				if list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
					for i := range list.Items {
						w.record(&list.Items[i])
					}
					rv = list.ResourceVersion
				}
				break
			}
			if p, ok := ev.Object.(*v1.Pod); ok {
				rv = p.ResourceVersion
				if ev.Type != watch.Bookmark {
					w.record(p)
				}
			}
		}
		wi.Stop()
		if ctx.Err() == nil {
			log.Printf("pod watch of %s ended; watching again from version %s", ns, rv)
		}
	}
}

// record notes when a pod was first seen, first seen bound, and whether it
// was given PodScheduled=False.
func (w *podWatch) record(p *v1.Pod) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.seen[p.Name]; !ok {
		w.seen[p.Name] = now
		w.job[p.Name] = p.Annotations["volcano.sh/job-name"]
	}
	if _, ok := w.bound[p.Name]; !ok && p.Spec.NodeName != "" {
		w.bound[p.Name] = now
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			w.waited[p.Name] = true
		}
	}
}

func (w *podWatch) stop() { w.close() }

func (w *podWatch) snapshot() (seen, bound map[string]time.Time, job map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.seen), maps.Clone(w.bound), maps.Clone(w.job)
}

// otherBenches lists the kubebench processes other than this one's
// (pgrep -af kubebench without -volcano).
func otherBenches() string {
	out, _ := exec.Command("pgrep", "-af", "kubebench").Output()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.Contains(l, "-volcano") {
			continue
		}
		if filepath.Base(f[1]) == "kubebench" || strings.Contains(l, "run ./scripts/kubebench") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// figures are one run's measurements.
type figures struct {
	pods, bound            int
	allBound, allCreated   time.Duration // from the first Job's creation
	firstCreated           time.Duration
	podP50, podP99         time.Duration // a pod's creation → bound
	jobP50, jobP99         time.Duration // a Job's creation → its last pod bound
	jobsBound, jobsCreated int
}

func (r *vcResult) figures() figures {
	f := figures{pods: len(r.seen), bound: len(r.bound), jobsCreated: len(r.jobCreated)}
	var pod []time.Duration
	last := map[string]time.Time{} // a Job's last pod bound
	for name, b := range r.bound {
		if b.Sub(r.start) > f.allBound {
			f.allBound = b.Sub(r.start)
		}
		pod = append(pod, b.Sub(r.seen[name]))
		if j := r.podJob[name]; b.After(last[j]) {
			last[j] = b
		}
	}
	f.firstCreated = time.Hour
	for _, s := range r.seen {
		f.allCreated = max(f.allCreated, s.Sub(r.start))
		f.firstCreated = min(f.firstCreated, s.Sub(r.start))
	}
	count := map[string]int{}
	for name := range r.bound {
		count[r.podJob[name]]++
	}
	var job []time.Duration
	for j, at := range last {
		if c, ok := r.jobCreated[j]; ok && count[j] == len(r.seenOf(j)) {
			job = append(job, at.Sub(c))
		}
	}
	f.jobsBound = len(job)
	f.podP50, f.podP99 = pct(pod, 0.5), pct(pod, 0.99)
	f.jobP50, f.jobP99 = pct(job, 0.5), pct(job, 0.99)
	return f
}

// seenOf lists the pods of Volcano Job j seen.
func (r *vcResult) seenOf(j string) []string {
	var out []string
	for name, job := range r.podJob {
		if job == j {
			out = append(out, name)
		}
	}
	return out
}

// pct returns the p quantile of d (0 when empty).
func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(int(p*float64(len(d))), len(d)-1)]
}

func (r *vcResult) print(o options) {
	f := r.figures()
	fmt.Printf("\n%s, run %d (namespace %s): %d Volcano Jobs x %d pods of 1 GPU on %d nodes x %d GPUs\n",
		r.sched, r.rep, r.ns, o.jobs, o.jobSize, o.nodes, o.gpusPerNode)
	fmt.Printf("  Jobs created:            %d in %.2f s\n", f.jobsCreated, r.lastJob.Sub(r.start).Seconds())
	fmt.Printf("  pods created:            %d, the last %.2f s after the first Job\n", f.pods, f.allCreated.Seconds())
	fmt.Printf("  pods bound:              %d, the last %.2f s after the first Job  <- all bound\n", f.bound, f.allBound.Seconds())
	fmt.Printf("  pod creation→bound:      p50 %.3f s, p99 %.3f s\n", f.podP50.Seconds(), f.podP99.Seconds())
	fmt.Printf("  Job creation→all bound:  p50 %.3f s, p99 %.3f s (%d Jobs wholly bound)\n", f.jobP50.Seconds(), f.jobP99.Seconds(), f.jobsBound)
	fmt.Printf("  first pod created:       %.2f s after the first Job; %d pods were given PodScheduled=False\n", f.firstCreated.Seconds(), r.waited)
	fmt.Printf("  Events:                  %s\n", r.events)
	fmt.Printf("  load average:            %s before, %s after (%d cores)\n", r.loadBefore, r.end, runtime.NumCPU())
	fmt.Printf("  CPU over %.1f s:", r.wall.Seconds())
	for _, name := range slices.Sorted(maps.Keys(r.cpu)) {
		fmt.Printf(" %s %.1f s;", name, r.cpu[name])
	}
	fmt.Println()
}

// vcSummary prints each scheduler's all-bound times over the repetitions.
func vcSummary(o options, results []*vcResult) {
	fmt.Printf("\nkubebench -volcano: %d Volcano Jobs x %d pods (minAvailable %d, 1 GPU each) on %d kwok nodes x %d GPUs, %d repetitions\n",
		o.jobs, o.jobSize, o.jobSize, o.nodes, o.gpusPerNode, o.reps)
	fmt.Printf("  gpusched flags: %q; vc-controller-manager flags: %q; the other scheduler stopped during a turn: %v\n",
		o.gpuschedArgs, o.vcControllerFlags, o.pauseOther)
	for _, s := range strings.Split(o.schedulers, ",") {
		var all, p50, p99 []string
		for _, r := range results {
			if r.sched != s {
				continue
			}
			f := r.figures()
			mark := ""
			if f.bound < o.jobs*o.jobSize {
				mark = fmt.Sprintf(" (only %d bound)", f.bound)
			}
			all = append(all, fmt.Sprintf("%.2f%s", f.allBound.Seconds(), mark))
			p50 = append(p50, fmt.Sprintf("%.2f", f.podP50.Seconds()))
			p99 = append(p99, fmt.Sprintf("%.2f", f.podP99.Seconds()))
		}
		fmt.Printf("  %-9s all bound after %s s; pod creation→bound p50 %s s, p99 %s s\n", s,
			strings.Join(all, " / "), strings.Join(p50, " / "), strings.Join(p99, " / "))
	}
}
