package kube_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestPreemptNewestCheckpoint: under hlas with priority_threshold_ratio
// 0.5 (every running job of similar attained service may be stopped, as
// in the service's TestVictimWithNewestCheckpoint), two 4-GPU jobs fill an
// 8-GPU node; both report checkpoints with `gpusched progress` (the one
// that started second, which hlas would rather keep, reports the newer).
// A newcomer preempts exactly one of them: the one whose
// gpusched.io/last-checkpoint is newer (it loses the least work). Its pod
// is deleted with its own grace period (30 s: the deletion's grace on the
// object), gets a Preempted event naming the policy and the checkpoint,
// and the newcomer is bound in its place.
func TestPreemptNewestCheckpoint(t *testing.T) {
	e := newEnv(t)
	node := e.name + "-a"
	e.node(node, "Tesla-V100-SXM2-16GB", 8)
	cfg := filepath.Join(t.TempDir(), "sched.yaml")
	if err := os.WriteFile(cfg, []byte("policy: hlas\nhlas:\n  priority_threshold_ratio: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.gpusched("--config", cfg)
	for _, name := range []string{"stale", "fresh"} {
		e.create(e.podSpec(name, 4))
		e.waitBound(name, 30*time.Second)
		time.Sleep(500 * time.Millisecond) // stale runs longer: hlas would rather stop it
	}
	e.progress("stale", "--steps", "100", "--checkpoint")
	time.Sleep(1500 * time.Millisecond)
	e.progress("fresh", "--steps", "80", "--checkpoint")
	e.progress("fresh", "--steps", "90") // plain progress: the checkpoint stays
	p := e.pod("fresh")
	if p.Annotations["gpusched.io/steps"] != "90" || p.Annotations["gpusched.io/checkpoint-steps"] != "80" ||
		p.Annotations["gpusched.io/last-checkpoint"] == "" {
		t.Fatalf("annotations after gpusched progress: %v", p.Annotations)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	grace := make(chan int64, 1)
	w, err := e.cs.CoreV1().Pods(e.name).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=fresh"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && ev.Type != watch.Added && p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil {
				grace <- *p.DeletionGracePeriodSeconds
				return
			}
		}
	}()

	e.create(e.podSpec("newcomer", 4))
	if got := e.waitBound("newcomer", 60*time.Second); got != node {
		t.Fatalf("newcomer bound to %s", got)
	}
	select {
	case g := <-grace:
		if g != 30 {
			t.Errorf("the victim was deleted with a grace period of %d s, want its own 30", g)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the pod with the newest checkpoint was not deleted")
	}
	if s := e.pod("stale"); s == nil || s.DeletionTimestamp != nil {
		t.Fatalf("the job with the older checkpoint was preempted: %+v", s)
	}
	e.eventually("the Preempted event", 20*time.Second, func() string {
		if !e.hasEvent("fresh", "Preempted", "preempted by the hlas policy (last checkpoint at step 80, ") {
			return "none"
		}
		return ""
	})
}

// progress runs `gpusched progress` for one of the test's pods, as a
// training container would (here with the admin kubeconfig).
func (e *kenv) progress(pod string, args ...string) {
	e.t.Helper()
	all := append([]string{"progress", "--kubeconfig", e.bed.Kubeconfig, "--namespace", e.name, "--pod", pod}, args...)
	cmd := exec.Command(binary, all...)
	cmd.Env = append(e.bed.Env(), "KUBE_FEATURE_WatchListClient=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("gpusched %s: %v\n%s", strings.Join(all, " "), err, out)
	}
}
