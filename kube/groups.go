package kube

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The ways a pod names its pod group: the gang APIs that workload
// operators speak (docs/KUBERNETES.md, "Pod groups").
const (
	// AnnVolcanoGroup names a Volcano PodGroup by annotation (Volcano's
	// own Jobs, the MPI Operator, KubeRay).
	AnnVolcanoGroup = "scheduling.k8s.io/group-name"
	// LabelVolcanoGroup names a Volcano PodGroup by label (Kubeflow
	// Trainer v2).
	LabelVolcanoGroup = "scheduling.volcano.sh/group-name"
	// LabelCoschedulingGroup names a scheduler-plugins PodGroup
	// (scheduling.x-k8s.io/v1alpha1; the MPI Operator's
	// --gang-scheduling for other scheduler names).
	LabelCoschedulingGroup = "scheduling.x-k8s.io/pod-group"
	// LabelJobSet is the JobSet a pod belongs to (the JobSet controller
	// sets it): a JobSet without another group is one gang.
	LabelJobSet = "jobset.sigs.k8s.io/jobset-name"
	// LabelKueueGroup and AnnKueueGroupCount are Kueue's pod groups of
	// plain pods: the group's name and how many pods it has, its gang
	// size (no group object).
	LabelKueueGroup    = "kueue.x-k8s.io/pod-group-name"
	AnnKueueGroupCount = "kueue.x-k8s.io/pod-group-total-count"
)

// groupAPI is the API of a pod group.
type groupAPI int

const (
	// apiNative is Kubernetes' own PodGroup (scheduling.k8s.io/v1alpha2,
	// alpha since 1.35: feature gate GenericWorkload), named by a pod's
	// spec.schedulingGroup.podGroupName.
	apiNative groupAPI = iota
	// apiCoscheduling is scheduler-plugins' PodGroup.
	apiCoscheduling
	// apiVolcano is Volcano's PodGroup (scheduling.volcano.sh/v1beta1).
	apiVolcano
	// apiJobSet is a JobSet (jobset.x-k8s.io/v1alpha2): its pods are a
	// gang of all its replicated jobs' pods, unless they name a PodGroup
	// (Kubeflow Trainer's do).
	apiJobSet
	// apiKueuePods is a Kueue pod group: pods that share the label
	// kueue.x-k8s.io/pod-group-name; no object, no informer.
	apiKueuePods
)

// groupAPIs lists the APIs in the order a pod's references are read.
func groupAPIs() []groupAPI { return []groupAPI{apiNative, apiCoscheduling, apiVolcano, apiJobSet} }

// gvr returns the API's PodGroup resource.
func (a groupAPI) gvr() schema.GroupVersionResource {
	switch a {
	case apiNative:
		return schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1alpha2", Resource: "podgroups"}
	case apiCoscheduling:
		return schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
	case apiJobSet:
		return schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	case apiKueuePods:
		return schema.GroupVersionResource{Group: "kueue.x-k8s.io"}
	}
	return podGroupGVR()
}

// String names the API by its group (as users read it in messages).
func (a groupAPI) String() string { return a.gvr().Group }

// groupRef is a pod's reference to its pod group (in the pod's
// namespace); how says where the pod names it.
type groupRef struct {
	api  groupAPI
	name string
	how  string
}

// groupKey is the job key of the pods of group g in namespace ns.
func groupKey(ns string, g groupRef) string {
	return ns + "/podgroup." + g.api.String() + "/" + g.name
}

