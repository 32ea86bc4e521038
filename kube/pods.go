package kube

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpusched/gpusched/core/model"
)

// Names gpusched reads from pods (and their owners).
const (
	// LabelJob groups bare pods (no owning controller) into one job.
	LabelJob = "gpusched.io/job"
	// AnnMinReplicas is the gang size: the job starts only when this many
	// of its pods exist and fit.
	AnnMinReplicas = "gpusched.io/min-replicas"
	// AnnModel is the job type in the throughput matrix.
	AnnModel = "gpusched.io/model"
	// AnnPriority is the job's priority (an integer, higher first).
	AnnPriority = "gpusched.io/priority"
	// AnnGPUType restricts the job to one GPU type.
	AnnGPUType = "gpusched.io/gpu-type"
	// AnnSteps, AnnCheckpointSteps and AnnLastCheckpoint are the progress
	// a training container reports on its own pod (`gpusched progress`).
	AnnSteps           = "gpusched.io/steps"
	AnnCheckpointSteps = "gpusched.io/checkpoint-steps"
	AnnLastCheckpoint  = "gpusched.io/last-checkpoint"
	// annPrefix starts every annotation gpusched reads.
	annPrefix = "gpusched.io/"
	// annCompletionIndex is the index the Job controller gives a pod of an
	// Indexed Job.
	annCompletionIndex = "batch.kubernetes.io/job-completion-index"
)

// podInfo is what a round needs of a pod of gpusched's.
type podInfo struct {
	uid      types.UID
	ns, name string
	created  time.Time
	// key is the job the pod belongs to; owner its owning controller when
	// that forms jobs (ownerJob), else nil.
	key   string
	owner *metav1.OwnerReference
	// gpus is the pod's nvidia.com/gpu request; req what else it asks of
	// a node (podRequests).
	gpus int64
	req  model.Resources
	node string
	// deleting: the pod has a deletion timestamp (it is terminating).
	deleting bool
	// index orders the pods of a job: the Indexed Job completion index
	// (Volcano's task index), else -1 (then by name).
	index int
	// task is the pod's Volcano task (volcano.sh/task-spec), "" for others;
	// host is how its job's host list names it (hostName).
	task, host string
	// ann holds the pod's gpusched.io/ annotations.
	ann map[string]string
	// sig identifies the pod's node constraints (constraintSig); obj is the
	// stripped pod they are matched with.
	sig string
	obj *v1.Pod
	// t is what it asks of, and is to, the filters that look at other
	// pods (filters.go).
	t *terms
	// cond is the message of the pod's PodScheduled=False condition, ""
	// when it has none.
	cond string
	// group is the pod group the pod names (groups.go), nil when none;
	// groupErr says why the pod cannot be placed with its group (it names
	// two: the others are otherGroups).
	group       *groupRef
	otherGroups []groupRef
	groupErr    string
	// kueueCount is its Kueue pod group's total count (annotation).
	kueueCount string
	// gates are the names of its scheduling gates: a gated pod is never
	// bound. running: its phase is Running.
	gates   []string
	running bool
	// seen is when gpusched first saw the pod; want the wait reason last
	// queued for its condition; evented the last reason it got an Event
	// for; progressErr the last malformed progress annotation reported.
	seen                       time.Time
	want, evented, progressErr string
}

// newPodInfo reads a (stripped) pod of gpusched's.
func newPodInfo(p *v1.Pod) *podInfo {
	pi := &podInfo{uid: p.UID, ns: p.Namespace, name: p.Name, created: p.CreationTimestamp.Time,
		gpus: podGPUs(&p.Spec), req: podRequests(p), node: p.Spec.NodeName, deleting: p.DeletionTimestamp != nil, index: -1,
		ann: p.Annotations, sig: constraintSig(p), obj: p, t: podTerms(p)}
	for _, k := range []string{annCompletionIndex, annVolcanoIndex} {
		if s, ok := p.Annotations[k]; ok {
			if i, err := strconv.Atoi(s); err == nil && i >= 0 {
				pi.index = i
			}
		}
	}
	pi.task, pi.host = p.Annotations[annVolcanoTask], hostName(p)
	pi.owner = controllerOf(p)
	if pi.owner == nil || pi.owner.APIVersion != volcanoJobAPI {
		// A Volcano Job's pods name its PodGroup too: the Job is the job.
		pi.group, pi.otherGroups, pi.groupErr = podGroupOf(p)
	}
	if pi.group != nil {
		pi.owner = nil // the group, not a batch Job of it, is the job
	}
	pi.key = jobKey(p, pi.owner, pi.group)
	for _, g := range p.Spec.SchedulingGates {
		pi.gates = append(pi.gates, g.Name)
	}
	pi.running = p.Status.Phase == v1.PodRunning
	pi.kueueCount = p.Annotations[AnnKueueGroupCount]
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			pi.cond = c.Message
		}
	}
	return pi
}

// ownerJob reports whether pods owned by controller ref form one job:
// batch/v1 Jobs and Volcano's Jobs (batch.volcano.sh/v1alpha1) do.
func ownerJob(ref *metav1.OwnerReference) bool {
	return ref.Kind == "Job" && (ref.APIVersion == "batch/v1" || ref.APIVersion == volcanoJobAPI)
}

// controllerOf returns the pod's owning controller when it forms jobs.
func controllerOf(p *v1.Pod) *metav1.OwnerReference {
	for i := range p.OwnerReferences {
		ref := &p.OwnerReferences[i]
		if ref.Controller != nil && *ref.Controller && ownerJob(ref) {
			return ref
		}
	}
	return nil
}

