package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpusched/gpusched/core/model"
	"github.com/prometheus/client_golang/prometheus"
)

// Elastic jobs on Kubernetes (issue 16). A job is elastic when its owner
// can be resized — a Volcano Job (its worker task's replicas) or a
// batch/v1 Job (its parallelism) — and its maximum exceeds its minimum:
// the minimum is gpusched.io/min-replicas, else a Volcano Job's
// spec.minAvailable or a batch Job's first parallelism; the maximum is
// gpusched.io/max-replicas, else the most GPU pods its spec ever asked
// for. Sizes count the pods that ask for GPUs (the workers); a Volcano
// Job's pods that ask for none (a launcher) are bound with the gang, on
// its first worker's node, and never counted or removed by a resize.
//
// The engine's scaler resizes running elastic jobs; the applier's Resize
// carries it out: a shrink removes the job's last workers (the highest
// ranks of the elastic task, never a launcher or another task's pod),
// patches the owner's size and deletes those pods with their grace
// period; a growth patches the owner's size, keeps the new GPUs for the
// job (growth) and, once the owner's controller has created all the new
// pods, binds them in one step. After every change of the bound workers
// the job's host list (hosts.go) is written again with a higher
// generation. A worker whose pod fails or whose node is gone or not Ready
// leaves the host list at once (its pod is deleted, so that its
// controller creates a replacement, which is bound when GPUs allow); a
// job left below its minimum is restarted as a whole, as Volcano's
// RestartJob does: all its pods are deleted with their grace period and
// the job waits for its gang again — except within ownerPatchWait of a
// resize of its owner, while the owner's controller may still be removing
// and replacing pods.

// AnnMaxReplicas is an elastic job's maximum number of GPU pods.
const AnnMaxReplicas = "gpusched.io/max-replicas"

// growWait is how long a growth waits for its pods before gpusched gives
// its GPUs up; ownerPatchWait how long a patch of an owner's size is
// trusted before it is made again.
const (
	growWait       = 30 * time.Second
	ownerPatchWait = 10 * time.Second
)

// growth keeps GPUs for a running elastic job that grew and whose new pods
// its controller has yet to create.
type growth struct {
	nodes []nodeCount
	pods  int
	made  time.Time
}

// elasticLimits sets rj.elastic and rj.max from the owner and the
// settings (readSettings has set rj.min).
func (r *round) elasticLimits(rj *rjob, set settings) {
	o := r.w.owners[rj.kj.owner]
	rj.max = 0
	if o == nil {
		return
	}
	if set.minReplicas == 0 {
		switch {
		case o.vc != nil:
			rj.min = int(max(o.vc.minAvailable, 1))
		case set.maxReplicas > 0:
			rj.min = int(max(o.parallelism0, 1))
		}
	}
	switch {
	case set.maxReplicas > 0:
		rj.max = set.maxReplicas
	case o.vc != nil:
		rj.max = o.maxSeen
	}
	if o.vc != nil && o.vc.elastic < 0 {
		rj.max = 0
	}
	rj.elastic = rj.max > rj.min
}

// elasticSpec makes the model spec of an elastic job: its minimum and
// maximum, and as GPUs its bound workers (running) or what it would start
// with (waiting). A job whose growth waits for its pods is held at its
// size, out of the scaler's reach, until they are bound.
func (r *round) elasticSpec(rj *rjob, spec *model.JobSpec) {
	p := rj.pod
	if !rj.elastic {
		if r.scaling() && len(rj.bound) > 0 {
			// Not elastic: the scaler may bind its pending pods, never
			// remove its pods.
			spec.MinGPUs = min(len(rj.bound)*p, spec.MaxGPUs)
		}
		return
	}
	spec.MinGPUs, spec.MaxGPUs = rj.min*p, rj.max*p
	if len(rj.bound) > 0 {
		spec.GPUs = len(rj.bound) * p
	} else {
		spec.GPUs = min(max(len(rj.pending), rj.min), rj.max) * p
	}
	if rj.kj.grow != nil {
		spec.MinGPUs, spec.MaxGPUs = spec.GPUs, spec.GPUs
	}
}

// scaling reports whether the engine has a scaler.
func (r *round) scaling() bool {
	_, _, sc := r.s.engine.Names()
	return sc != "none"
}