// podGroupRefs returns the pod groups a pod names, in groupAPIs order;
// the same Volcano group named by label and annotation counts once.
func podGroupRefs(p *v1.Pod) []groupRef {
	var refs []groupRef
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		refs = append(refs, groupRef{apiNative, *g.PodGroupName, "spec.schedulingGroup.podGroupName"})
	}
	if v := p.Labels[LabelCoschedulingGroup]; v != "" {
		refs = append(refs, groupRef{apiCoscheduling, v, "label " + LabelCoschedulingGroup})
	}
	lv, av := p.Labels[LabelVolcanoGroup], p.Annotations[AnnVolcanoGroup]
	if av != "" {
		refs = append(refs, groupRef{apiVolcano, av, "annotation " + AnnVolcanoGroup})
	}
	if lv != "" && lv != av {
		refs = append(refs, groupRef{apiVolcano, lv, "label " + LabelVolcanoGroup})
	}
	if v := p.Labels[LabelKueueGroup]; v != "" {
		refs = append(refs, groupRef{apiKueuePods, v, "label " + LabelKueueGroup})
	}
	if v := p.Labels[LabelJobSet]; v != "" && len(refs) == 0 {
		refs = append(refs, groupRef{apiJobSet, v, "label " + LabelJobSet})
	}
	return refs
}

// podGroupOf returns the pod's group, nil when it names none, and, when
// it names more than one, why it cannot belong to any (the other groups
// named are in others).
func podGroupOf(p *v1.Pod) (g *groupRef, others []groupRef, why string) {
	refs := podGroupRefs(p)
	if len(refs) == 0 {
		return nil, nil, ""
	}
	if len(refs) > 1 {
		a, b := refs[0], refs[1]
		why = fmt.Sprintf("pod %s names two pod groups: %s %s (%s) and %s %s (%s); a pod belongs to one group",
			p.Name, a.api, a.name, a.how, b.api, b.name, b.how)
	}
	return &refs[0], refs[1:], why
}

// podGroup is what the PodGroup informers keep of a group of any API:
// identity, gang size and the status gpusched writes.
type podGroup struct {
	metav1.ObjectMeta
	api groupAPI
	// min is the gang size: minMember, or the gang policy's minCount (1
	// for a basic policy).
	min int
	// phase is status.phase (Volcano, scheduler-plugins); scheduled the
	// PodGroupScheduled condition's status (native).
	phase     string
	scheduled string
	// owned: a Volcano Job owns it (volcano.go keeps its phase).
	owned bool
}

// stripGroup returns the transform of the informer of api's PodGroups.
func stripGroup(api groupAPI) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		g := &podGroup{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp()}, api: api, min: 1}
		g.phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
		var min int64
		switch api {
		case apiNative:
			if m, ok, _ := unstructured.NestedInt64(u.Object, "spec", "schedulingPolicy", "gang", "minCount"); ok {
				min = m
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == condPodGroupScheduled {
					g.scheduled, _ = m["status"].(string)
				}
			}
		case apiJobSet:
			min = jobSetPods(u)
		default:
			min, _, _ = unstructured.NestedInt64(u.Object, "spec", "minMember")
		}
		g.min = int(max(min, 1))
		for _, ref := range u.GetOwnerReferences() {
			g.owned = g.owned || ref.APIVersion == volcanoJobAPI && ref.Controller != nil && *ref.Controller
		}
		return g, nil
	}
}

// jobSetPods counts the pods a JobSet runs at once: over its replicated
// jobs, replicas × parallelism (default 1, at most completions).
func jobSetPods(u *unstructured.Unstructured) int64 {
	rjs, _, _ := unstructured.NestedSlice(u.Object, "spec", "replicatedJobs")
	var n int64
	for _, rj := range rjs {
		m, ok := rj.(map[string]any)
		if !ok {
			continue
		}
		replicas, ok, _ := unstructured.NestedInt64(m, "replicas")
		if !ok {
			replicas = 1
		}
		par, ok, _ := unstructured.NestedInt64(m, "template", "spec", "parallelism")
		if !ok {
			par = 1
		}
		if c, ok, _ := unstructured.NestedInt64(m, "template", "spec", "completions"); ok {
			par = min(par, c)
		}
		if replicas > 0 && par > 0 && replicas <= maxMinReplicas && par <= maxMinReplicas {
			n += replicas * par
		}
	}
	return n
}

// condPodGroupScheduled is the native PodGroup's condition that
// kube-scheduler sets.
const condPodGroupScheduled = "PodGroupScheduled"

