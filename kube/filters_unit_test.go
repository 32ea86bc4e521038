package kube

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scenario tests of the filters that look at other pods and of the volume
// filters: one round each, the bindings and wait reasons worked out by
// hand.

func zoned(zone string) nodeOpt {
	return func(n *v1.Node) {
		n.Labels["topology.kubernetes.io/zone"] = zone
		n.Labels["kubernetes.io/hostname"] = n.Name
	}
}

func labelled(k, v string) podOpt { return func(p *v1.Pod) { p.Labels[k] = v } }

func antiOn(key, app string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}}}}
	}
}

func affineOn(key, app string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}}}}
	}
}

func spreadOn(key, app string, skew int32) podOpt {
	return func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
}

func prefersZone(z string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
			Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{
				Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{z}}}}}}}}
	}
}

func prefersNear(app string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: 5, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				TopologyKey: "topology.kubernetes.io/zone"}}}}}
	}
}

func hostPortOpt(port int32) podOpt {
	return func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: port}} }
}

func claims(name string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}
	}
}

func otherSched(node string) podOpt {
	return func(p *v1.Pod) { p.Spec.SchedulerName, p.Spec.NodeName = "default-scheduler", node }
}

func TestRoundPodFilters(t *testing.T) {
	v100 := "Tesla-V100-SXM2-16GB"
	three := func() []any {
		return []any{mkNode("a", v100, 8, zoned("z1")), mkNode("b", v100, 8, zoned("z2")), mkNode("c", v100, 8, zoned("z3"))}
	}
	with := func(objs ...any) []any { return append(three(), objs...) }
	tests := []struct {
		name   string
		objs   []any
		bound  map[string]string
		reason map[string]string
	}{
		{"pack puts a pod beside another; anti-affinity keeps them apart (each job one pod)",
			with(mkPod("x", 1, labelled("app", "w"), antiOn("kubernetes.io/hostname", "w")),
				mkPod("y", 1, labelled("app", "w"), antiOn("kubernetes.io/hostname", "w"))),
			map[string]string{"x": "a", "y": "b"}, nil},
		{"a gang whose pods repel each other: one per node",
			with(mkPod("g-0", 1, gang("g", 3), labelled("app", "g"), antiOn("kubernetes.io/hostname", "g")),
				mkPod("g-1", 1, gang("g", 3), labelled("app", "g"), antiOn("kubernetes.io/hostname", "g")),
				mkPod("g-2", 1, gang("g", 3), labelled("app", "g"), antiOn("kubernetes.io/hostname", "g"))),
			map[string]string{"g-0": "a", "g-1": "b", "g-2": "c"}, nil},
		{"a gang spread over zones with max skew 1",
			with(mkPod("s-0", 2, gang("s", 3), labelled("app", "s"), spreadOn("topology.kubernetes.io/zone", "s", 1)),
				mkPod("s-1", 2, gang("s", 3), labelled("app", "s"), spreadOn("topology.kubernetes.io/zone", "s", 1)),
				mkPod("s-2", 2, gang("s", 3), labelled("app", "s"), spreadOn("topology.kubernetes.io/zone", "s", 1))),
			map[string]string{"s-0": "a", "s-1": "b", "s-2": "c"}, nil},
		{"an existing pod's anti-affinity keeps the new pod out of its zone",
			with(mkPod("old", 0, otherSched("a"), labelled("app", "db"), antiOn("topology.kubernetes.io/zone", "web")),
				mkPod("web", 1, labelled("app", "web"))),
			map[string]string{"web": "b"}, nil},
		{"affinity to a pod of another scheduler's zone",
			with(mkPod("db", 0, otherSched("c"), labelled("app", "db")), mkPod("web", 1, affineOn("topology.kubernetes.io/zone", "db"))),
			map[string]string{"web": "c"}, nil},
		{"a host port held on the only node the pod may use",
			with(mkPod("old", 0, otherSched("c"), hostPortOpt(9000)),
				mkPod("p", 1, hostPortOpt(9000), func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "c"} })),
			map[string]string{}, map[string]string{"p": "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 node(s) didn't match Pod's node affinity/selector."}},
		{"preferred node affinity among nodes pack ranks alike",
			with(mkPod("p", 1, prefersZone("z3"))),
			map[string]string{"p": "c"}, nil},
		{"preferred pod affinity to another scheduler's pod's zone",
			with(mkPod("db", 0, otherSched("b"), labelled("app", "db")), mkPod("p", 1, prefersNear("db"))),
			map[string]string{"p": "b"}, nil},
		{"a ScheduleAnyway spread constraint picks the emptiest zone",
			with(mkPod("o1", 0, otherSched("a"), labelled("app", "s")), mkPod("o2", 0, otherSched("b"), labelled("app", "s")),
				mkPod("p", 1, labelled("app", "s"), func(p *v1.Pod) {
					spreadOn("topology.kubernetes.io/zone", "s", 1)(p)
					p.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable = v1.ScheduleAnyway
				})),
			map[string]string{"p": "c"}, nil},
		{"preferences do not overrule the placer: pack's best fit wins",
			with(mkPod("o", 4, otherSched("a")), mkPod("p", 4, prefersZone("z3"))),
			map[string]string{"p": "a"}, nil},
		{"anti-affinity against pods everywhere",
			with(mkPod("o1", 0, otherSched("a"), labelled("app", "x")), mkPod("o2", 0, otherSched("b"), labelled("app", "x")),
				mkPod("o3", 0, otherSched("c"), labelled("app", "x")), mkPod("p", 1, antiOn("kubernetes.io/hostname", "x"))),
			map[string]string{}, map[string]string{"p": "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSched(t, "fifo", "pack")
			bound, r := feed(t, s, t0, tc.objs...)
			checkRound(t, bound, r, tc.bound, tc.reason)
		})
	}
}

