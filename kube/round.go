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
	waitNoNodes = engine.WaitNoNodes + ": no Ready, schedulable node with nvidia.com/gpu"
	waitReplace = engine.WaitBlocked + " (of its running job's type, on a node its pods may use) to join its job"
	waitAway    = "its job's other pods run on nodes gpusched does not use now (not Ready or cordoned)"
	waitGated   = "waiting for its pods' scheduling gates to be removed"
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
	// sigs caches node eligibility by constraint signature; summaries the
	// wait reasons' account of the nodes (reasons.go).
	sigs      map[string]*sigInfo
	summaries map[summaryKey]summary
	// victims are the pods deleted this round (reservations wait for them).
	victims []types.UID
	work    tasks
	trace   map[string]string
	// dra is the round's DRA data (claims.go), nil until a job with
	// claims needs it.
	dra *draRound
}

// rjob is a job in a round.
type rjob struct {
	kj  *kjob
	pod int
	// req is what each of its GPU pods asks besides GPUs (the most any of
	// them asks of each resource).
	req model.Resources
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
	// elastic: its owner can be resized and max > min (elastic.go); max is
	// its maximum in GPU pods.
	elastic bool
	max     int
	// allocPods are the bound pods behind alloc, one per rj.pod GPUs.
	allocPods []*podInfo
	// compBound and compPending are a Volcano Job's pods that ask for no
	// GPU (a launcher): bound with the gang, never counted.
	compBound, compPending []*podInfo
	// growReady: its growth's pods all exist and its GPUs are free.
	growReady bool
	// gated: some of its pods have scheduling gates; why is the wait
	// reason its pending pods were given (reasons).
	gated bool
	why   string
}

// run builds the model state from the world, carries out the
// reservations that can be, runs the engine and applies its plan, binds
// replacement pods, and records every pending pod's wait reason.
func (r *round) run() {
	r.draRefresh()
	r.readNodes()
	r.draTaken()
	r.formJobs()
	defer r.groupStatuses()
	r.restarts()
	r.reservations()
	defer r.elasticTail()
	r.s.filters, r.s.shapes = nil, nil
	if !r.buildState() {
		r.reasons(nil)
		return
	}
	r.s.filters = r.podFilters()
	a := applier{r}
	if len(r.claims) > 0 {
		if err := engine.Apply(engine.Plan{Start: r.claims}, a); err != nil {
			r.s.log.Error("reserved starts", "err", err)
		}
	}
	r.growths()
	r.refill(true)
	r.s.shapes = r.shapes()
	plan := r.s.engine.Schedule(r.state, r.t)
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
			if node = w.assumed[p.uid]; node == "" {
				continue // pending: on no node
			}
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
	r.byModel = make(map[*model.Job]*rjob, len(r.w.jobs))
	r.jobs = make([]*rjob, 0, len(r.w.jobs))
	for _, kj := range r.w.ordered() {
		if len(kj.pods) == 0 {
			r.forget(kj)
			continue
		}
		r.dropLost(kj)
		if rj := r.formJob(kj); rj != nil {
			r.jobs = append(r.jobs, rj)
		}
	}
	if len(r.w.conflicts) > 0 {
		byKey := make(map[string]*rjob, len(r.jobs))
		for _, rj := range r.jobs {
			byKey[rj.kj.key] = rj
		}
		r.groupConflicts(byKey)
	}
	// By seq already: mostly in submission order too.
	byQueue := func(a, b *rjob) int {
		return cmp.Or(cmp.Compare(a.kj.mj.Spec.Submit, b.kj.mj.Spec.Submit), cmp.Compare(a.kj.seq, b.kj.seq))
	}
	if !slices.IsSortedFunc(r.jobs, byQueue) {
		slices.SortFunc(r.jobs, byQueue)
	}
}

