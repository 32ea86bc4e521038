package kube

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Timing of the rounds' bookkeeping.
const (
	// condDelay: a pod gets its PodScheduled=False condition once it has
	// waited this long, so that pods bound at once cost no status write.
	condDelay = time.Second
	// reserveGrace is how long a reservation outlives the pods it waits
	// for (the time a controller takes to create its job's pods again).
	reserveGrace = 30 * time.Second
	// emptyKeep is how long a job without pods keeps its history when no
	// live owner vouches for it.
	emptyKeep = 30 * time.Second
)

// Wait reasons of the Kubernetes mode, beside the engine's (engine.Wait*).
const (
	waitNoNodes = "no node is registered: no Ready, schedulable node with nvidia.com/gpu"
	waitReplace = "waiting for free GPUs (of its running job's type, on a node its pods may use) to join its job"
	waitAway    = "its job's other pods run on nodes gpusched does not use now (not Ready or cordoned)"
)

// round is one scheduling round's working data, built and used under
// world.mu.
type round struct {
	s   *Scheduler
	w   *world
	now time.Time
	t   model.Time
	// nodes are the usable nodes by name. Per node: base is its GPUs less
	// those of other schedulers' pods and of gpusched's terminating pods;
	// free is base less gpusched's bound pods and reserved GPUs; held the
	// GPUs reservations keep from the round.
	nodes   []*nodeInfo
	nodeIdx map[string]int
	base    []int
	free    []int
	held    []int
	cluster *model.Cluster
	cidx    map[string]int
	state   *model.State
	jobs    []*rjob
	byModel map[*model.Job]*rjob
	claims  []engine.Assignment
	// victims are the pods deleted this round (reservations wait for them).
	victims []types.UID
	work    tasks
	trace   map[string]string
}

// rjob is a job in a round.
type rjob struct {
	kj  *kjob
	pod int
	set settings
	min int
	// bound are its live pods bound (or being bound) to a node, pending
	// its live unbound pods in the order they are started.
	bound, pending []*podInfo
	// alloc are its running pods' GPUs in the cluster.
	alloc []model.GPU
	// reason is why its pending pods wait (set by the round); event says
	// it deserves a FailedScheduling event.
	reason  string
	event   bool
	inState bool
	started bool
	// invalid: its pods or annotations are malformed (reason says how).
	invalid bool
	sig     string
}

// run builds the model state from the world, carries out the
// reservations that can be, runs the engine and applies its plan, binds
// replacement pods, and records every pending pod's wait reason.
func (r *round) run() {
	r.readNodes()
	r.formJobs()
	r.reservations()
	if !r.buildState() {
		r.reasons(nil)
		return
	}
	a := applier{r}
	if len(r.claims) > 0 {
		if err := engine.Apply(engine.Plan{Start: r.claims}, a); err != nil {
			r.s.log.Error("reserved starts", "err", err)
		}
	}
	r.refill(true)
	r.s.shapes = r.shapes()
	plan := r.s.engine.Schedule(r.state, r.t)
	r.s.wake = plan.Wake
	if err := engine.Apply(plan, a); err != nil {
		r.s.log.Error("plan not carried out in full", "err", err)
	}
	r.refill(false)
	r.reasons(&plan)
}

// readNodes lists the usable nodes and the GPUs free on each.
func (r *round) readNodes() {
	w := r.w
	for _, n := range w.nodes {
		if n.usable() && (r.s.cfg.NodeSelector == nil || r.s.cfg.NodeSelector.Matches(labelSet(n.obj.Labels))) {
			r.nodes = append(r.nodes, n)
		}
	}
	slices.SortFunc(r.nodes, func(a, b *nodeInfo) int { return cmp.Compare(a.name, b.name) })
	r.nodeIdx = make(map[string]int, len(r.nodes))
	r.base, r.free, r.held = make([]int, len(r.nodes)), make([]int, len(r.nodes)), make([]int, len(r.nodes))
	for i, n := range r.nodes {
		r.nodeIdx[n.name] = i
		r.base[i] = n.gpus
		r.s.warnProduct(n)
	}
	for _, fp := range w.foreign {
		if i, ok := r.nodeIdx[fp.node]; ok {
			r.base[i] -= int(fp.gpus)
		}
	}
	live := make([]int, len(r.nodes))
	for _, p := range w.pods {
		node := p.node
		if node == "" {
			node = w.assumed[p.uid]
		}
		i, ok := r.nodeIdx[node]
		switch {
		case !ok:
		case p.deleting || w.deleted[p.uid]:
			r.base[i] -= int(p.gpus)
		default:
			live[i] += int(p.gpus)
		}
	}
	for i := range r.nodes {
		r.free[i] = r.base[i] - live[i]
	}
}

