package kube_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLeaderElection: two `gpusched kube --leader-elect` processes share
// a Lease; single-pod jobs arrive every 200 ms. The leader is killed with
// SIGKILL (no chance to release the lease); the standby takes over and
// binds within 15 s (the defaults: an 8 s lease, retries every 1.5 s), every job
// is bound in the end, and no Binding was ever refused because a pod was
// bound already (gpusched_bindings_total{result="conflict"} stays 0 and
// neither process logged a conflict).
func TestLeaderElection(t *testing.T) {
	e := newEnv(t)
	e.node(e.name+"-a", "Tesla-V100-SXM2-16GB", 64)
	e.node(e.name+"-b", "Tesla-V100-SXM2-16GB", 64)
	args := []string{"--leader-elect", "--namespace", e.name}
	procs := []*proc{e.gpusched(args...), e.gpusched(args...)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	holder := func() string {
		l, err := e.cs.CoordinationV1().Leases(e.name).Get(ctx, "gpusched", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	var leader *proc
	e.eventually("a leader", 30*time.Second, func() string {
		id := holder()
		parts := strings.Split(id, "_")
		if len(parts) < 3 {
			return "lease holder " + id
		}
		pid, _ := strconv.Atoi(parts[len(parts)-2])
		for _, p := range procs {
			if p.cmd.Process.Pid == pid {
				leader = p
				return ""
			}
		}
		return "lease holder " + id + " is neither process"
	})
	standby := procs[0]
	if standby == leader {
		standby = procs[1]
	}

	binds := watchBinds(t, e, ctx)
	const jobs = 100
	created := make(chan struct{})
	go func() {
		defer close(created)
		for i := range jobs {
			p := e.podSpec(fmt.Sprintf("job-%03d", i), 1)
			if _, err := e.cs.CoreV1().Pods(e.name).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Errorf("create: %v", err)
				return
			}
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	}()
	e.eventually("the leader binding", 30*time.Second, func() string {
		if n := binds.count(); n < 10 {
			return fmt.Sprintf("%d bound", n)
		}
		return ""
	})
	killed := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-leader.done
	boundAtKill := binds.count()
	e.eventually("a binding by the new leader", 30*time.Second, func() string {
		if binds.firstAfter(killed).IsZero() {
			return fmt.Sprintf("none since the kill (%d bound before)", boundAtKill)
		}
		return ""
	})
	took := binds.firstAfter(killed).Sub(killed)
	t.Logf("the standby bound its first pod %.1f s after the leader was killed (%d pods bound before)", took.Seconds(), boundAtKill)
	if took > 15*time.Second {
		t.Errorf("the standby took %v to bind after the leader died, want at most 15 s", took)
	}
	<-created
	e.eventually("every job bound", 60*time.Second, func() string {
		if n := binds.count(); n != jobs {
			return fmt.Sprintf("%d of %d bound", n, jobs)
		}
		return ""
	})
	if id := holder(); !strings.Contains(id, "_"+strconv.Itoa(standby.cmd.Process.Pid)+"_") {
		t.Errorf("lease holder %q is not the standby", id)
	}
	if n := metric(t, standby.metricsAddr(t), `gpusched_bindings_total{result="conflict"}`); n != 0 {
		t.Errorf("%v Bindings refused as the pod was already bound", n)
	}
	for _, p := range procs {
		if strings.Contains(p.out.String(), "result=conflict") {
			t.Errorf("a process logged a binding conflict:\n%s", p.out.String())
		}
	}
}

// binds records when each pod of the test was first seen bound.
type binds struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (b *binds) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.at)
}

// firstAfter returns the earliest bind time after t (zero if none).
func (b *binds) firstAfter(t time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	var first time.Time
	for _, at := range b.at {
		if at.After(t) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// watchBinds watches the test's pods and records when each is bound.
func watchBinds(t *testing.T, e *kenv, ctx context.Context) *binds {
	t.Helper()
	b := &binds{at: map[string]time.Time{}}
	w, err := e.cs.CoreV1().Pods(e.name).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok || p.Spec.NodeName == "" {
				continue
			}
			b.mu.Lock()
			if _, seen := b.at[p.Name]; !seen {
				b.at[p.Name] = time.Now()
			}
			b.mu.Unlock()
		}
	}()
	return b
}

// metric scrapes one sample of a Prometheus text page.
func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in the metrics:\n%s", name, body)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