// forget drops a job without pods once no live owner may create them
// again.
func (r *round) forget(kj *kjob) {
	if o := r.w.owners[kj.owner]; o != nil && !o.done && r.now.Sub(kj.empty) < 10*emptyKeep {
		return
	}
	if r.now.Sub(kj.empty) >= emptyKeep {
		delete(r.w.jobs, kj.key)
		kj.forgotten = true
	}
}

// formJob classifies one job with pods; nil when it has no live pod.
func (r *round) formJob(kj *kjob) *rjob {
	rj := &rjob{kj: kj}
	for _, p := range kj.pods {
		switch {
		case p.deleting || len(r.w.deleted) > 0 && r.w.deleted[p.uid]:
		case p.gpus == 0 && p.owner != nil && p.owner.APIVersion == volcanoJobAPI:
			if p.node != "" || r.w.assumed[p.uid] != "" {
				rj.compBound = append(rj.compBound, p)
			} else {
				rj.compPending = append(rj.compPending, p)
			}
		case p.node != "" || r.w.assumed[p.uid] != "":
			rj.bound = append(rj.bound, p)
		default:
			rj.gated = rj.gated || len(p.gates) > 0
			rj.pending = append(rj.pending, p)
		}
	}
	if len(rj.bound)+len(rj.pending) == 0 {
		return nil
	}
	if rj.gated && len(rj.bound) > 0 {
		// A running job's gated pods wait for their gates alone.
		rj.pending = slices.DeleteFunc(rj.pending, func(p *podInfo) bool { return len(p.gates) > 0 })
	}
	slices.SortFunc(rj.pending, podOrder)
	slices.SortFunc(rj.bound, podOrder)
	r.elasticOrder(rj)
	err := r.settings(rj)
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
	case rj.gated:
		rj.setReason(waitGated+": "+gatesText(rj.pending), false)
	case len(rj.pending) < rj.min:
		rj.setReason(fmt.Sprintf("waiting for the gang: %d of its %d pods (%s) exist", len(rj.pending), rj.min, r.gangText(rj)), true)
	default:
		if why := r.draWaitReason(rj); why != "" {
			rj.setReason(why, true)
			break
		}
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

// formed is what readSettings found of a job, kept while neither its pods
// nor its owner change.
type formed struct {
	version, owner uint64
	pod, min, max  int
	elastic        bool
	sig            string
	req            model.Resources
	set            settings
	err            error
}

// settings is readSettings, cached in the job.
func (r *round) settings(rj *rjob) error {
	kj := rj.kj
	var ov uint64
	if o := r.w.owners[kj.owner]; o != nil {
		ov = o.version
	}
	if f := kj.formed; f != nil && f.version == kj.version && f.owner == ov {
		rj.pod, rj.min, rj.sig, rj.set, rj.max, rj.elastic, rj.req = f.pod, f.min, f.sig, f.set, f.max, f.elastic, f.req
		return f.err
	}
	err := r.readSettings(rj)
	if err == nil {
		r.elasticLimits(rj, rj.set)
	}
	kj.formed = &formed{version: kj.version, owner: ov, pod: rj.pod, min: rj.min, sig: rj.sig, set: rj.set, err: err,
		max: rj.max, elastic: rj.elastic, req: rj.req}
	return err
}

// readSettings reads the job's GPUs per pod, other requests, settings and
// gang size. The pods must agree on their GPU request and settings; a job
// whose pods do not, or whose annotations are malformed, gets an error
// that names them (and, running, the default settings). Pods that ask for
// different amounts of other resources count as asking for the most.
func (r *round) readSettings(rj *rjob) error {
	pods := append(slices.Clone(rj.bound), rj.pending...)
	first := pods[0]
	rj.pod, rj.sig, rj.req = int(first.gpus), first.sig, nil
	for _, p := range pods {
		maxInto(&rj.req, p.req)
	}
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
	if first.group != nil {
		m, err := r.groupMin(rj, pods)
		if err != nil {
			return err
		}
		rj.min = m
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
		Priority: rj.set.priority, User: rj.pending0().ns, PeakMemMiB: r.s.matrix.PeakMemMiB(rj.set.model), ReplicaGPUs: rj.pod,
		Requests: rj.req}
	if len(rj.bound) == 0 {
		spec.GPUs, spec.MaxGPUs = len(rj.pending)*rj.pod, len(rj.pending)*rj.pod
		spec.MinGPUs = min(rj.min*rj.pod, spec.GPUs)
	}
	r.elasticSpec(rj, &spec)
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
	st := r.fitStats(rj)
	switch {
	case st.allowed == 0 && rj.set.gpuType != "":
		return fmt.Sprintf("no Ready node with GPU type %s (%s) accepts its pods", rj.set.gpuType, AnnGPUType)
	case st.allowed == 0 && r.volumeWait(rj) != "":
		return r.volumeWait(rj)
	case st.allowed == 0:
		return "no Ready node with nvidia.com/gpu accepts its pods (node selector, node affinity or taints)"
	case rj.pod > st.biggest:
		return fmt.Sprintf("each of its pods asks for %d %s, and the largest node it may use has %d", rj.pod, ResourceGPU, st.biggest)
	case st.room < rj.min:
		return fmt.Sprintf("its gang of %d pods of %d GPUs does not fit the nodes it may use (room for %d such pods)", rj.min, rj.pod, st.room)
	}
	return tooLarge(rj.req, st.most)
}

// sigInfo is what a round knows of the nodes that accept the pods of one
// constraint signature.
type sigInfo struct {
	// usable and cluster say, per usable node and per cluster node,
	// whether it accepts the pods; nil when every node does.
	usable, cluster []bool
	clusterDone     bool
	stats           map[statKey]fitStat
}

type statKey struct {
	typ string
	pod int
}

// fitStat sums up the nodes a job may use: how many, the largest, and
// how many of its pods they hold when empty (by their GPUs); most is the
// largest allocatable amount of each other resource among them.
type fitStat struct {
	allowed, biggest, room int
	most                   model.Resources
}

// sigOf returns the job's sigInfo: shared by the jobs of its signature
// for the round, or its own when its pods' constraints differ.
func (r *round) sigOf(rj *rjob) *sigInfo {
	if r.hasClaims(rj) {
		return r.draSigOf(rj)
	}
	if rj.sig != "" {
		if si := r.sigs[rj.sig]; si != nil {
			return si
		}
	}
	pods := append(slices.Clone(rj.bound), rj.pending...)
	si := &sigInfo{stats: map[statKey]fitStat{}}
	all := true
	usable := make([]bool, len(r.nodes))
	for i, n := range r.nodes {
		usable[i] = true
		for _, p := range pods {
			if !r.s.elig.accepts(r.w.nodesVersion, p.sig, p.obj, n) || r.w.volumeReason(p.obj, n.obj) != "" {
				usable[i] = false
				break
			}
			if rj.sig != "" {
				break // one pod speaks for all
			}
		}
		all = all && usable[i]
	}
	if !all {
		si.usable = usable
	}
	if rj.sig != "" {
		if r.sigs == nil {
			r.sigs = map[string]*sigInfo{}
		}
		r.sigs[rj.sig] = si
	}
	return si
}

// fitStats returns the job's fitStat over the usable nodes of its type
// constraint that accept its pods.
func (r *round) fitStats(rj *rjob) fitStat {
	si := r.sigOf(rj)
	key := statKey{rj.set.gpuType, rj.pod}
	if st, ok := si.stats[key]; ok {
		return st
	}
	var st fitStat
	for i, n := range r.nodes {
		if rj.set.gpuType != "" && n.typ != rj.set.gpuType || si.usable != nil && !si.usable[i] {
			continue
		}
		st.allowed++
		st.biggest = max(st.biggest, n.gpus)
		st.room += n.gpus / rj.pod
		maxInto(&st.most, n.alloc)
	}
	si.stats[key] = st
	return st
}