// nodeAlive reports whether a node exists and is Ready.
func (r *round) nodeAlive(name string) bool {
	n := r.w.nodes[name]
	return n != nil && n.ready
}

// dropLost deletes, at once and without grace (no kubelet can run it), the
// pods of an elastic job (as the last round knew it) bound to a node that
// is gone or not Ready, and the failed pods of elastic Volcano Jobs, so
// that their controllers create replacements.
func (r *round) dropLost(kj *kjob) {
	if kj.formed == nil || !kj.formed.elastic {
		return
	}
	for _, p := range kj.pods {
		if p.node == "" || p.deleting || r.w.deleted[p.uid] || r.nodeAlive(p.node) {
			continue
		}
		why := "its node " + p.node + " is gone"
		if r.w.nodes[p.node] != nil {
			why = "its node " + p.node + " is not Ready"
		}
		r.w.deleted[p.uid] = true
		r.work.deletes = append(r.work.deletes, deleteTask{uid: p.uid, ns: p.ns, name: p.name, why: why, force: true})
		r.s.event(p, v1.EventTypeWarning, "WorkerLost", "Dropped from its elastic job: "+why+"; a replacement is bound when GPUs allow")
		r.s.log.Info("worker lost", "job", jobName(kj.key), "pod", p.name, "why", why)
	}
}

// restarts restarts the elastic jobs that run below their minimum (a
// worker failed or its node went): every pod is deleted with its grace
// period, as Volcano's RestartJob does, and the job waits for its gang.
func (r *round) restarts() {
	for _, rj := range r.jobs {
		kj := rj.kj
		if !rj.elastic || !kj.running || kj.stopped || len(rj.bound) == 0 || len(rj.bound) >= rj.min || kj.grow != nil {
			continue
		}
		if kj.size > 0 && len(rj.bound) >= kj.size {
			continue // never ran at its minimum yet
		}
		if o := r.w.owners[kj.owner]; o != nil && r.now.Sub(o.patchedAt) < ownerPatchWait {
			// gpusched resized the owner a moment ago: its controller may
			// still be removing pods (a batch Job's controller deletes its own
			// excess pods, which need not be the ones gpusched removed) and
			// creating replacements, which refill binds
			continue
		}
		why := fmt.Sprintf("restarted as a whole: %d of its workers run, below its minimum of %d", len(rj.bound), rj.min)
		r.stop(rj, why)
		rj.bound, rj.inState = nil, false
		rj.setReason("its job is "+why+"; it waits for its gang again", false)
	}
}

// growths binds the pods of the growths whose pods all exist, on the GPUs
// kept for them, one step per job.
func (r *round) growths() {
	for _, rj := range r.jobs {
		kj, mj := rj.kj, rj.kj.mj
		g := kj.grow
		if g == nil || !rj.growReady {
			continue
		}
		kj.grow = nil
		if mj.State != model.Running || kj.stopped {
			continue
		}
		gpus := append([]model.GPU(nil), mj.Alloc...)
		for _, nc := range g.nodes {
			ci, ok := r.cidx[nc.node]
			if !ok || bits.OnesCount64(r.state.FreeMask(ci)) < nc.gpus {
				gpus = nil
				break
			}
			m := r.state.FreeMask(ci)
			for range nc.gpus {
				gi := bits.TrailingZeros64(m)
				gpus = append(gpus, model.GPU{Node: int32(ci), Index: int32(gi)})
				m &^= 1 << uint(gi)
			}
		}
		if gpus != nil {
			r.bindOn(rj, gpus, "growth")
		}
	}
}

// bindOn gives running job rj the allocation gpus (its current one and
// more) and binds pending pods on the new GPUs, one bind task for all.
func (r *round) bindOn(rj *rjob, gpus []model.GPU, what string) {
	kj, mj := rj.kj, rj.kj.mj
	add := gpus[len(mj.Alloc):]
	free := r.freePending(rj)
	if len(add) == 0 || len(add)/rj.pod > len(free) {
		return
	}
	mj.EndPeriod(r.t, r.cluster)
	if err := r.state.Resize(mj, gpus); err != nil {
		r.s.log.Error("elastic job's new GPUs are not free", "job", jobName(kj.key), "what", what, "err", err)
		return
	}
	var binds []podBind
	for i := 0; i+rj.pod <= len(add); i += rj.pod {
		p := free[len(binds)]
		node := r.cluster.Nodes[add[i].Node].Name
		r.w.assumed[p.uid] = node
		binds = append(binds, podBind{uid: p.uid, ns: p.ns, name: p.name, node: node, seen: p.seen})
	}
	kj.boundGPUs += len(add)
	r.work.binds = append(r.work.binds, bindTask{job: kj.key, pods: binds})
}