// formJobs reads every job: its pods, settings and gang, and whether it
// runs, waits in the engine's queue, or waits for a reason of its own.
func (r *round) formJobs() {
	keys := slices.Collect(maps.Keys(r.w.jobs))
	slices.Sort(keys)
	r.byModel = map[*model.Job]*rjob{}
	for _, key := range keys {
		kj := r.w.jobs[key]
		if len(kj.pods) == 0 {
			r.forget(kj)
			continue
		}
		if rj := r.formJob(kj); rj != nil {
			r.jobs = append(r.jobs, rj)
		}
	}
	slices.SortFunc(r.jobs, func(a, b *rjob) int {
		return cmp.Or(cmp.Compare(a.kj.mj.Spec.Submit, b.kj.mj.Spec.Submit), cmp.Compare(a.kj.seq, b.kj.seq))
	})
}

// forget drops a job without pods once no live owner may create them
// again.
func (r *round) forget(kj *kjob) {
	if o := r.w.owners[kj.owner]; o != nil && !o.done && r.now.Sub(kj.empty) < 10*emptyKeep {
		return
	}
	if r.now.Sub(kj.empty) >= emptyKeep {
		delete(r.w.jobs, kj.key)
	}
}

// formJob classifies one job with pods; nil when it has no live pod.
func (r *round) formJob(kj *kjob) *rjob {
	rj := &rjob{kj: kj}
	for _, p := range kj.pods {
		switch {
		case p.deleting || r.w.deleted[p.uid]:
		case p.node != "" || r.w.assumed[p.uid] != "":
			rj.bound = append(rj.bound, p)
		default:
			rj.pending = append(rj.pending, p)
		}
	}
	if len(rj.bound)+len(rj.pending) == 0 {
		return nil
	}
	slices.SortFunc(rj.pending, podOrder)
	slices.SortFunc(rj.bound, podOrder)
	err := r.readSettings(rj)
	r.modelJob(rj)
	r.track(rj)
	switch {
	case len(rj.bound) > 0:
		if err != nil {
			rj.setReason(err.Error(), true)
		}
		rj.inState = true
	case err != nil:
		rj.setReason(err.Error(), true)
		rj.invalid = true
	case len(rj.pending) < rj.min:
		rj.setReason(fmt.Sprintf("waiting for the gang: %d of its %d pods (%s) exist", len(rj.pending), rj.min, AnnMinReplicas), true)
	default:
		if why := r.neverFits(rj); why != "" {
			rj.setReason(engine.WaitNeverFits+": "+why, true)
			break
		}
		rj.inState = true
	}
	return rj
}

func podOrder(a, b *podInfo) int {
	return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(a.name, b.name))
}

func (rj *rjob) setReason(why string, event bool) { rj.reason, rj.event = why, event }

// readSettings reads the job's GPUs per pod, settings and gang size. The
// pods must agree on their GPU request and settings; a job whose pods do
// not, or whose annotations are malformed, gets an error that names them
// (and, running, the default settings).
func (r *round) readSettings(rj *rjob) error {
	pods := append(slices.Clone(rj.bound), rj.pending...)
	first := pods[0]
	rj.pod, rj.sig = int(first.gpus), first.sig
	owner := r.w.owners[rj.kj.owner]
	merged := func(p *podInfo) map[string]string {
		m := map[string]string{}
		if owner != nil {
			maps.Copy(m, owner.ann)
		}
		for _, k := range settingKeys() {
			if v, ok := p.ann[k]; ok {
				m[k] = v
			}
		}
		return m
	}
	ann := merged(first)
	rj.min = r.defaultMin(rj, owner, len(pods))
	for _, p := range pods[1:] {
		if p.gpus != first.gpus {
			return fmt.Errorf("its pods ask for different numbers of %s: %s %d, %s %d; a job's pods must be alike",
				ResourceGPU, first.name, first.gpus, p.name, p.gpus)
		}
		other := merged(p)
		for _, k := range settingKeys() {
			if ann[k] != other[k] {
				return fmt.Errorf("its pods disagree on annotation %s: %s has %q, %s has %q", k, first.name, ann[k], p.name, other[k])
			}
		}
		if p.sig != first.sig {
			rj.sig = "" // several constraint sets: checked pod by pod
		}
	}
	if first.gpus < 1 || first.gpus > model.MaxGPUsPerNode {
		rj.pod = 1
		return fmt.Errorf("pod %s asks for %d %s; gpusched places pods that ask for 1 to %d (others belong to another scheduler)",
			first.name, first.gpus, ResourceGPU, model.MaxGPUsPerNode)
	}
	set, err := parseSettings(ann)
	if err != nil {
		return err
	}
	rj.set = set
	if set.minReplicas > 0 {
		rj.min = set.minReplicas
	}
	return nil
}

// defaultMin is the gang size without gpusched.io/min-replicas: a batch
// Job's parallelism (capped by the completions still to go), else 1.
func (r *round) defaultMin(rj *rjob, owner *ownerInfo, pods int) int {
	if owner == nil {
		return 1
	}
	n := owner.parallelism
	if owner.completions >= 0 {
		n = min(n, owner.completions-owner.succeeded)
	}
	return int(max(n, 1))
}