// setGroup records a PodGroup of any API.
func (w *world) setGroup(g *podGroup) bool {
	if g.api == apiVolcano {
		w.groups[g.Namespace+"/"+g.Name] = g.phase
	}
	key := groupKey(g.Namespace, groupRef{api: g.api, name: g.Name})
	if old := w.pgroups[key]; old != nil && old.UID != g.UID {
		delete(w.groupWant, key) // a new object of the same name
	}
	w.pgroups[key] = g
	if j := w.jobs[key]; j != nil {
		j.version++
	}
	return true
}

// deleteGroup forgets a PodGroup.
func (w *world) deleteGroup(g *podGroup) bool {
	if g.api == apiVolcano {
		delete(w.groups, g.Namespace+"/"+g.Name)
	}
	key := groupKey(g.Namespace, groupRef{api: g.api, name: g.Name})
	delete(w.pgroups, key)
	delete(w.groupWant, key)
	if j := w.jobs[key]; j != nil {
		j.version++
		return true
	}
	return false
}

// groupMin returns the gang size of a grouped job from its PodGroup, or
// an error naming what is wrong: the group object is missing, or one of
// its pods names two groups.
func (r *round) groupMin(rj *rjob, pods []*podInfo) (int, error) {
	for _, p := range pods {
		if p.groupErr != "" {
			return 0, fmt.Errorf("%s", p.groupErr)
		}
	}
	ref := pods[0].group
	if ref.api == apiKueuePods {
		return kueueCount(pods)
	}
	g := r.w.pgroups[rj.kj.key]
	if g == nil {
		return 0, fmt.Errorf("its pod group %s/%s (%s, named by %s) does not exist: create the PodGroup, or remove the reference",
			pods[0].ns, ref.name, ref.api, ref.how)
	}
	return g.min, nil
}

// kueueCount reads the gang size of a Kueue pod group: its pods'
// kueue.x-k8s.io/pod-group-total-count, on which they must agree.
func kueueCount(pods []*podInfo) (int, error) {
	v := pods[0].kueueCount
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxMinReplicas {
		return 0, &AnnotationError{AnnKueueGroupCount, v, fmt.Sprintf("want the group's number of pods, from 1 to %d", maxMinReplicas)}
	}
	for _, p := range pods[1:] {
		if p.kueueCount != v {
			return 0, fmt.Errorf("its pods disagree on annotation %s: %s has %q, %s has %q", AnnKueueGroupCount, pods[0].name, v, p.name, p.kueueCount)
		}
	}
	return n, nil
}

// groupConflicts marks invalid the groups that a pod claimed by two
// groups names second: neither group is bound while the pod is in doubt.
func (r *round) groupConflicts(byKey map[string]*rjob) {
	for _, p := range r.w.conflicts {
		for _, ref := range p.otherGroups {
			if rj := byKey[groupKey(p.ns, ref)]; rj != nil && len(rj.bound) == 0 {
				rj.setReason(p.groupErr, true)
				rj.invalid, rj.inState = true, false
			}
		}
	}
}

// gangText names where a job's gang size comes from, for wait reasons.
func (r *round) gangText(rj *rjob) string {
	if len(rj.pending) > 0 && rj.pending[0].group != nil && rj.pending[0].group.api == apiKueuePods {
		return AnnKueueGroupCount
	}
	if g := r.w.pgroups[rj.kj.key]; g != nil && len(rj.pending) > 0 && rj.pending[0].group != nil {
		what := "minMember"
		switch g.api {
		case apiNative:
			what = "gang minCount"
		case apiJobSet:
			return fmt.Sprintf("JobSet %s/%s: replicas × parallelism of its replicated jobs", g.Namespace, g.Name)
		}
		return fmt.Sprintf("PodGroup %s/%s %s %d", g.Namespace, g.Name, what, g.min)
	}
	return AnnMinReplicas
}

// gatesText describes the scheduling gates of a job's gated pods.
func gatesText(pods []*podInfo) string {
	seen := map[string]bool{}
	var names []string
	for _, p := range pods {
		for _, g := range p.gates {
			if !seen[g] {
				seen[g] = true
				names = append(names, g)
			}
		}
	}
	return strings.Join(names, ", ")
}