// freePending returns the job's pending GPU pods that no bind concerns.
func (r *round) freePending(rj *rjob) []*podInfo {
	var out []*podInfo
	for _, p := range rj.pending {
		if r.w.assumed[p.uid] == "" {
			out = append(out, p)
		}
	}
	return out
}

// resize carries out a Resize of running job rj to gpus.
func (r *round) resize(rj *rjob, gpus []model.GPU) {
	kj, mj := rj.kj, rj.kj.mj
	cur, n := len(mj.Alloc)/rj.pod, len(gpus)/rj.pod
	_, _, sc := r.s.engine.Names()
	if n < cur {
		drop := rj.allocPods[n:cur]
		old := slices.Clone(mj.Alloc)
		mj.EndPeriod(r.t, r.cluster)
		mj.CountResize(r.t, len(gpus))
		if err := r.state.Resize(mj, gpus); err != nil {
			r.s.log.Error("shrink not carried out", "job", jobName(kj.key), "err", err)
			return
		}
		r.drain(kj, old[len(gpus):])
		t := r.ownerTask(rj, n)
		why := fmt.Sprintf("shrunk from %d to %d workers by the %s scaler", cur, n, sc)
		for _, p := range drop {
			r.w.deleted[p.uid] = true
			r.victims = append(r.victims, p.uid)
			t.deletes = append(t.deletes, deleteTask{uid: p.uid, ns: p.ns, name: p.name, why: why})
			r.s.event(p, v1.EventTypeNormal, "Shrunk", "Removed from its elastic job: "+why)
		}
		kj.size, kj.grow, kj.boundGPUs = n, nil, len(gpus)
		r.work.owners = append(r.work.owners, t)
		r.s.log.Info("shrinking job", "job", jobName(kj.key), "from", cur, "to", n)
		return
	}
	mj.CountResize(r.t, len(gpus))
	kj.size = n
	r.s.log.Info("growing job", "job", jobName(kj.key), "from", cur, "to", n, "scaler", sc)
	if len(r.freePending(rj)) >= n-cur {
		r.bindOn(rj, gpus, "resize")
		return
	}
	// The pods do not exist yet: keep the GPUs in this round's model and
	// for the rounds to come, and ask the owner for them.
	mj.EndPeriod(r.t, r.cluster)
	if err := r.state.Resize(mj, gpus); err != nil {
		r.s.log.Error("growth not carried out", "job", jobName(kj.key), "err", err)
		return
	}
	kj.grow = &growth{nodes: r.counts(gpus[cur*rj.pod:]), pods: n - cur, made: r.now}
	if o := r.w.owners[kj.owner]; o != nil && o.specPods < n {
		r.work.owners = append(r.work.owners, r.ownerTask(rj, n))
	}
}

// counts groups gpus by node, in order.
func (r *round) counts(gpus []model.GPU) []nodeCount {
	var out []nodeCount
	for _, g := range gpus {
		name := r.cluster.Nodes[g.Node].Name
		if len(out) == 0 || out[len(out)-1].node != name {
			out = append(out, nodeCount{node: name})
		}
		out[len(out)-1].gpus++
	}
	return out
}

// holdGrowths keeps the GPUs of waiting growths from the round (as
// reservations do), marks those whose pods all exist and whose GPUs are
// free as ready (growths binds them after buildState), and gives up those
// that waited growWait.
func (r *round) holdGrowths(byKey map[string]*rjob) {
	for _, kj := range r.w.jobs {
		g := kj.grow
		if g == nil {
			continue
		}
		rj := byKey[kj.key]
		if rj == nil || !kj.running || kj.stopped || r.now.Sub(g.made) > growWait {
			kj.grow = nil
			continue
		}
		ready := len(r.freePending(rj)) >= g.pods
		for _, nc := range g.nodes {
			i, ok := r.nodeIdx[nc.node]
			ready = ready && ok && r.free[i] >= nc.gpus
		}
		if ready {
			rj.growReady = true
			for _, nc := range g.nodes {
				r.free[r.nodeIdx[nc.node]] -= nc.gpus
			}
			continue
		}
		for _, nc := range g.nodes {
			if i, ok := r.nodeIdx[nc.node]; ok {
				h := min(nc.gpus, max(r.free[i], 0))
				r.held[i] += h
				r.free[i] -= h
			}
		}
	}
}

