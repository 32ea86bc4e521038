package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeports"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"k8s.io/utils/ptr"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
)

// The differential test of the node filters: random snapshots (nodes with
// zones, taints and allocatable; pods bound by another scheduler with
// labels, host ports and anti-affinity; gpusched's pending pods with
// affinity, anti-affinity, spread, host ports, tolerations, selectors and
// requests), gpusched's rounds run on each until they bind nothing more,
// and kube-scheduler's own Filter plugins judge the result: every binding,
// in the order made, passes them on the snapshot of the pods bound before
// it (zero violations), and every single-pod job left pending passes them
// on no node (nothing that kube-scheduler would place is left behind).

// liveLister is the plugins' snapshot, replaced as pods are bound.
type liveLister struct{ s *cache.Snapshot }

func (l *liveLister) NodeInfos() fwk.NodeInfoLister           { return l.s.NodeInfos() }
func (l *liveLister) StorageInfos() fwk.StorageInfoLister     { return l.s.StorageInfos() }
func (l *liveLister) PodGroupStates() fwk.PodGroupStateLister { return l.s.PodGroupStates() }

// kubeFilters is kube-scheduler's Filter plugins on a liveLister.
type kubeFilters struct {
	lister  *liveLister
	plugins []fwk.Plugin
}

func newKubeFilters(t *testing.T, namespaces ...string) *kubeFilters {
	schedmetrics.Register() // the plugins' parallelizer records metrics
	ctx := context.Background()
	var objs []runtime.Object
	for _, ns := range namespaces {
		objs = append(objs, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": ns}}})
	}
	inf := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	kf := &kubeFilters{lister: &liveLister{s: cache.NewEmptySnapshot()}}
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithSnapshotSharedLister(kf.lister),
		frameworkruntime.WithInformerFactory(inf))
	if err != nil {
		t.Fatal(err)
	}
	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fit := &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated,
		Resources: []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}}
	type factory func(context.Context, runtime.Object, fwk.Handle, feature.Features) (fwk.Plugin, error)
	for _, pf := range []struct {
		f    factory
		args runtime.Object
	}{
		{nodeunschedulable.New, nil}, {nodename.New, nil}, {tainttoleration.New, nil},
		{nodeaffinity.New, &config.NodeAffinityArgs{}}, {nodeports.New, nil}, {noderesources.NewFit, fit},
		{podtopologyspread.New, &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting}},
		{interpodaffinity.New, &config.InterPodAffinityArgs{}},
	} {
		p, err := pf.f(ctx, pf.args, fh, fts)
		if err != nil {
			t.Fatal(err)
		}
		kf.plugins = append(kf.plugins, p)
	}
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	return kf
}

// admits returns the nodes of the current snapshot that kube-scheduler's
// filters admit pod p to (only, when set), and the first reason per node
// that they do not.
func (kf *kubeFilters) admits(t *testing.T, p *v1.Pod, only string) (ok []string, why map[string]string) {
	ctx := context.Background()
	state := framework.NewCycleState()
	nodes, err := kf.lister.s.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{}
	why = map[string]string{}
	for _, pl := range kf.plugins {
		pf, isPre := pl.(fwk.PreFilterPlugin)
		if !isPre {
			continue
		}
		_, st := pf.PreFilter(ctx, state, p, nodes)
		switch {
		case st.IsSkip():
			skip[pl.Name()] = true
		case !st.IsSuccess():
			for _, n := range nodes {
				why[n.Node().Name] = pl.Name() + ": " + st.Message()
			}
			return nil, why
		}
	}
	for _, n := range nodes {
		name := n.Node().Name
		if only != "" && name != only {
			continue
		}
		pass := true
		for _, pl := range kf.plugins {
			if skip[pl.Name()] {
				continue
			}
			if st := pl.(fwk.FilterPlugin).Filter(ctx, state, p, n); !st.IsSuccess() {
				why[name] = pl.Name() + ": " + st.Message()
				pass = false
				break
			}
		}
		if pass {
			ok = append(ok, name)
		}
	}
	return ok, why
}

// diffCase is one random snapshot.
type diffCase struct {
	nodes   []*v1.Node
	foreign []*v1.Pod
	pending []*v1.Pod
	// gang says a pending pod belongs to a gang of several pods.
	gang map[string]bool
}

var diffApps = []string{"a", "b", "c"}

