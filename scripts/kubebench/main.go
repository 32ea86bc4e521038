// Command kubebench measures `gpusched kube` on the project's Kubernetes
// test bed (make bench-kube; docs/BENCHMARKS.md): 1,000 kwok nodes of 8
// GPUs, 10,000 single-pod jobs and 500 gangs of 8 pods (1 GPU each), all
// created at once. It reports the pods bound per second from the first
// creation to the last Binding, the creation rate (which bounds it), the
// creation→bound latency (p50, p99), gpusched's peak RSS and the machine's
// load.
//
// Mode e2e starts gpusched first and then creates the pods; mode backlog
// creates the pods first and then starts gpusched (its own throughput,
// without the creation rate in the way). Each mode gets its own bed.
//
// With -volcano (make bench-volcano, volcano.go) it compares gpusched with
// Volcano's vc-scheduler instead: one bed with both, 100 kwok nodes, and
// the same 200 Volcano Jobs of 4 pods created at once for each scheduler
// in turn, the order alternating over the repetitions.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

type options struct {
	bin                      string
	mode                     string
	nodes, gpusPerNode       int
	singles, gangs, gangSize int
	creators                 int
	settle                   time.Duration
	gpuschedArgs             string
	logFile                  string
	// Mode -volcano (volcano.go).
	volcano           bool
	jobs, jobSize     int
	reps              int
	schedulers        string
	vcControllerFlags string
	pauseOther        bool
	warmup            int
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/gpusched", "the gpusched binary")
	flag.StringVar(&o.mode, "mode", "e2e", "e2e (gpusched runs, then the pods are created) or backlog (pods first, then gpusched)")
	flag.IntVar(&o.nodes, "nodes", 1000, "kwok nodes")
	flag.IntVar(&o.gpusPerNode, "gpus", 8, "GPUs per node")
	flag.IntVar(&o.singles, "singles", 10000, "single-pod jobs")
	flag.IntVar(&o.gangs, "gangs", 500, "gang jobs")
	flag.IntVar(&o.gangSize, "gang-size", 8, "pods per gang")
	flag.IntVar(&o.creators, "creators", 64, "concurrent pod creations")
	flag.DurationVar(&o.settle, "settle", 20*time.Second, "stop waiting once no pod was bound for this long")
	flag.StringVar(&o.gpuschedArgs, "args", "--kube-api-qps=5000 --kube-api-burst=10000", "extra gpusched kube flags")
	flag.StringVar(&o.logFile, "log", "", "write gpusched's whole log into this file")
	flag.BoolVar(&o.volcano, "volcano", false, "Volcano Jobs scheduled by gpusched and by vc-scheduler side by side on one bed (-nodes, -gpus, -jobs, -job-size, -reps, -schedulers)")
	flag.IntVar(&o.jobs, "jobs", 200, "with -volcano: Volcano Jobs per run")
	flag.IntVar(&o.jobSize, "job-size", 4, "with -volcano: pods per Volcano Job (its minAvailable)")
	flag.IntVar(&o.reps, "reps", 2, "with -volcano: runs per scheduler, the order alternating")
	flag.StringVar(&o.schedulers, "schedulers", "gpusched,volcano", "with -volcano: the schedulerNames compared, in the first run's order")
	flag.StringVar(&o.vcControllerFlags, "vc-controller-flags", "", "with -volcano: extra flags of vc-controller-manager (TESTBED_VC_CONTROLLER_FLAGS)")
	flag.BoolVar(&o.pauseOther, "pause-other", false, "with -volcano: stop (SIGSTOP) the other scheduler during each one's turn")
	flag.IntVar(&o.warmup, "warmup", 50, "with -volcano: Volcano Jobs of an unmeasured first run per scheduler (0: none)")
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	do := run
	if o.volcano {
		do = runVolcano
	}
	if err := do(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
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
	load0 := loadavg()
	bed, err := kubebed.Up(ctx, filepath.Join(dir, "bed"), kubebed.Options{})
	if err != nil {
		return err
	}
	defer bed.Down()
	rc, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 10000, 20000
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
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	w, err := startWatch(ctx, cs)
	if err != nil {
		return err
	}
	var g *gpusched
	var created []time.Time
	var firstCreate, lastCreate time.Time
	var cpu0 cpuUse
	pids := bedPIDs(bed)
	if o.mode == "backlog" {
		created, firstCreate, lastCreate, err = createPods(ctx, cs, o)
		if err != nil {
			return err
		}
		log.Printf("backlog of %d pods created; starting gpusched", len(created))
		cpu0 = snapshotCPU(pids, nil)
		if g, err = startGpusched(bin, bed, o); err != nil {
			return err
		}
	} else {
		if g, err = startGpusched(bin, bed, o); err != nil {
			return err
		}
		cpu0 = snapshotCPU(pids, g)
		created, firstCreate, lastCreate, err = createPods(ctx, cs, o)
		if err != nil {
			return err
		}
	}
	defer g.stop()
	want := min(o.singles+o.gangs*o.gangSize, o.nodes*o.gpusPerNode)
	w.waitSettled(want, o.settle)
	cpu1 := snapshotCPU(pids, g)
	loadEnd := loadavg()
	if err := report(o, w, g, created, firstCreate, lastCreate, load0, loadEnd); err != nil {
		return err
	}
	reportCPU(cpu0, cpu1)
	return nil
}

// reportCPU prints the CPU each process used between two snapshots, in
// seconds and in cores, and the machine's (all of its work, other
// sessions' included).
func reportCPU(a, b cpuUse) {
	wall := b.at.Sub(a.at).Seconds()
	fmt.Printf("CPU from the start of the measured window to the end (%.1f s):\n", wall)
	ours := 0.0
	names := slices.Sorted(maps.Keys(b.procs))
	for _, name := range names {
		d := b.procs[name] - a.procs[name]
		ours += d
		fmt.Printf("  %-24s %6.1f s  (%.2f cores)\n", name, d, d/wall)
	}
	busy := b.busy - a.busy
	fmt.Printf("  %-24s %6.1f s  (%.2f cores)\n", "the bed, gpusched, bench", ours, ours/wall)
	fmt.Printf("  %-24s %6.1f s  (%.2f cores; the machine has %.0f)\n", "whole machine busy", busy, busy/wall, (b.total-a.total)/wall)
	fmt.Printf("  %-24s %6.1f s  (%.2f cores)\n", "other work", busy-ours, (busy-ours)/wall)
}

// createNodes creates the kwok nodes and waits until all are Ready.
func createNodes(ctx context.Context, cs kubernetes.Interface, o options) error {
	q := resource.MustParse(fmt.Sprint(o.gpusPerNode))
	rl := v1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"), "nvidia.com/gpu": q}
	err := parallel(o.nodes, 32, func(i int) error {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("gpu-%04d", i),
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels:      map[string]string{"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}},
			Status: v1.NodeStatus{Capacity: rl, Allocatable: rl}}
		_, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	start := time.Now()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		ready := 0
		var tainted []string
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				// The API server taints a new node
				// node.kubernetes.io/not-ready:NoSchedule, and
				// kube-controller-manager removes the taint once it has
				// seen the node Ready: no scheduler may use it before.
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					if len(n.Spec.Taints) == 0 {
						ready++
					} else {
						tainted = append(tainted, n.Name)
					}
				}
			}
		}
		if ready == o.nodes {
			return nil
		}
		// kube-controller-manager (20 requests/s, and conflicts with
		// kwok's heartbeats) can take minutes for 1,000 nodes, or miss
		// some: once a node has been Ready for a while, remove the taint
		// as it would.
		if time.Since(start) > 30*time.Second {
			if err := untaint(ctx, cs, tainted); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("the %d nodes were not Ready and untainted after 5 minutes", o.nodes)
}

// untaint removes the not-ready taint of Ready nodes.
func untaint(ctx context.Context, cs kubernetes.Interface, names []string) error {
	patch := []byte(`{"spec":{"taints":null}}`)
	return parallel(len(names), 16, func(i int) error {
		_, err := cs.CoreV1().Nodes().Patch(ctx, names[i], types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
}

// createPods creates the jobs' pods with o.creators concurrent calls: the
// gangs' pods spread among the single pods (a gang's 8 pods one after
// another). It returns each pod's creation time (when the API server
// answered), by pod index, and the first and last creation.
func createPods(ctx context.Context, cs kubernetes.Interface, o options) ([]time.Time, time.Time, time.Time, error) {
	pods := layout(o)
	created := make([]time.Time, len(pods))
	start := time.Now()
	err := parallel(len(pods), o.creators, func(i int) error {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pods[i].name, Namespace: "bench"},
			Spec: v1.PodSpec{SchedulerName: "gpusched", Containers: []v1.Container{{Name: "train", Image: "train",
				Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}}
		if pods[i].gang != "" {
			p.Labels = map[string]string{"gpusched.io/job": pods[i].gang}
			p.Annotations = map[string]string{"gpusched.io/min-replicas": fmt.Sprint(o.gangSize)}
		}
		_, err := cs.CoreV1().Pods("bench").Create(ctx, p, metav1.CreateOptions{})
		created[i] = time.Now()
		return err
	})
	last := slices.MaxFunc(created, func(a, b time.Time) int { return a.Compare(b) })
	log.Printf("created %d pods in %.1f s: %.0f pods/s", len(pods), last.Sub(start).Seconds(), float64(len(pods))/last.Sub(start).Seconds())
	return created, start, last, err
}

// parallel runs f(0..n-1) on k goroutines; it returns the first error.
func parallel(n, k int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	wg.Wait()
	return first
}

// watcher records when each pod was first seen bound.
type watcher struct {
	mu    sync.Mutex
	bound map[string]time.Time
}

func startWatch(ctx context.Context, cs kubernetes.Interface) (*watcher, error) {
	w := &watcher{bound: map[string]time.Time{}}
	rv := ""
	open := func() (watch.Interface, error) {
		return cs.CoreV1().Pods("bench").Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}
	wi, err := open()
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			for ev := range wi.ResultChan() {
				p, ok := ev.Object.(*v1.Pod)
				if !ok {
					continue
				}
				rv = p.ResourceVersion
				if p.Spec.NodeName == "" {
					continue
				}
				w.mu.Lock()
				if _, seen := w.bound[p.Name]; !seen {
					w.bound[p.Name] = time.Now()
				}
				w.mu.Unlock()
			}
			for {
				if wi, err = open(); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return w, nil
}

func (w *watcher) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bound)
}

// waitSettled waits until want pods are bound, or none was for settle.
func (w *watcher) waitSettled(want int, settle time.Duration) {
	last, lastChange := -1, time.Now()
	for {
		n := w.count()
		if n != last {
			last, lastChange = n, time.Now()
			log.Printf("%d pods bound", n)
		}
		if n >= want || time.Since(lastChange) > settle {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// gpusched is the running scheduler.
type gpusched struct {
	cmd     *exec.Cmd
	done    chan struct{}
	peak    atomic.Int64 // KiB, VmHWM
	metrics atomic.Value // string: its metrics address
	// watching is when it had read the cluster (its informers synced).
	watching time.Time
}

// cpu returns the process's user and system CPU seconds so far.
func (g *gpusched) cpu() float64 { return procCPU(g.cmd.Process.Pid) }

// procCPU returns a process's user and system CPU seconds so far (0 when
// it cannot be read).
func procCPU(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var ut, st float64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return (ut + st) / 100 // USER_HZ
}

// cpuUse is a snapshot of the CPU seconds used so far by the bed's
// processes, gpusched, this program, and the whole machine (busy and
// total, all cores: other sessions' work included).
type cpuUse struct {
	procs       map[string]float64
	busy, total float64
	at          time.Time
}

// bedPIDs reads the bed's process IDs from DIR/run/NAME.pid.
func bedPIDs(bed *kubebed.Bed) map[string]int {
	out := map[string]int{}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"} {
		data, err := os.ReadFile(filepath.Join(bed.Dir, "run", name+".pid"))
		if err != nil {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(string(data), &pid); err == nil {
			out[name] = pid
		}
	}
	return out
}

func snapshotCPU(pids map[string]int, g *gpusched) cpuUse {
	u := cpuUse{procs: map[string]float64{}, at: time.Now()}
	for name, pid := range pids {
		u.procs[name] = procCPU(pid)
	}
	u.procs["kubebench"] = procCPU(os.Getpid())
	if g != nil {
		u.procs["gpusched"] = g.cpu()
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		for i, f := range strings.Fields(line)[1:] {
			if i >= 8 { // guest time is counted in user time already
				break
			}
			var v float64
			fmt.Sscan(f, &v)
			u.total += v / 100
			if i != 3 && i != 4 { // idle, iowait
				u.busy += v / 100
			}
		}
	}
	return u
}

// scrape returns the samples of gpusched's metrics whose names start with
// one of prefixes.
func (g *gpusched) scrape(prefixes ...string) []string {
	addr, _ := g.metrics.Load().(string)
	if addr == "" {
		return nil
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for _, p := range prefixes {
			if strings.HasPrefix(sc.Text(), p) {
				out = append(out, sc.Text())
			}
		}
	}
	return out
}

func startGpusched(bin string, bed *kubebed.Bed, o options) (*gpusched, error) {
	args := append([]string{"kube", "--kubeconfig", bed.Kubeconfig, "--metrics-addr", "127.0.0.1:0"}, strings.Fields(o.gpuschedArgs)...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(bed.Env(), "KUBE_FEATURE_WatchListClient=false")
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &gpusched{cmd: cmd, done: make(chan struct{})}
	watching := make(chan struct{})
	var logw *os.File
	if o.logFile != "" {
		if logw, err = os.Create(o.logFile); err != nil {
			return nil, err
		}
	}
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			if logw != nil {
				fmt.Fprintln(logw, line)
			}
			if _, rest, ok := strings.Cut(line, `msg="serving metrics" addr=`); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					g.metrics.Store(f[0])
				}
			}
			if strings.Contains(line, "watching the cluster") {
				once.Do(func() { close(watching) })
			}
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "watching") {
				log.Printf("gpusched: %s", line)
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(g.done) }()
	go func() {
		for {
			select {
			case <-g.done:
				return
			case <-time.After(100 * time.Millisecond):
				if kb := vmHWM(cmd.Process.Pid); kb > g.peak.Load() {
					g.peak.Store(kb)
				}
			}
		}
	}()
	select {
	case <-watching:
		g.watching = time.Now()
	case <-g.done:
		return nil, fmt.Errorf("gpusched exited at start")
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("gpusched did not start watching within 2 minutes")
	}
	return g, nil
}

func (g *gpusched) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
	}
}

// vmHWM reads a process's peak resident set size in KiB.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb
		}
	}
	return 0
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

