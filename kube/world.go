package kube

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
)

// world is the Kubernetes mode's view of the cluster: the informers'
// handlers write it, the scheduling rounds read it, the workers record
// what their API calls did. Every field is guarded by mu.
type world struct {
	mu    sync.Mutex
	nodes map[string]*nodeInfo
	// nodesVersion changes whenever a node changes in a way rounds see.
	nodesVersion uint64
	foreign      map[types.UID]foreignPod
	pods         map[types.UID]*podInfo
	jobs         map[string]*kjob
	// order holds the jobs of jobs by seq (rounds walk it instead of the
	// map: in queue order already, as jobs are mostly submitted in the
	// order they are seen); a forgotten job leaves it at the next round.
	order  []*kjob
	owners map[types.UID]*ownerInfo
	// assumed holds the pods gpusched is binding, or has bound and not
	// yet seen bound, with their node.
	assumed map[types.UID]string
	// deleted holds the pods gpusched deleted and has not yet seen
	// terminating or gone.
	deleted map[types.UID]bool
	nextSeq int
	// newJobs counts the jobs seen (gpusched_submissions_total).
	newJobs int64
	// groups holds the phase of every Volcano PodGroup by namespace/name;
	// groupWant the phase gpusched last asked for.
	groups, groupWant map[string]string
	// pgroups holds the PodGroups of every API by their jobs' key
	// (groupKey); conflicts the pods that name two groups (groups.go).
	pgroups   map[string]*podGroup
	conflicts map[types.UID]*podInfo
	// failed holds the pods of elastic jobs that failed on their node
	// (their controller replaces them once they are deleted).
	failed []deleteTask
	// dra is what gpusched knows of resource.k8s.io (dra.go).
	dra draWorld
	// anti holds the pods (gpusched's and others') with required pod
	// anti-affinity: while there are none, only pods that ask for ports,
	// pod affinity or spread need the filters that look at other pods.
	anti map[types.UID]bool
	// asking holds gpusched's pods that ask something of the filters that
	// look at other pods, or have preferences (rounds without any, and
	// without anti, skip those filters at once).
	asking map[types.UID]bool
	// vol holds the PersistentVolumeClaims and PersistentVolumes
	// (volumes.go).
	vol volumes
}

func newWorld() *world {
	return &world{nodes: map[string]*nodeInfo{}, foreign: map[types.UID]foreignPod{}, pods: map[types.UID]*podInfo{},
		jobs: map[string]*kjob{}, owners: map[types.UID]*ownerInfo{}, assumed: map[types.UID]string{},
		deleted: map[types.UID]bool{}, groups: map[string]string{}, groupWant: map[string]string{},
		pgroups: map[string]*podGroup{}, conflicts: map[types.UID]*podInfo{}, dra: newDRAWorld(), anti: map[types.UID]bool{},
		asking: map[types.UID]bool{}}
}

// kjob is one job: the pods of gpusched's that share a job key, and what
// the scheduler keeps about it between rounds.
type kjob struct {
	key string
	seq int
	// submit is the job's submission time: its owner's creation, else its
	// earliest pod's.
	submit time.Time
	pods   map[types.UID]*podInfo
	owner  types.UID
	// mj is the model job, kept between rounds for its history (attained
	// service, queue, preemptions, checkpoint).
	mj *model.Job
	// running says whether the job had bound pods at its last round, on
	// boundGPUs GPUs of type gpuType ("" when of several types).
	running   bool
	boundGPUs int
	gpuType   string
	// size is how many pods the job runs with: those it started with, or
	// bound when gpusched found it running (replacements refill it).
	size int
	// stopped: gpusched preempted or moved it since it last ran (its
	// execution period is closed already).
	stopped bool
	// attempt counts the job's executions (a progress sample needs two
	// reports of one).
	attempt int
	reserve *reservation
	// grow keeps GPUs for the new pods of an elastic job that grew;
	// hosts and hostsGen are its last host list and its generation.
	grow     *growth
	hosts    string
	hostsGen int64
	// empty is when its last pod went; zero while it has pods.
	empty time.Time
	// version changes with every change of its pods that settings depend
	// on; formed caches those settings.
	version uint64
	formed  *formed
	// ckpt is the newest last-checkpoint of its pods, of ckptSteps steps.
	ckpt      time.Time
	ckptSteps int64
	mark      profile.Mark
	// forgotten: the job left jobs (its place in order goes next round).
	forgotten bool
}