// TestRoundVolumes: a claim bound to a zonal volume keeps its pod in the
// volume's zone, one bound to a local volume on its node; an unbound
// claim and a missing one keep their pods waiting, saying why.
func TestRoundVolumes(t *testing.T) {
	v100 := "Tesla-V100-SXM2-16GB"
	s := testSched(t, "fifo", "pack")
	s.w.mu.Lock()
	pvc := func(name, volume string) {
		s.w.setPVC(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume}})
	}
	pvc("zonal", "pv-zonal")
	pvc("local", "pv-local")
	pvc("unbound", "")
	s.w.setPV(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-zonal", Labels: map[string]string{"topology.kubernetes.io/zone": "z2"}}})
	s.w.setPV(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: v1.PersistentVolumeSpec{NodeAffinity: &v1.VolumeNodeAffinity{
		Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
			Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{"c"}}}}}}}}})
	s.w.mu.Unlock()
	bound, r := feed(t, s, t0, mkNode("a", v100, 8, zoned("z1")), mkNode("b", v100, 8, zoned("z2")), mkNode("c", v100, 8, zoned("z3")),
		mkPod("p-zonal", 1, claims("zonal")), mkPod("p-local", 1, claims("local")), mkPod("p-unbound", 1, claims("unbound")),
		mkPod("p-missing", 1, claims("nosuch")))
	want := map[string]string{"p-zonal": "b", "p-local": "c"}
	for pod, node := range want {
		if bound[pod] != node {
			t.Errorf("%s bound to %q, want %q", pod, bound[pod], node)
		}
	}
	if len(bound) != 2 {
		t.Errorf("bound %v, want %v", bound, want)
	}
	for pod, why := range map[string]string{"p-unbound": "its PersistentVolumeClaim unbound is not bound", "p-missing": `persistentvolumeclaim "nosuch" not found`} {
		if got := reasonOf(r, pod); !strings.Contains(got, why) {
			t.Errorf("%s waits for %q, want it to say %q", pod, got, why)
		}
	}
}

// FuzzPodTerms: any pod object reads its filter terms without a panic, is
// placed nowhere when they are malformed, and its checks and scores run
// on nodes with and without the keys they name.
func FuzzPodTerms(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"namespace":"ns","labels":{"app":"a"}},"spec":{"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"a"}},"topologyKey":"kubernetes.io/hostname"}]}}}}`,
		`{"spec":{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["x"]}]},"namespaceSelector":{},"topologyKey":"zone"}]}}}}`,
		`{"spec":{"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"a"}},"matchLabelKeys":["app"],"minDomains":3}]}}`,
		`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"hostPort":8080,"hostIP":"10.0.0.1","protocol":"UDP"}]}]}}`,
		`{"spec":{"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchExpressions":[{"key":"app","operator":"Bogus"}]},"topologyKey":"zone"}]}}}}`,
		`{"spec":{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":3,"preference":{"matchExpressions":[{"key":"zone","operator":"Gt","values":["x"]}]}}]}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p v1.Pod
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			return
		}
		sp, _ := stripPod(&p)
		tm := podTerms(sp.(*v1.Pod))
		if tm.err != nil && !tm.constrained() {
			t.Fatalf("malformed terms (%v) but not constrained: the pod would be placed", tm.err)
		}
		tp := newTopo(nil)
		for _, name := range []string{"bare", "zoned"} {
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
			if name == "zoned" {
				n.Labels["zone"], n.Labels["kubernetes.io/hostname"] = "z1", name
			}
			tp.nodes[name] = n
		}
		tp.add("zoned", tm, false)
		c := newPodCheck(tm, tp)
		for _, name := range []string{"bare", "zoned", "missing"} {
			c.check(name)
			c.score(name)
		}
		c.clone().add(tm, "bare")
	})
}

// FuzzZoneSet: a volume's zone label splits into non-empty zones.
func FuzzZoneSet(f *testing.F) {
	for _, s := range []string{"z1", "z1__z2", "__", " a __ b ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for z := range zoneSet(s) {
			if z == "" || strings.TrimSpace(z) != z {
				t.Fatalf("zoneSet(%q) has zone %q", s, z)
			}
		}
	})
}

// TestMalformedTerms: a pod whose anti-affinity selector does not parse
// is placed nowhere, and its reason names the field.
func TestMalformedTerms(t *testing.T) {
	bad := func(p *v1.Pod) {
		antiOn("kubernetes.io/hostname", "x")(p)
		p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Near"}}
	}
	s := testSched(t, "fifo", "pack")
	bound, r := feed(t, s, t0, mkNode("a", "Tesla-V100-SXM2-16GB", 8, zoned("z1")), mkPod("p", 1, bad))
	if len(bound) != 0 {
		t.Fatalf("bound %v", bound)
	}
	want := "0/1 nodes are available: 1 parsing pod: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector:"
	if got := reasonOf(r, "p"); !strings.HasPrefix(got, want) {
		t.Errorf("p waits for %q, want %q...", got, want)
	}
}
