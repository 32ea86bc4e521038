package kube

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Names of Volcano's API that gpusched reads and writes. gpusched talks to
// Volcano's CRDs through client-go's dynamic client (Volcano's Go modules
// are not on the module proxy) and mirrors the few fields it uses.
const (
	volcanoJobAPI = "batch.volcano.sh/v1alpha1"
	// annVolcanoTask and annVolcanoIndex are the task and the index in it
	// that Volcano's job controller gives each pod it creates.
	annVolcanoTask  = "volcano.sh/task-spec"
	annVolcanoIndex = "volcano.sh/task-index"
	// podGroupInqueue and podGroupRunning are PodGroup phases: Volcano's
	// job controller creates a Job's pods only once its PodGroup is past
	// Pending (vc-scheduler's enqueue action sets Inqueue; gpusched does).
	podGroupInqueue = "Inqueue"
	podGroupRunning = "Running"
	podGroupPending = "Pending"
	// elasticTaskName is the task that grows and shrinks when a Job has it.
	elasticTaskName = "worker"
)

func vcJobGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}
}

func podGroupGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
}

// Dynamic returns the dynamic client (JSON) for the API server of cfg, the
// client gpusched reads and scales Volcano's Jobs and PodGroups with.
func Dynamic(cfg *rest.Config) (dynamic.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	d, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, configErrorf("dynamic client: %w", err)
	}
	return d, nil
}

// vcJobSpec mirrors the fields of a Volcano Job that gpusched reads.
type vcJobSpec struct {
	SchedulerName string   `json:"schedulerName"`
	MinAvailable  int32    `json:"minAvailable"`
	Tasks         []vcTask `json:"tasks"`
}

type vcTask struct {
	Name     string             `json:"name"`
	Replicas int32              `json:"replicas"`
	Template v1.PodTemplateSpec `json:"template"`
}

// vcJob is what the Volcano Job informer keeps of a Job: identity,
// gpusched's annotations, the scheduler name, minAvailable and, per task,
// its name, replicas and GPUs per pod.
type vcJob struct {
	metav1.ObjectMeta
	scheduler    string
	minAvailable int32
	tasks        []taskInfo
}

// taskInfo is one task of a Volcano Job.
type taskInfo struct {
	name     string
	replicas int32
	gpus     int64
}

// stripVolcanoJob is the Volcano Job informer's transform.
func stripVolcanoJob(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	var spec vcJobSpec
	if m, ok := u.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
			return nil, fmt.Errorf("volcano job %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
	}
	j := &vcJob{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
		ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp()},
		scheduler: spec.SchedulerName, minAvailable: spec.MinAvailable}
	for k, v := range u.GetAnnotations() {
		if len(k) > len(annPrefix) && k[:len(annPrefix)] == annPrefix {
			if j.Annotations == nil {
				j.Annotations = map[string]string{}
			}
			j.Annotations[k] = v
		}
	}
	for _, t := range spec.Tasks {
		j.tasks = append(j.tasks, taskInfo{name: t.Name, replicas: t.Replicas, gpus: podGPUs(&t.Template.Spec)})
	}
	return j, nil
}

// served reports whether the API server serves every resource of gvrs.
func (s *Scheduler) served(gvrs ...schema.GroupVersionResource) bool {
	if s.cfg.Dynamic == nil {
		return false
	}
	for _, gvr := range gvrs {
		list, err := s.client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			return false
		}
		found := false
		for _, r := range list.APIResources {
			found = found || r.Name == gvr.Resource
		}
		if !found {
			return false
		}
	}
	return true
}

// volcanoInformers returns the informers of Volcano's Jobs and of the
// PodGroups of every API served (groups.go), with their transforms and
// handlers.
func (s *Scheduler) volcanoInformers() ([]cache.SharedIndexInformer, []cache.TransformFunc, []cache.ResourceEventHandler) {
	if s.cfg.Dynamic == nil {
		return nil, nil, nil
	}
	f := dynamicinformer.NewDynamicSharedInformerFactory(s.cfg.Dynamic, 0)
	var infs []cache.SharedIndexInformer
	var trs []cache.TransformFunc
	var hs []cache.ResourceEventHandler
	if s.served(vcJobGVR(), podGroupGVR()) {
		infs, trs = append(infs, f.ForResource(vcJobGVR()).Informer()), append(trs, stripVolcanoJob)
		hs = append(hs, s.volcanoJobHandler())
	} else {
		s.log.Info("Volcano's Jobs are not served: gpusched schedules pods, batch/v1 Jobs and bare pods only")
	}
	for _, api := range groupAPIs() {
		if !s.served(api.gvr()) {
			continue
		}
		s.log.Info("PodGroups are served: pods that name one are its gang", "api", api.gvr().GroupVersion().String())
		infs, trs = append(infs, f.ForResource(api.gvr()).Informer()), append(trs, stripGroup(api))
		hs = append(hs, s.handler(onWorld(s, s.w.setGroup), onWorld(s, s.w.deleteGroup)))
	}
	return infs, trs, hs
}