// ownerInfo is what gpusched reads of a batch/v1 Job that owns pods.
type ownerInfo struct {
	ann map[string]string
	// parallelism and completions (-1: not set) from the spec, succeeded
	// from the status; done when the Job is complete or failed.
	parallelism, completions, succeeded int32
	created                             time.Time
	done                                bool
	// version counts the owner's changes (jobs cache their settings by it).
	version uint64
	// kind is the owner's kind; ns, name and uid name it.
	kind     ownerKind
	ns, name string
	uid      types.UID
	// vc describes a Volcano Job (nil for a batch/v1 Job).
	vc *vcInfo
	// specPods is how many GPU pods the spec asks for now (a batch Job's
	// parallelism, a Volcano Job's GPU replicas); maxSeen the most it ever
	// asked for, and parallelism0 a batch Job's first parallelism (the
	// defaults of an elastic job's maximum and minimum: gpusched's own
	// resizes change the spec).
	specPods, maxSeen int
	parallelism0      int32
	// patched is the GPU pod count gpusched last asked the owner for, at
	// patchedAt.
	patched   int
	patchedAt time.Time
}

// ownerKind says which controller owns a job's pods.
type ownerKind int

const (
	ownerBatch ownerKind = iota
	ownerVolcano
)

// job returns the job of key, creating it.
func (w *world) job(key string, now time.Time) *kjob {
	j := w.jobs[key]
	if j == nil {
		w.nextSeq++
		w.newJobs++
		j = &kjob{key: key, seq: w.nextSeq, pods: map[types.UID]*podInfo{}}
		w.jobs[key] = j
		w.order = append(w.order, j)
	}
	return j
}

// setPod records an added or changed pod of gpusched's and reports whether
// a round should look at the change.
func (w *world) setPod(p *v1.Pod, now time.Time) (*kjob, bool) {
	pi := newPodInfo(p)
	old := w.pods[pi.uid]
	pi.seen = now
	claims := w.dra.notePod(old, pi)
	if old != nil {
		pi.seen, pi.want, pi.evented, pi.progressErr = old.seen, old.want, old.evented, old.progressErr
		if old.key != pi.key {
			w.dropFromJob(old, now)
		}
	}
	w.pods[pi.uid] = pi
	w.noteAnti(pi.uid, pi.t)
	w.noteAsking(pi.uid, pi.t)
	if pi.groupErr != "" {
		w.conflicts[pi.uid] = pi
	} else {
		delete(w.conflicts, pi.uid)
	}
	j := w.job(pi.key, now)
	j.pods[pi.uid], j.empty = pi, time.Time{}
	if pi.owner != nil {
		j.owner = pi.owner.UID
	}
	if j.submit.IsZero() || pi.created.Before(j.submit) {
		j.submit = pi.created
	}
	// A pod seen bound where gpusched was binding it, or terminating after
	// gpusched deleted it, changes nothing a round sees (rounds count
	// assumed pods as bound and deleted ones as terminating): no round for
	// gpusched's own calls coming back.
	confirmed := old != nil && old.node == "" && pi.node != "" && w.assumed[pi.uid] == pi.node
	ownDelete := old != nil && !old.deleting && pi.deleting && w.deleted[pi.uid]
	if pi.node != "" {
		delete(w.assumed, pi.uid)
	}
	if pi.deleting {
		delete(w.deleted, pi.uid)
	}
	// An elastic job's host list lists its workers once seen bound.
	elastic := j.formed != nil && j.formed.elastic
	relevant := old == nil || old.node != pi.node && (!confirmed || elastic) || old.host != pi.host ||
		old.deleting != pi.deleting && !ownDelete ||
		old.gpus != pi.gpus || !old.req.Equal(pi.req) || old.sig != pi.sig || old.key != pi.key || !sameSettings(old.ann, pi.ann) ||
		len(old.gates) != len(pi.gates) || pi.group != nil && old.running != pi.running || old.kueueCount != pi.kueueCount || claims
	if claims || old == nil || old.gpus != pi.gpus || !old.req.Equal(pi.req) || old.sig != pi.sig || old.key != pi.key || !sameSettings(old.ann, pi.ann) ||
		old.kueueCount != pi.kueueCount {
		j.version++
	}
	return j, relevant
}