// ownerPatch changes an owner's size and deletes pods, in the order its
// controller needs: a Volcano Job's replicas first (its controller
// deletes the pods of the highest indices, those gpusched deletes); a
// batch Job's pods first (its controller would otherwise recreate them).
type ownerPatch struct {
	ns, name string
	volcano  bool
	// task and taskName locate the elastic task; replicas is its new
	// count (a batch Job's parallelism).
	task     int
	taskName string
	replicas int32
	deletes  []deleteTask
}

// ownerTask is the patch that sizes rj's owner to n GPU pods, and records
// it as asked.
func (r *round) ownerTask(rj *rjob, n int) ownerPatch {
	o := r.w.owners[rj.kj.owner]
	if o == nil {
		return ownerPatch{}
	}
	o.patched, o.patchedAt = n, r.now
	t := ownerPatch{ns: o.ns, name: o.name, replicas: int32(n)}
	if o.vc != nil {
		t.volcano, t.task, t.taskName = true, o.vc.elastic, o.vc.tasks[o.vc.elastic].name
		t.replicas = int32(max(n-o.vc.fixedPods(), 0))
	}
	return t
}

// reconcileOwners asks the owner of every running elastic job for the
// job's size when its spec asks for another (a job started at a size other
// than its spec's, or a patch that was lost).
func (r *round) reconcileOwners() {
	for _, rj := range r.jobs {
		kj := rj.kj
		o := r.w.owners[kj.owner]
		if !rj.elastic || o == nil || !kj.running || kj.stopped || kj.size <= 0 || o.specPods == kj.size {
			continue
		}
		if o.patched == kj.size && r.now.Sub(o.patchedAt) < ownerPatchWait {
			continue
		}
		r.work.owners = append(r.work.owners, r.ownerTask(rj, kj.size))
	}
}

// patchOwner carries out an ownerPatch.
func (s *Scheduler) patchOwner(ctx context.Context, t ownerPatch) {
	if t.name == "" {
		s.dispatch(ctx, tasks{deletes: t.deletes})
		return
	}
	if !t.volcano {
		s.deleteAll(ctx, t.deletes)
	}
	var err error
	if t.volcano {
		idx := strconv.Itoa(t.task)
		patch, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": "/spec/tasks/" + idx + "/name", "value": t.taskName},
			{"op": "replace", "path": "/spec/tasks/" + idx + "/replicas", "value": t.replicas}})
		_, err = s.cfg.Dynamic.Resource(vcJobGVR()).Namespace(t.ns).Patch(ctx, t.name, types.JSONPatchType, patch, metav1.PatchOptions{})
	} else {
		patch := []byte(`{"spec":{"parallelism":` + strconv.Itoa(int(t.replicas)) + `}}`)
		_, err = s.client.BatchV1().Jobs(t.ns).Patch(ctx, t.name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		s.log.Warn("cannot resize the job's owner", "job", t.ns+"/"+t.name, "size", t.replicas, "err", err)
	}
	if t.volcano {
		s.deleteAll(ctx, t.deletes)
	}
}

// deleteAll deletes pods, one after the other.
func (s *Scheduler) deleteAll(ctx context.Context, ds []deleteTask) {
	for _, d := range ds {
		s.deletePod(ctx, d)
	}
}

// fulfillment sets the gauges of the elastic jobs: replicas and seed 001's
// fulfillment score (cur − min) / (max − min) of their target size.
func (r *round) fulfillment() {
	m := r.s.elastic
	m.replicas.Reset()
	m.score.Reset()
	for _, rj := range r.jobs {
		if !rj.elastic || !rj.kj.running || rj.kj.stopped {
			continue
		}
		name := jobName(rj.kj.key)
		cur := rj.kj.size
		m.replicas.WithLabelValues(name).Set(float64(cur))
		m.score.WithLabelValues(name).Set(float64(cur-rj.min) / float64(rj.max-rj.min))
	}
}

