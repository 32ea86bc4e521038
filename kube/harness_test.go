package kube_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpusched/gpusched/internal/testbed/kubebed"
)

// The end-to-end tests run the gpusched binary (`gpusched kube`) against
// one real test bed (scripts/testbed: etcd, kube-apiserver,
// kube-controller-manager, kwok) shared by the package. Each test has its
// own namespace, scheduler name and nodes (labelled gpusched.io/e2e=NAME,
// which its gpusched selects with --node-selector), so that tests do not
// see each other's pods and nodes.

var (
	binary string
	shared = kubebed.NewShared(kubebed.Options{})
)

// e2eLabel marks a test's nodes.
const e2eLabel = "gpusched.io/e2e"

func TestMain(m *testing.M) {
	flag.Parse()
	// The bed's etcd cannot serve watch-list streams (docs/KUBERNETES.md):
	// clients must use plain list and watch.
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	dir, err := os.MkdirTemp("", "gpusched-kube-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gpusched")
	build := exec.Command("go", "build", "-o", binary, "../cmd/gpusched")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build gpusched:", err)
		os.Exit(1)
	}
	code := m.Run()
	for _, sh := range []*kubebed.Shared{shared, volcanoShared, jobsetShared, kueueShared} {
		if err := sh.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// kenv is one test's share of the bed.
type kenv struct {
	t    *testing.T
	bed  *kubebed.Bed
	cs   kubernetes.Interface
	name string // namespace, scheduler name and node label value
}

// newEnv gives a test its namespace on the shared bed (skipping under
// -short) and removes its namespace and nodes at the end.
func newEnv(t *testing.T) *kenv {
	t.Helper()
	return newEnvOn(t, shared)
}

// newEnvOn is newEnv on the shared bed sh.
func newEnvOn(t *testing.T, sh *kubebed.Shared) *kenv {
	t.Helper()
	bed := sh.Get(t)
	rc, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.QPS, rc.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	name := "e2e-" + strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(strings.TrimPrefix(t.Name(), "Test"), "-"))
	e := &kenv{t: t, bed: bed, cs: cs, name: name}
	ctx := context.Background()
	// With -count above 1, the previous run's namespace may still be
	// terminating: wait for it to go.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = cs.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		_ = cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: e2eLabel + "=" + name})
	})
	return e
}

// node creates a kwok node with gpus GPUs of product and waits until it
// is Ready.
func (e *kenv) node(name, product string, gpus int, mods ...func(*v1.Node)) {
	e.t.Helper()
	q := resource.MustParse(fmt.Sprint(gpus))
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		Labels:      map[string]string{e2eLabel: e.name, "nvidia.com/gpu.product": product}}}
	rl := v1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"), "nvidia.com/gpu": q}
	n.Status.Capacity, n.Status.Allocatable = rl, rl
	for _, m := range mods {
		m(n)
	}
	ctx := context.Background()
	created, err := e.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(n.Spec.Taints) > 0 || n.Spec.Unschedulable {
		created.Spec = n.Spec
		if _, err := e.cs.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	// The API server taints a new node node.kubernetes.io/not-ready until
	// kube-controller-manager has seen it Ready: gpusched rightly keeps
	// pods off it until then, so the test waits for both.
	e.eventually("node "+name+" Ready and without the not-ready taint", 60*time.Second, func() string {
		got, err := e.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		for _, taint := range got.Spec.Taints {
			if taint.Key == v1.TaintNodeNotReady || taint.Key == v1.TaintNodeUnreachable {
				return "tainted " + taint.Key
			}
		}
		for _, c := range got.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				return ""
			}
		}
		return "not Ready"
	})
}

// podSpec returns a pod of the test's scheduler asking for gpus GPUs.
func (e *kenv) podSpec(name string, gpus int) *v1.Pod {
	grace := int64(30)
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.name, Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: e.name, TerminationGracePeriodSeconds: &grace, RestartPolicy: v1.RestartPolicyNever,
			Containers: []v1.Container{{Name: "train", Image: "train:latest",
				Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"nvidia.com/gpu": resource.MustParse(fmt.Sprint(gpus))}}}}}}
}

// create creates a pod.
func (e *kenv) create(p *v1.Pod) {
	e.t.Helper()
	if _, err := e.cs.CoreV1().Pods(e.name).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// pod returns a pod of the test's namespace, nil when it does not exist.
func (e *kenv) pod(name string) *v1.Pod {
	e.t.Helper()
	p, err := e.cs.CoreV1().Pods(e.name).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// waitBound waits until pod name is bound and returns its node.
func (e *kenv) waitBound(name string, timeout time.Duration) string {
	e.t.Helper()
	node := ""
	e.eventually("pod "+name+" bound", timeout, func() string {
		p := e.pod(name)
		if p == nil {
			return "no pod"
		}
		node = p.Spec.NodeName
		if node == "" {
			return "pending: " + condition(p)
		}
		return ""
	})
	return node
}

// condition returns the message of a pod's PodScheduled condition.
func condition(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return string(c.Status) + " " + c.Reason + ": " + c.Message
		}
	}
	return "(no PodScheduled condition)"
}

// events returns the events about pod name, oldest first.
func (e *kenv) events(pod string) []v1.Event {
	e.t.Helper()
	list, err := e.cs.CoreV1().Events(e.name).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// hasEvent reports whether pod has an event of reason whose message
// contains text.
func (e *kenv) hasEvent(pod, reason, text string) bool {
	for _, ev := range e.events(pod) {
		if ev.Reason == reason && strings.Contains(ev.Message, text) {
			return true
		}
	}
	return false
}

// eventually polls check until it returns "" and fails the test with its
// last answer after timeout.
func (e *kenv) eventually(what string, timeout time.Duration, check func() string) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		state := check()
		if state == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not after %v; last: %s", what, timeout, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// proc is a running gpusched process.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// gpusched starts `gpusched kube` for the test (its scheduler name, its
// nodes, the bed's admin kubeconfig) with extra args; the test's cleanup
// stops it and prints its output if the test failed.
func (e *kenv) gpusched(args ...string) *proc {
	e.t.Helper()
	all := append([]string{"kube", "--kubeconfig", e.bed.Kubeconfig, "--scheduler-name", e.name,
		"--node-selector", e2eLabel + "=" + e.name, "--metrics-addr", "127.0.0.1:0"}, args...)
	return e.run(all...)
}

// run starts the gpusched binary with args in the background.
func (e *kenv) run(args ...string) *proc {
	e.t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(e.bed.Env(), "KUBE_FEATURE_WatchListClient=false")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	e.t.Cleanup(func() {
		p.stop()
		if e.t.Failed() {
			e.t.Logf("--- output of gpusched %s:\n%s", strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

// stop ends the process with SIGTERM, then SIGKILL.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// metricsAddr waits for the process to log its metrics address.
func (p *proc) metricsAddr(t *testing.T) string {
	t.Helper()
	re := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			return m[1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no metrics address in the output:\n%s", p.out.String())
	return ""
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