// sameSettings reports whether two annotation sets agree on the job
// settings.
func sameSettings(a, b map[string]string) bool {
	for _, k := range settingKeys() {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// deletePod forgets a pod that is gone (or left gpusched's informer: it
// succeeded or failed).
func (w *world) deletePod(uid types.UID, now time.Time) *kjob {
	pi := w.pods[uid]
	if pi == nil {
		return nil
	}
	delete(w.pods, uid)
	delete(w.anti, uid)
	delete(w.asking, uid)
	delete(w.conflicts, uid)
	delete(w.assumed, uid)
	delete(w.deleted, uid)
	w.dra.forgetPod(uid)
	return w.dropFromJob(pi, now)
}

func (w *world) dropFromJob(pi *podInfo, now time.Time) *kjob {
	j := w.jobs[pi.key]
	if j == nil {
		return nil
	}
	delete(j.pods, pi.uid)
	j.version++
	if len(j.pods) == 0 {
		j.empty = now
	}
	return j
}

// setNode records an added or changed node and reports whether rounds
// see a difference.
func (w *world) setNode(n *v1.Node) bool {
	ni := newNodeInfo(n)
	w.dra.addDRA(ni)
	old := w.nodes[ni.name]
	w.nodes[ni.name] = ni
	if old != nil && old.sameForScheduling(ni) {
		return false
	}
	w.nodesVersion++
	return true
}

func (w *world) deleteNode(name string) {
	delete(w.nodes, name)
	w.nodesVersion++
}

// setForeign records a pod of another scheduler; bound and not finished,
// its GPUs are not free and its requests are taken from its node. It
// reports whether a round should look: the pod changed on a node with
// GPUs.
func (w *world) setForeign(p *v1.Pod) bool {
	fp := foreignPod{node: p.Spec.NodeName, gpus: podGPUs(&p.Spec), req: podRequests(p), t: podTerms(p)}
	if fp.node == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return w.deleteForeign(p.UID)
	}
	old, had := w.foreign[p.UID]
	w.foreign[p.UID] = fp
	w.noteAnti(p.UID, fp.t)
	return (!had || !old.same(fp)) && (w.gpuNode(fp.node) || had && w.gpuNode(old.node))
}

// deleteForeign forgets a pod of another scheduler and reports whether a
// round should look.
func (w *world) deleteForeign(uid types.UID) bool {
	old, had := w.foreign[uid]
	delete(w.foreign, uid)
	delete(w.anti, uid)
	return had && w.gpuNode(old.node)
}

// gpuNode reports whether node name is known and has GPUs.
func (w *world) gpuNode(name string) bool {
	n := w.nodes[name]
	return n != nil && n.gpus > 0
}

// setOwner records a batch/v1 Job.
func (w *world) setOwner(j *batchv1.Job) {
	o := &ownerInfo{ann: j.Annotations, parallelism: 1, completions: -1, succeeded: j.Status.Succeeded,
		created: j.CreationTimestamp.Time}
	if p := j.Spec.Parallelism; p != nil {
		o.parallelism = *p
	}
	if c := j.Spec.Completions; c != nil {
		o.completions = *c
	}
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			o.done = true
		}
	}
	o.ns, o.name, o.uid = j.Namespace, j.Name, j.UID
	o.specPods, o.maxSeen, o.parallelism0 = int(o.parallelism), int(o.parallelism), o.parallelism
	if old := w.owners[j.UID]; old != nil {
		o.version = old.version + 1
		o.maxSeen, o.parallelism0 = max(old.maxSeen, o.specPods), old.parallelism0
		o.patched, o.patchedAt = old.patched, old.patchedAt
	}
	w.owners[j.UID] = o
}

// stripJob is the transform of the batch/v1 Job informer: identity,
// gpusched annotations, parallelism, completions, and whether it ended.
func stripJob(obj any) (any, error) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil
	}
	out := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: j.Name, Namespace: j.Namespace, UID: j.UID,
		ResourceVersion: j.ResourceVersion, CreationTimestamp: j.CreationTimestamp}}
	out.Annotations = maps.Collect(func(yield func(string, string) bool) {
		for k, v := range j.Annotations {
			if len(k) > len(annPrefix) && k[:len(annPrefix)] == annPrefix && !yield(k, v) {
				return
			}
		}
	})
	out.Spec.Parallelism, out.Spec.Completions = j.Spec.Parallelism, j.Spec.Completions
	out.Status.Succeeded = j.Status.Succeeded
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			out.Status.Conditions = append(out.Status.Conditions, batchv1.JobCondition{Type: c.Type, Status: c.Status})
		}
	}
	return out, nil
}

// ordered returns the jobs by seq: order without the forgotten jobs,
// rebuilt from the map if the two disagree.
func (w *world) ordered() []*kjob {
	live := w.order[:0]
	for _, j := range w.order {
		if !j.forgotten {
			live = append(live, j)
		}
	}
	clear(w.order[len(live):])
	w.order = live
	if len(live) != len(w.jobs) {
		w.order = slices.SortedFunc(maps.Values(w.jobs), func(a, b *kjob) int { return cmp.Compare(a.seq, b.seq) })
	}
	return w.order
}