// modelJob creates or updates the job's model job.
func (r *round) modelJob(rj *rjob) {
	kj := rj.kj
	submit := kj.submit
	if o := r.w.owners[kj.owner]; o != nil && !o.created.IsZero() {
		submit = o.created
	}
	n := len(rj.bound) + len(rj.pending)
	spec := model.JobSpec{ID: kj.key, Submit: model.Time(submit.UnixMilli()), GPUs: n * rj.pod,
		MinGPUs: min(rj.min, n) * rj.pod, MaxGPUs: n * rj.pod, Model: rj.set.model, GPUType: rj.set.gpuType,
		Priority: rj.set.priority, User: rj.pending0().ns, PeakMemMiB: r.s.matrix.PeakMemMiB(rj.set.model), ReplicaGPUs: rj.pod}
	if len(rj.bound) == 0 {
		spec.GPUs, spec.MaxGPUs = len(rj.pending)*rj.pod, len(rj.pending)*rj.pod
		spec.MinGPUs = min(rj.min*rj.pod, spec.GPUs)
	}
	if kj.mj == nil {
		kj.mj = model.NewJob(spec, kj.seq, -1, 0)
	}
	kj.mj.Spec = spec
	if !kj.ckpt.IsZero() {
		kj.mj.Checkpoint = model.Time(kj.ckpt.UnixMilli())
	}
	r.byModel[kj.mj] = rj
}

// pending0 returns one of the job's live pods.
func (rj *rjob) pending0() *podInfo {
	if len(rj.bound) > 0 {
		return rj.bound[0]
	}
	return rj.pending[0]
}

// track keeps the job's execution history in step with its pods: a job
// that gained bound pods without gpusched starting it (gpusched started
// while it ran) begins an execution now; one whose bound GPUs changed
// closes its period; one that lost them all without being stopped by
// gpusched ends its execution.
func (r *round) track(rj *rjob) {
	kj, mj := rj.kj, rj.kj.mj
	gpus := len(rj.bound) * rj.pod
	switch {
	case gpus > 0 && !kj.running:
		if mj.FirstStart < 0 {
			mj.FirstStart = r.t
		}
		mj.LastStart, mj.Mark, mj.Resume = r.t, r.t, r.t
		kj.running, kj.stopped, kj.size = true, false, len(rj.bound)
		kj.attempt++
	case gpus > 0 && gpus != kj.boundGPUs && len(mj.Alloc) > 0 && r.s.prevCluster != nil:
		mj.EndPeriod(r.t, r.s.prevCluster)
	case gpus == 0 && kj.running:
		if !kj.stopped && len(mj.Alloc) > 0 && r.s.prevCluster != nil {
			mj.EndPeriod(r.t, r.s.prevCluster)
		}
		kj.running, kj.stopped = false, false
	}
	kj.boundGPUs = gpus
	kj.size = max(kj.size, len(rj.bound))
	mj.Alloc = nil
}

// neverFits explains why a waiting job can never run on the usable nodes
// as they are (whatever their load), "" when it could: its pods do not
// fit any node they may use, or its gang does not fit them all.
func (r *round) neverFits(rj *rjob) string {
	if len(r.nodes) == 0 {
		return ""
	}
	biggest, room, allowed := 0, 0, 0
	for _, n := range r.nodes {
		if rj.set.gpuType != "" && n.typ != rj.set.gpuType || !r.accepts(rj, n) {
			continue
		}
		allowed++
		biggest = max(biggest, n.gpus)
		room += n.gpus / rj.pod
	}
	switch {
	case allowed == 0 && rj.set.gpuType != "":
		return fmt.Sprintf("no Ready node with GPU type %s (%s) accepts its pods", rj.set.gpuType, AnnGPUType)
	case allowed == 0:
		return "no Ready node with nvidia.com/gpu accepts its pods (node selector, node affinity or taints)"
	case rj.pod > biggest:
		return fmt.Sprintf("each of its pods asks for %d %s, and the largest node it may use has %d", rj.pod, ResourceGPU, biggest)
	case room < rj.min:
		return fmt.Sprintf("its gang of %d pods of %d GPUs does not fit the nodes it may use (room for %d such pods)", rj.min, rj.pod, room)
	}
	return ""
}

// accepts reports whether node n accepts every pod of the job.
func (r *round) accepts(rj *rjob, n *nodeInfo) bool {
	if rj.sig != "" {
		return r.s.elig.accepts(r.w.nodesVersion, rj.sig, rj.pending0().obj, n)
	}
	for _, p := range append(slices.Clone(rj.bound), rj.pending...) {
		if !r.s.elig.accepts(r.w.nodesVersion, p.sig, p.obj, n) {
			return false
		}
	}
	return true
}
