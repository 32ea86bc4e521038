package kube

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSetPodRelevance: a pod's change asks for a round unless it is
// gpusched's own call coming back — the pod seen bound on the node
// gpusched was binding it to, or terminating after gpusched deleted it.
func TestSetPodRelevance(t *testing.T) {
	now := metav1.NewTime(t0)
	for _, tc := range []struct {
		name     string
		assumed  string // node gpusched was binding the pod to ("": none)
		deleted  bool   // gpusched deleted it
		change   func(*v1.Pod)
		relevant bool
	}{
		{"bound where gpusched bound it", "n1", false, func(p *v1.Pod) { p.Spec.NodeName = "n1" }, false},
		{"bound elsewhere than assumed", "n1", false, func(p *v1.Pod) { p.Spec.NodeName = "n2" }, true},
		{"bound by someone else", "", false, func(p *v1.Pod) { p.Spec.NodeName = "n1" }, true},
		{"terminating after gpusched's delete", "", true, func(p *v1.Pod) { p.DeletionTimestamp = &now }, false},
		{"terminating, deleted by someone else", "", false, func(p *v1.Pod) { p.DeletionTimestamp = &now }, true},
		{"status only (kwok: Running)", "", false, func(p *v1.Pod) { p.Status.Phase = v1.PodRunning }, false},
		{"a setting changed", "", false, func(p *v1.Pod) { p.Annotations[AnnPriority] = "3" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			p := mkPod("p", 1)
			if _, relevant := w.setPod(p, t0); !relevant {
				t.Fatal("a new pod is not relevant")
			}
			if tc.assumed != "" {
				w.assumed[p.UID] = tc.assumed
			}
			if tc.deleted {
				w.deleted[p.UID] = true
			}
			q := p.DeepCopy()
			tc.change(q)
			if _, relevant := w.setPod(q, t0); relevant != tc.relevant {
				t.Errorf("relevant = %v, want %v", relevant, tc.relevant)
			}
			if q.Spec.NodeName != "" && w.assumed[p.UID] != "" {
				t.Error("a pod seen bound stays assumed")
			}
			if q.DeletionTimestamp != nil && w.deleted[p.UID] {
				t.Error("a pod seen terminating stays in deleted")
			}
		})
	}
}

// TestOrderedJobs: rounds walk the jobs in seq order; a forgotten job
// leaves the order, and a job removed from the map without being marked
// (a bug elsewhere) does not survive in it.
func TestOrderedJobs(t *testing.T) {
	w := newWorld()
	for _, k := range []string{"c", "a", "b"} {
		w.job(k, t0)
	}
	keys := func() []string {
		var out []string
		for _, j := range w.ordered() {
			out = append(out, j.key)
		}
		return out
	}
	if got := keys(); len(got) != 3 || got[0] != "c" || got[1] != "a" || got[2] != "b" {
		t.Fatalf("order %v, want [c a b]", got)
	}
	w.jobs["a"].forgotten = true
	delete(w.jobs, "a")
	if got := keys(); len(got) != 2 || got[0] != "c" || got[1] != "b" {
		t.Fatalf("after forgetting a: %v", got)
	}
	delete(w.jobs, "c") // not marked
	w.job("d", t0)
	if got := keys(); len(got) != 2 || got[0] != "b" || got[1] != "d" {
		t.Fatalf("after an unmarked removal: %v, want [b d]", got)
	}
}