func genCase(rng *rand.Rand) diffCase {
	var c diffCase
	c.gang = map[string]bool{}
	zones := []string{"z1", "z2", "z3"}
	nn := 2 + rng.IntN(6)
	for i := range nn {
		name := fmt.Sprintf("n%d", i)
		n := mkNode(name, "Tesla-V100-SXM2-16GB", 1+rng.IntN(8), allocates("cpu", fmt.Sprint(8+rng.IntN(56)), "memory", "256Gi", "pods", "110"))
		n.Labels["kubernetes.io/hostname"] = name
		if rng.IntN(8) > 0 {
			n.Labels["topology.kubernetes.io/zone"] = zones[rng.IntN(len(zones))]
		}
		if rng.IntN(5) == 0 {
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infer", Effect: v1.TaintEffectNoSchedule}}
		}
		c.nodes = append(c.nodes, n)
	}
	for i := range rng.IntN(6) {
		p := mkPod(fmt.Sprintf("f%d", i), rng.IntN(2))
		p.Spec.SchedulerName = "default-scheduler"
		p.Spec.NodeName = c.nodes[rng.IntN(nn)].Name
		p.Status.Phase = v1.PodRunning
		p.Namespace = []string{"ns", "other"}[rng.IntN(2)]
		decorate(rng, p, false)
		c.foreign = append(c.foreign, p)
	}
	for i := 0; i < 1+rng.IntN(8); i++ {
		name := fmt.Sprintf("p%d", i)
		if rng.IntN(5) == 0 {
			k := 2 + rng.IntN(2)
			tmpl := mkPod(name, 1+rng.IntN(2), gang("g"+name, k), requests("cpu", fmt.Sprint(1+rng.IntN(4))))
			decorate(rng, tmpl, true)
			for m := range k {
				p := tmpl.DeepCopy()
				p.Name = fmt.Sprintf("%s-%d", name, m)
				p.UID = types.UID(p.Name)
				c.gang[p.Name] = true
				c.pending = append(c.pending, p)
			}
			continue
		}
		p := mkPod(name, 1+rng.IntN(3), requests("cpu", fmt.Sprint(1+rng.IntN(8))))
		decorate(rng, p, true)
		c.pending = append(c.pending, p)
	}
	return c
}

// decorate gives pod p random labels and constraints (pending: also
// affinity, spread, tolerations and a node selector).
func decorate(rng *rand.Rand, p *v1.Pod, pending bool) {
	app := diffApps[rng.IntN(len(diffApps))]
	p.Labels["app"] = app
	keys := []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
	term := func() v1.PodAffinityTerm {
		t := v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": diffApps[rng.IntN(len(diffApps))]}},
			TopologyKey: keys[rng.IntN(len(keys))]}
		switch rng.IntN(6) {
		case 0:
			t.NamespaceSelector = &metav1.LabelSelector{}
		case 1:
			t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "other"}}
		}
		return t
	}
	if rng.IntN(3) == 0 {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: int32(8080 + rng.IntN(2))}}
	}
	if rng.IntN(3) == 0 {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term()}}}
	}
	if !pending {
		return
	}
	if rng.IntN(4) == 0 {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term()}}
	}
	if rng.IntN(3) == 0 {
		c := v1.TopologySpreadConstraint{MaxSkew: int32(1 + rng.IntN(2)), TopologyKey: keys[rng.IntN(len(keys))],
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
		if rng.IntN(4) == 0 {
			c.MinDomains = ptr.To(int32(2 + rng.IntN(3)))
		}
		if rng.IntN(4) == 0 {
			c.NodeTaintsPolicy = ptr.To(v1.NodeInclusionPolicyHonor)
		}
		if rng.IntN(4) == 0 {
			c.NodeAffinityPolicy = ptr.To(v1.NodeInclusionPolicyIgnore)
		}
		if rng.IntN(4) == 0 {
			p.Labels["rev"] = fmt.Sprint(rng.IntN(2))
			c.MatchLabelKeys = []string{"rev"}
		}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{c}
	}
	if rng.IntN(4) == 0 {
		// Preferences (scored) must never lead a pod where a filter refuses it.
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		p.Spec.Affinity.PodAntiAffinity = orNew(p.Spec.Affinity.PodAntiAffinity)
		p.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []v1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: term()}}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{MaxSkew: 1,
			TopologyKey: keys[rng.IntN(len(keys))], WhenUnsatisfiable: v1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}})
	}
	if rng.IntN(4) == 0 {
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	}
	if rng.IntN(6) == 0 {
		p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "z1"}
	}
}