// report prints the figures.
func report(o options, w *watcher, g *gpusched, created []time.Time, firstCreate, lastCreate time.Time, load0, loadEnd string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lat []time.Duration
	var lastBind time.Time
	for i, p := range layout(o) {
		at, ok := w.bound[p.name]
		if !ok {
			continue
		}
		if at.After(lastBind) {
			lastBind = at
		}
		since := created[i]
		if o.mode == "backlog" {
			since = g.watching // the pods waited for gpusched to start
		}
		lat = append(lat, at.Sub(since))
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(int(p*float64(len(lat))), len(lat)-1)]
	}
	from, start := "first creation", firstCreate
	if o.mode == "backlog" {
		from, start = "gpusched watching", g.watching
	}
	span := lastBind.Sub(start)
	fmt.Printf("\nkubebench mode=%s: %d nodes x %d GPUs; %d single-pod jobs + %d gangs of %d (1 GPU per pod)\n",
		o.mode, o.nodes, o.gpusPerNode, o.singles, o.gangs, o.gangSize)
	fmt.Printf("pods created:       %d in %.2f s (%.0f pods/s)\n", len(created), lastCreate.Sub(firstCreate).Seconds(),
		float64(len(created))/lastCreate.Sub(firstCreate).Seconds())
	fmt.Printf("pods bound:         %d (cluster capacity %d GPUs)\n", len(lat), o.nodes*o.gpusPerNode)
	fmt.Printf("bound per second:   %.0f pods/s (%s to last Binding: %.2f s)\n", float64(len(lat))/span.Seconds(), from, span.Seconds())
	what := "creation→bound:    "
	if o.mode == "backlog" {
		what = "gpusched ready→bound:"
	}
	fmt.Printf("%s p50 %.3f s, p99 %.3f s, max %.3f s\n", what, pct(0.5).Seconds(), pct(0.99).Seconds(), pct(1).Seconds())
	fmt.Printf("gpusched peak RSS:  %.0f MB (VmHWM)\n", float64(g.peak.Load())/1024)
	fmt.Printf("gpusched CPU:       %.1f s (user+system)\n", g.cpu())
	fmt.Printf("load average:       %s before, %s after (%d cores)\n", load0, loadEnd, runtime.NumCPU())
	for _, m := range g.scrape("gpusched_schedule_round_seconds_sum", "gpusched_schedule_round_seconds_count",
		"gpusched_bind_latency_seconds_sum", "gpusched_bind_latency_seconds_count", "gpusched_bindings_total") {
		fmt.Printf("  %s\n", m)
	}
	return nil
}

// podSpec names a pod of the benchmark and its gang ("" for none).
type podSpec struct{ name, gang string }

// layout lists the pods in creation order: the gangs' pods spread among
// the single pods, a gang's pods one after another.
func layout(o options) []podSpec {
	var pods []podSpec
	gang := func(g int) {
		for k := range o.gangSize {
			pods = append(pods, podSpec{name: fmt.Sprintf("gang-%03d-%d", g, k), gang: fmt.Sprintf("gang-%03d", g)})
		}
	}
	every := max(o.singles/max(o.gangs, 1), 1)
	g := 0
	for i := range o.singles {
		pods = append(pods, podSpec{name: fmt.Sprintf("single-%05d", i)})
		if (i+1)%every == 0 && g < o.gangs {
			gang(g)
			g++
		}
	}
	for ; g < o.gangs; g++ {
		gang(g)
	}
	return pods
}