// bindCompanions binds a running job's pending pods that ask for no GPU (a
// Volcano Job's launcher, created again) on its first worker's node.
func (r *round) bindCompanions(rj *rjob) {
	if len(rj.compPending) == 0 || len(rj.bound) == 0 {
		return
	}
	node := rj.bound[0].node
	if node == "" {
		node = r.w.assumed[rj.bound[0].uid]
	}
	var binds []podBind
	for _, p := range rj.compPending {
		if r.w.assumed[p.uid] == "" {
			r.w.assumed[p.uid] = node
			binds = append(binds, podBind{uid: p.uid, ns: p.ns, name: p.name, node: node, seen: p.seen})
		}
	}
	if len(binds) > 0 {
		r.work.binds = append(r.work.binds, bindTask{job: rj.kj.key, pods: binds})
	}
}

// elasticOrder puts the pods of a Volcano Job's elastic task after those
// of its other tasks (keeping each part in index order), so that a shrink,
// which removes the last pods, removes the highest ranks of the elastic
// task and never another task's pod.
func (r *round) elasticOrder(rj *rjob) {
	o := r.w.owners[rj.kj.owner]
	if o == nil || o.vc == nil || o.vc.elastic < 0 {
		return
	}
	name := o.vc.tasks[o.vc.elastic].name
	last := func(p *podInfo) int {
		if p.task == name {
			return 1
		}
		return 0
	}
	for _, ps := range [][]*podInfo{rj.bound, rj.pending} {
		slices.SortStableFunc(ps, func(a, b *podInfo) int { return cmp.Compare(last(a), last(b)) })
	}
}

// elasticTail keeps what the cluster sees of elastic jobs in step after a
// round: PodGroup phases, host lists, owners' sizes, and the gauges.
func (r *round) elasticTail() {
	r.podGroups()
	r.hostLists()
	r.reconcileOwners()
	r.fulfillment()
	for _, d := range r.w.failed {
		r.work.deletes = append(r.work.deletes, d)
	}
	r.w.failed = r.w.failed[:0]
}

// failedWorker queues the deletion of a failed pod of an elastic Volcano
// Job (gpusched's informer drops failed pods; Volcano's controller creates
// a pod again only once the failed one is gone). world.mu held.
func (w *world) failedWorker(p *v1.Pod) {
	ref := controllerOf(p)
	if p.Status.Phase != v1.PodFailed || p.DeletionTimestamp != nil || ref == nil || ref.APIVersion != volcanoJobAPI {
		return
	}
	kj := w.jobs[jobKey(p, ref, nil)]
	if kj == nil || kj.formed == nil || !kj.formed.elastic {
		return
	}
	w.failed = append(w.failed, deleteTask{uid: p.UID, ns: p.Namespace, name: p.Name, why: "it failed"})
}

// elasticMetrics are the gauges of elastic jobs.
type elasticMetrics struct {
	replicas, score *prometheus.GaugeVec
}

func newElasticMetrics(reg prometheus.Registerer) (*elasticMetrics, error) {
	m := &elasticMetrics{
		replicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpusched_job_replicas",
			Help: "Workers (GPU pods) an elastic job runs with or is being resized to."}, []string{"job"}),
		score: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpusched_job_fulfillment",
			Help: "Seed 001's fulfillment score of an elastic job: (replicas − min) / (max − min)."}, []string{"job"}),
	}
	for _, c := range []prometheus.Collector{m.replicas, m.score} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("kube: metrics: %w", err)
		}
	}
	return m, nil
}

// drain keeps the GPUs a shrink took from job kj occupied in this round's
// model (by a stand-in job) while its pods terminate: a job the round
// starts on them reserves them instead (start), and waits for the pods to
// go, as it does for a preempted job's. The stand-in asks what the job's
// pods ask of the nodes' other resources, which they hold until they are
// gone.
func (r *round) drain(kj *kjob, gpus []model.GPU) {
	n := len(gpus)
	ph := model.NewJob(model.JobSpec{ID: kj.key + " (shrinking)", GPUs: n, MinGPUs: n, MaxGPUs: n,
		ReplicaGPUs: kj.mj.Spec.ReplicaGPUs, Requests: kj.mj.Spec.Requests}, -1, -1, 0)
	r.state.Submit(ph)
	if err := r.state.Restore(ph, gpus); err != nil {
		r.s.log.Error("cannot hold the GPUs of a shrink", "job", jobName(kj.key), "err", err)
	}
}