func orNew(a *v1.PodAntiAffinity) *v1.PodAntiAffinity {
	if a == nil {
		return &v1.PodAntiAffinity{}
	}
	return a
}

// TestFiltersDifferential runs the differential test on many random
// snapshots.
func TestFiltersDifferential(t *testing.T) {
	cases := 5000
	if testing.Short() {
		cases = 500
	}
	kf := newKubeFilters(t, "ns", "other")
	s := testSched(t, "fifo", "pack", func(o *recipe.Options) { o.Backfill = true })
	bindings, left := 0, 0
	for seed := range cases {
		// A fresh world for each case (the engine keeps only scratch).
		s.w, s.prevCluster, s.elig, s.shapes, s.filters = newWorld(), nil, eligibility{}, nil, nil
		b, l := runDiffCase(t, kf, s, uint64(seed))
		bindings, left = bindings+b, left+l
		if t.Failed() {
			return
		}
	}
	t.Logf("%d cases: %d bindings checked, %d pending pods that no node admits", cases, bindings, left)
	if bindings < cases {
		t.Errorf("only %d bindings in %d cases: the generator places too little to test", bindings, cases)
	}
}

// runDiffCase runs one snapshot; it returns the bindings checked and the
// pending single pods that the filters admit nowhere.
func runDiffCase(t *testing.T, kf *kubeFilters, s *Scheduler, seed uint64) (int, int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := genCase(rng)
	now := t0
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	for _, n := range c.nodes {
		sn, _ := stripNode(n)
		s.w.setNode(sn.(*v1.Node))
	}
	for _, ns := range []string{"ns", "other"} {
		s.w.setNamespace(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": ns}}})
	}
	bound := append([]*v1.Pod(nil), c.foreign...)
	for _, p := range c.foreign {
		f, _ := stripForeign(p)
		s.w.setForeign(f.(*v1.Pod))
	}
	byName := map[string]*v1.Pod{}
	for _, p := range c.pending {
		byName[p.Name] = p
		sp, _ := stripPod(p)
		s.w.setPod(sp.(*v1.Pod), now.Add(-time.Minute))
	}
	checked := 0
	for range 8 {
		now = now.Add(time.Second)
		r := &round{s: s, w: s.w, now: now, t: model.Time(now.UnixMilli())}
		r.run()
		if r.cluster != nil {
			s.prevCluster = r.cluster
		}
		if len(r.work.binds) == 0 {
			break
		}
		for _, b := range r.work.binds {
			for _, pb := range b.pods {
				p := byName[pb.name]
				kf.lister.s = cache.NewSnapshot(bound, c.nodes)
				if ok, why := kf.admits(t, p, pb.node); len(ok) == 0 {
					t.Errorf("seed %d: gpusched bound %s to %s, which kube-scheduler's filters refuse: %s\n%s",
						seed, p.Name, pb.node, why[pb.node], describe(c))
					return checked, 0
				}
				q := p.DeepCopy()
				q.Spec.NodeName = pb.node
				bound = append(bound, q)
				delete(byName, pb.name)
				checked++
			}
		}
	}
	kf.lister.s = cache.NewSnapshot(bound, c.nodes)
	left := 0
	for name, p := range byName {
		if c.gang[name] {
			continue
		}
		if ok, _ := kf.admits(t, p, ""); len(ok) > 0 {
			t.Errorf("seed %d: %s stays pending, but kube-scheduler's filters admit it to %v\n%s", seed, name, ok, describe(c))
			return checked, left
		}
		left++
	}
	return checked, left
}

// describe prints a case for a failure message.
func describe(c diffCase) string {
	var b strings.Builder
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "node %s gpus %s cpu %s labels %v taints %v\n", n.Name, n.Status.Allocatable.Name(ResourceGPU, resource.DecimalSI),
			n.Status.Allocatable.Cpu(), n.Labels, n.Spec.Taints)
	}
	for _, set := range [][]*v1.Pod{c.foreign, c.pending} {
		for _, p := range set {
			fmt.Fprintf(&b, "pod %s/%s node %q labels %v gpus %d ports %v affinity %+v spread %+v tol %v sel %v\n", p.Namespace, p.Name,
				p.Spec.NodeName, p.Labels, podGPUs(&p.Spec), p.Spec.Containers[0].Ports, p.Spec.Affinity, p.Spec.TopologySpreadConstraints,
				p.Spec.Tolerations, p.Spec.NodeSelector)
		}
	}
	return b.String()
}