// volcanoJobHandler returns the handler of Volcano Jobs (gpusched's only).
func (s *Scheduler) volcanoJobHandler() cache.ResourceEventHandler {
	w := s.w
	return s.handler(onWorld(s, func(j *vcJob) bool {
		if j.scheduler != s.cfg.SchedulerName {
			return false
		}
		w.setVolcanoJob(j)
		return true
	}), onWorld(s, func(j *vcJob) bool { delete(w.owners, j.UID); return false }))
}

// setVolcanoJob records a Volcano Job of gpusched's.
func (w *world) setVolcanoJob(j *vcJob) {
	o := &ownerInfo{ann: j.Annotations, parallelism: 1, completions: -1, created: j.CreationTimestamp.Time,
		kind: ownerVolcano, ns: j.Namespace, name: j.Name, uid: j.UID,
		vc: &vcInfo{minAvailable: j.minAvailable, tasks: j.tasks, elastic: elasticTask(j.tasks)}}
	o.specPods = o.vc.gpuPods()
	o.maxSeen = o.specPods
	if old := w.owners[j.UID]; old != nil {
		o.version = old.version + 1
		o.maxSeen = max(old.maxSeen, o.specPods)
		o.patched, o.patchedAt = old.patched, old.patchedAt
	}
	w.owners[j.UID] = o
}

// vcInfo is what gpusched knows of a Volcano Job beyond ownerInfo.
type vcInfo struct {
	minAvailable int32
	tasks        []taskInfo
	// elastic is the index of the task that grows and shrinks, -1 when
	// none asks for GPUs.
	elastic int
}

// elasticTask returns the index of the task named worker when it asks for
// GPUs, else the last task that does, else -1.
func elasticTask(tasks []taskInfo) int {
	last := -1
	for i, t := range tasks {
		if t.gpus > 0 {
			if t.name == elasticTaskName {
				return i
			}
			last = i
		}
	}
	return last
}

// gpuPods counts the pods of the Job's spec that ask for GPUs.
func (v *vcInfo) gpuPods() int {
	n := 0
	for _, t := range v.tasks {
		if t.gpus > 0 {
			n += int(t.replicas)
		}
	}
	return n
}

// fixedPods counts the GPU pods of the tasks other than the elastic one.
func (v *vcInfo) fixedPods() int {
	n := 0
	for i, t := range v.tasks {
		if t.gpus > 0 && i != v.elastic {
			n += int(t.replicas)
		}
	}
	return n
}

// groupTask writes a PodGroup's status: a merge patch of the object
// (Volcano's PodGroup CRD has no status subresource) or of its status
// subresource; key is its entry in world.groupWant.
type groupTask struct {
	gvr           schema.GroupVersionResource
	ns, name, key string
	status        bool
	patch         []byte
}

// setGroupStatus makes a groupTask's patch; on failure the next round
// tries again.
func (s *Scheduler) setGroupStatus(ctx context.Context, g groupTask) {
	var sub []string
	if g.status {
		sub = []string{"status"}
	}
	_, err := s.cfg.Dynamic.Resource(g.gvr).Namespace(g.ns).Patch(ctx, g.name, types.MergePatchType, g.patch, metav1.PatchOptions{}, sub...)
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		s.log.Warn("cannot write the PodGroup's status", "podgroup", g.ns+"/"+g.name, "api", g.gvr.Group, "err", err)
		s.w.mu.Lock()
		delete(s.w.groupWant, g.key)
		s.w.mu.Unlock()
	}
}

// podGroups keeps the PodGroups of gpusched's Volcano Jobs in the phase
// Volcano's job controller expects of a scheduler: Inqueue once gpusched
// admits the Job (at once: gpusched's gang needs the pods to exist, and
// the controller creates them only then), Running while at least the
// Job's minimum runs, Inqueue again when it no longer does.
func (r *round) podGroups() {
	w := r.w
	running := map[types.UID]bool{}
	for _, rj := range r.jobs {
		if rj.kj.owner != "" && len(rj.bound) >= max(rj.min, 1) && !rj.kj.stopped {
			running[rj.kj.owner] = true
		}
	}
	for uid, o := range w.owners {
		if o.vc == nil {
			continue
		}
		key := o.ns + "/" + o.name + "-" + string(uid)
		phase, ok := w.groups[key]
		if !ok {
			continue
		}
		want := podGroupInqueue
		if running[uid] {
			want = podGroupRunning
		}
		if phase == want {
			delete(w.groupWant, key)
			continue
		}
		if w.groupWant[key] == want {
			continue
		}
		w.groupWant[key] = want
		r.work.groups = append(r.work.groups, groupTask{gvr: podGroupGVR(), ns: o.ns, name: o.name + "-" + string(uid), key: key,
			patch: []byte(`{"status":{"phase":"` + want + `"}}`)})
	}
}