// jobKey returns the key of the pod's job: its owner (namespace, kind,
// name and UID, so that a Job created again under the same name is a new
// job), else its pod group (groupKey), else the value of its
// gpusched.io/job label, else the pod itself. Keys of the four kinds never
// collide.
func jobKey(p *v1.Pod, owner *metav1.OwnerReference, group *groupRef) string {
	switch {
	case group != nil:
		return groupKey(p.Namespace, *group)
	case owner != nil:
		return p.Namespace + "/" + owner.Kind + "/" + owner.Name + "/" + string(owner.UID)
	case p.Labels[LabelJob] != "":
		return p.Namespace + "/label/" + p.Labels[LabelJob]
	}
	return p.Namespace + "/pod/" + p.Name + "/" + string(p.UID)
}

// jobName is how events and logs name a job: namespace/name.
func jobName(key string) string {
	parts := strings.SplitN(key, "/", 4)
	if len(parts) < 3 {
		return key
	}
	return parts[0] + "/" + parts[2]
}

// podGPUs returns a pod's effective nvidia.com/gpu request: the larger of
// its containers' sum and its largest init container (as the Kubernetes
// scheduler counts resources). The API server copies limits into requests
// for extended resources, so requests are enough.
func podGPUs(spec *v1.PodSpec) int64 {
	var sum, initMax int64
	for _, c := range spec.Containers {
		sum += gpuQuantity(c.Resources)
	}
	for _, c := range spec.InitContainers {
		initMax = max(initMax, gpuQuantity(c.Resources))
	}
	return max(sum, initMax)
}

func gpuQuantity(r v1.ResourceRequirements) int64 {
	if q, ok := r.Requests[ResourceGPU]; ok {
		return q.Value()
	}
	if q, ok := r.Limits[ResourceGPU]; ok {
		return q.Value()
	}
	return 0
}

// constraintSig returns a string that is equal for two pods exactly when
// their node constraints are: node selector, required node affinity and
// tolerations. Jobs of the same sig share one eligibility computation.
func constraintSig(p *v1.Pod) string {
	c := struct {
		Sel map[string]string `json:"s,omitempty"`
		Aff *v1.NodeSelector  `json:"a,omitempty"`
		Tol []v1.Toleration   `json:"t,omitempty"`
		DRA bool              `json:"d,omitempty"` // it has ResourceClaims (gpuSourceFits)
		Vol []string          `json:"v,omitempty"`
	}{Sel: p.Spec.NodeSelector, Tol: p.Spec.Tolerations, DRA: len(p.Spec.ResourceClaims) > 0}
	if claims := volumeClaims(p); len(claims) > 0 {
		c.Vol = append([]string{p.Namespace}, claims...) // the claims' volumes constrain nodes
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		c.Aff = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	b, _ := json.Marshal(c) // maps marshal with sorted keys
	return string(b)
}

// stripPod is the transform of the informer of gpusched's pods: it keeps
// what jobs, constraints, requests, progress and conditions need, and
// drops the rest (environment, volumes, images, managed fields).
func stripPod(obj any) (any, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return obj, nil
	}
	out := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
		DeletionGracePeriodSeconds: p.DeletionGracePeriodSeconds, OwnerReferences: p.OwnerReferences}}
	out.Labels = p.Labels // pod affinity and spread select pods by any label
	for k, v := range p.Annotations {
		if strings.HasPrefix(k, annPrefix) || k == annCompletionIndex || k == annVolcanoIndex || k == annVolcanoTask || k == AnnVolcanoGroup || k == AnnKueueGroupCount {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	s := &out.Spec
	s.NodeName, s.SchedulerName, s.NodeSelector, s.Tolerations = p.Spec.NodeName, p.Spec.SchedulerName, p.Spec.NodeSelector, p.Spec.Tolerations
	s.TerminationGracePeriodSeconds = p.Spec.TerminationGracePeriodSeconds
	s.Hostname, s.Subdomain = p.Spec.Hostname, p.Spec.Subdomain
	s.SchedulingGates, s.SchedulingGroup = p.Spec.SchedulingGates, p.Spec.SchedulingGroup
	out.Status.PodIP = p.Status.PodIP
	s.Affinity = keepAffinity(p.Spec.Affinity)
	s.TopologySpreadConstraints = p.Spec.TopologySpreadConstraints
	s.Volumes = keepVolumeClaims(p.Spec.Volumes)
	keepRequests(out, p)
	keepClaims(out, p)
	out.Status.Phase = p.Status.Phase
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			out.Status.Conditions = append(out.Status.Conditions, v1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return out, nil
}

// foreignPod is a pod bound to a node by another scheduler (or by none: a
// DaemonSet's, a static pod): its GPUs are not free, and what else it asks
// (req) is taken from the node's allocatable.
type foreignPod struct {
	node string
	gpus int64
	req  model.Resources
	// t is what it is to the filters that look at other pods (its
	// labels, host ports, anti-affinity).
	t *terms
}

// same reports whether two readings of a foreign pod count alike.
func (f foreignPod) same(o foreignPod) bool {
	return f.node == o.node && f.gpus == o.gpus && f.req.Equal(o.req) && sameTerms(f.t, o.t)
}

// stripForeign is the transform of the informer of other schedulers'
// bound pods: node and requests only.
func stripForeign(obj any) (any, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return obj, nil
	}
	out := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
		Labels: p.Labels, DeletionTimestamp: p.DeletionTimestamp}}
	out.Spec.NodeName = p.Spec.NodeName
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		out.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution}}
	}
	keepRequests(out, p)
	out.Status.Phase = p.Status.Phase
	return out, nil
}