// TestVolumeZoneDifferential compares gpusched's volume filter with
// kube-scheduler's VolumeZone plugin, node by node, on random nodes
// (zone and region labels, GA or beta, or none) and claims bound to
// volumes with zone labels (one zone, several "a__b", regions); node
// affinity of volumes is VolumeBinding's and is not compared here.
func TestVolumeZoneDifferential(t *testing.T) {
	schedmetrics.Register()
	ctx := context.Background()
	cases := 300
	if testing.Short() {
		cases = 50
	}
	checked, refused := 0, 0
	for seed := range cases {
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		zoneKeys := []string{v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone}
		regionKeys := []string{v1.LabelTopologyRegion, v1.LabelFailureDomainBetaRegion}
		zones := []string{"z1", "z2", "z3"}
		var nodes []*v1.Node
		for i := range 4 {
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{}}}
			if rng.IntN(5) > 0 {
				n.Labels[zoneKeys[rng.IntN(2)]] = zones[rng.IntN(3)]
			}
			if rng.IntN(3) == 0 {
				n.Labels[regionKeys[rng.IntN(2)]] = "r" + fmt.Sprint(rng.IntN(2))
			}
			nodes = append(nodes, n)
		}
		w := newWorld()
		objs := []runtime.Object{}
		var pods []*v1.Pod
		for i := range 3 {
			pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv%d", i), Labels: map[string]string{}}}
			switch rng.IntN(4) {
			case 0:
				pv.Labels[zoneKeys[rng.IntN(2)]] = zones[rng.IntN(3)]
			case 1:
				pv.Labels[zoneKeys[rng.IntN(2)]] = zones[rng.IntN(3)] + "__" + zones[rng.IntN(3)]
			case 2:
				pv.Labels[regionKeys[rng.IntN(2)]] = "r" + fmt.Sprint(rng.IntN(2))
			}
			pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "ns"},
				Spec: v1.PersistentVolumeClaimSpec{VolumeName: pv.Name}}
			objs = append(objs, pv, pvc)
			w.setPV(pv)
			w.setPVC(pvc)
			pods = append(pods, mkPod(fmt.Sprintf("p%d", i), 1, claims(pvc.Name)))
		}
		inf := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
		fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(inf),
			frameworkruntime.WithSnapshotSharedLister(cache.NewSnapshot(nil, nodes)))
		if err != nil {
			t.Fatal(err)
		}
		pl, err := volumezone.New(ctx, nil, fh, feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
		if err != nil {
			t.Fatal(err)
		}
		inf.Start(ctx.Done())
		inf.WaitForCacheSync(ctx.Done())
		snap := cache.NewSnapshot(nil, nodes)
		for _, p := range pods {
			state := framework.NewCycleState()
			infos, _ := snap.NodeInfos().List()
			if _, st := pl.(fwk.PreFilterPlugin).PreFilter(ctx, state, p, infos); !st.IsSuccess() && !st.IsSkip() {
				t.Fatalf("seed %d: PreFilter %s: %v", seed, p.Name, st.Message())
			}
			for _, ni := range infos {
				theirs := pl.(fwk.FilterPlugin).Filter(ctx, state, p, ni).IsSuccess()
				ours := w.volumeReason(p, ni.Node()) == ""
				if ours != theirs {
					pvc := w.vol.pvcs["ns/"+volumeClaims(p)[0]]
					t.Fatalf("seed %d: pod %s (volume labels %v) on node %s (labels %v): gpusched admits %v, VolumeZone %v",
						seed, p.Name, w.vol.pvs[pvc.Spec.VolumeName].Labels, ni.Node().Name, ni.Node().Labels, ours, theirs)
				}
				checked++
				if !theirs {
					refused++
				}
			}
		}
	}
	t.Logf("%d pod-node pairs agree (%d refused)", checked, refused)
	if refused == 0 || refused == checked {
		t.Errorf("the cases never (or always) refuse a node: they test nothing")
	}
}
