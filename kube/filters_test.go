package kube_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFilters: on three 8-GPU nodes in three zones, with gpusched's pack
// placer (which would put everything on one node), two pods with a
// required anti-affinity against each other on kubernetes.io/hostname
// land on two nodes; a gang of three pods with a DoNotSchedule spread
// constraint over the zones (maxSkew 1) lands one per zone; and a pod
// whose host port another pod holds on the only node it may use waits,
// saying so in kube-scheduler's words.
func TestFilters(t *testing.T) {
	e := newEnv(t)
	zones := map[string]string{}
	for _, z := range []string{"a", "b", "c"} {
		name := e.name + "-" + z
		zones[name] = "zone-" + z
		e.node(name, "Tesla-V100-SXM2-16GB", 8, func(n *v1.Node) {
			n.Labels["kubernetes.io/hostname"] = name
			n.Labels["topology.kubernetes.io/zone"] = "zone-" + z
		})
	}
	g := e.gpusched("--placer", "pack")
	defer g.stop()

	mine := map[string]string{"gpusched.io/e2e": e.name}
	for _, name := range []string{"anti-0", "anti-1"} {
		p := e.podSpec(name, 1)
		p.Labels["app"] = "anti"
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "anti"}}, TopologyKey: "kubernetes.io/hostname"}}}}
		e.create(p)
	}
	a0, a1 := e.waitBound("anti-0", 60*time.Second), e.waitBound("anti-1", 60*time.Second)
	if a0 == a1 {
		t.Errorf("the anti-affinity pair shares node %s", a0)
	}

	for _, name := range []string{"spread-0", "spread-1", "spread-2"} {
		p := e.podSpec(name, 2)
		p.Labels["app"] = "spread"
		p.Labels["gpusched.io/job"] = "spread"
		p.Annotations["gpusched.io/min-replicas"] = "3"
		p.Spec.NodeSelector = mine
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
		e.create(p)
	}
	seen := map[string]bool{}
	for _, name := range []string{"spread-0", "spread-1", "spread-2"} {
		seen[zones[e.waitBound(name, 60*time.Second)]] = true
	}
	if len(seen) != 3 {
		t.Errorf("the spread gang uses zones %v, want all three", seen)
	}

	for _, name := range []string{"port-0", "port-1"} {
		p := e.podSpec(name, 1)
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": e.name + "-c"}
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 9000}}
		e.create(p)
		if name == "port-0" {
			e.waitBound(name, 60*time.Second)
		}
	}
	want := "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 node(s) didn't match Pod's node affinity/selector."
	e.eventually("port-1's reason", 60*time.Second, func() string {
		if c := condition(e.pod("port-1")); !strings.Contains(c, want) {
			return c
		}
		return ""
	})
	if n := e.pod("port-1").Spec.NodeName; n != "" {
		t.Errorf("port-1 was bound to %s beside port-0's host port", n)
	}
}
