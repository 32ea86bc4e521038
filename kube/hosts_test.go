package kube

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHostName(t *testing.T) {
	pod := func(name, hostname, subdomain, ip string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   v1.PodSpec{Hostname: hostname, Subdomain: subdomain},
			Status: v1.PodStatus{PodIP: ip}}
	}
	tests := []struct {
		what string
		pod  *v1.Pod
		want string
	}{
		{"hostname and subdomain (Volcano's svc plugin)", pod("j-worker-0", "j-worker-0", "j", "10.0.0.1"), "j-worker-0.j"},
		{"subdomain, no hostname: the pod's name", pod("p1", "", "svc", "10.0.0.2"), "p1.svc"},
		{"no subdomain: the IP", pod("p2", "h", "", "10.0.0.3"), "10.0.0.3"},
		{"not addressable yet", pod("p3", "", "", ""), ""},
	}
	for _, tt := range tests {
		if got := hostName(tt.pod); got != tt.want {
			t.Errorf("%s: hostName = %q, want %q", tt.what, got, tt.want)
		}
	}
}

// TestHostsQueue: the queue keeps the latest write per ConfigMap, in the
// order each ConfigMap first arrived, and is empty after the last.
func TestHostsQueue(t *testing.T) {
	q := newHostsQueue()
	q.push(nil)
	if _, ok := q.pop(); ok {
		t.Fatal("an empty queue popped a task")
	}
	q.push([]hostsTask{{ns: "a", name: "j1-hosts", gen: 1, text: "h1:1\n"}, {ns: "a", name: "j2-hosts", gen: 1}})
	q.push([]hostsTask{{ns: "a", name: "j1-hosts", gen: 2, text: "h1:1\nh2:1\n"}})
	select {
	case <-q.ready:
	default:
		t.Error("push did not signal the worker")
	}
	first, ok := q.pop()
	if !ok || first.name != "j1-hosts" || first.gen != 2 || first.text != "h1:1\nh2:1\n" {
		t.Errorf("first pop %+v %v, want j1-hosts at generation 2 (the latest)", first, ok)
	}
	second, ok := q.pop()
	if !ok || second.name != "j2-hosts" {
		t.Errorf("second pop %+v %v, want j2-hosts", second, ok)
	}
	if t3, ok := q.pop(); ok {
		t.Errorf("third pop %+v: want none (j1's older write replaced, not queued twice)", t3)
	}
}

func TestFillHosts(t *testing.T) {
	cm := &v1.ConfigMap{}
	fill(cm, hostsTask{text: "a.j:2\nb.j:2\n", gen: 7})
	if cm.Data[HostsKey] != "a.j:2\nb.j:2\n" || cm.Data[GenerationKey] != "7" || cm.Annotations[AnnHostsGeneration] != "7" {
		t.Errorf("filled %+v / %+v", cm.Data, cm.Annotations)
	}
	cm.Data["other"] = "kept"
	fill(cm, hostsTask{text: "", gen: 8})
	if cm.Data[HostsKey] != "" || cm.Data[GenerationKey] != "8" || cm.Data["other"] != "kept" {
		t.Errorf("refilled %+v", cm.Data)
	}
}
