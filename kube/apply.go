package kube

import (
	"math/bits"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// applier is the Kubernetes mode's engine.Applier. It changes the round's
// model state and the world at once and leaves the API calls (Bindings,
// deletions) to the workers, which run after the round.
type applier struct{ r *round }

// Update records a queue change.
func (a applier) Update(u engine.Update) error {
	u.Apply(a.r.t)
	return nil
}

// Reject leaves the job pending (a node it fits may join) with the
// engine's explanation, as a FailedScheduling event and its condition.
func (a applier) Reject(x engine.Rejection) error {
	if rj := a.r.byModel[x.Job]; rj != nil {
		rj.setReason(engine.WaitNeverFits+": "+x.Reason, true)
	}
	return nil
}

// Preempt deletes the job's pods, each with its own grace period.
func (a applier) Preempt(j *model.Job) error {
	pol, _, _ := a.r.s.engine.Names()
	a.r.stop(a.r.byModel[j], "preempted by the "+pol+" policy")
	return nil
}

// Migrate deletes the job's pods and reserves its new GPUs, where its pods
// start once their controller has created them again.
func (a applier) Migrate(x engine.Assignment) error {
	rj := a.r.byModel[x.Job]
	_, pla, _ := a.r.s.engine.Names()
	a.r.stop(rj, "moved to other GPUs by the "+pla+" placer (its pods start again on "+nodeList(a.r.cluster, x.GPUs)+")")
	a.r.reserve(rj.kj, x.GPUs)
	return nil
}

// Resize resizes a running elastic job through its owner (elastic.go).
func (a applier) Resize(x engine.Assignment) error {
	if rj := a.r.byModel[x.Job]; rj != nil {
		a.r.resize(rj, x.GPUs)
	}
	return nil
}

// Start binds the job's pods to its GPUs' nodes, or reserves the GPUs when
// pods being stopped still hold them.
func (a applier) Start(x engine.Assignment) error {
	a.r.start(a.r.byModel[x.Job], x.GPUs)
	return nil
}

// start takes the GPUs in the model and queues the job's Bindings, a pod
// of rj.pod GPUs per slice of each node's GPUs, the nodes in allocation
// order and the pods in index (then name) order, so that pod 0 lands on
// the first node.
func (r *round) start(rj *rjob, gpus []model.GPU) {
	kj, mj := rj.kj, rj.kj.mj
	if why := r.veto(rj, gpus); why != "" {
		rj.setReason(vetoReason(why), true)
		r.s.kickRound()
		return
	}
	if err := r.state.Start(mj, gpus); err != nil {
		r.reserve(kj, gpus)
		rj.setReason(engine.WaitHeld, false)
		return
	}
	var order []int32
	count := map[int32]int{}
	for _, g := range gpus {
		if count[g.Node] == 0 {
			order = append(order, g.Node)
		}
		count[g.Node]++
	}
	var binds []podBind
	for _, ni := range order {
		for range count[ni] / rj.pod {
			if len(binds) == len(rj.pending) {
				break
			}
			p := rj.pending[len(binds)]
			binds = append(binds, podBind{uid: p.uid, ns: p.ns, name: p.name, node: r.cluster.Nodes[ni].Name, seen: p.seen})
		}
	}
	var grow *growth
	if n := len(binds) * rj.pod; n < len(gpus) && rj.elastic && len(binds) >= rj.min && n%rj.pod == 0 && len(gpus)%rj.pod == 0 {
		// The scaler grew it beyond its pods: the rest once they exist.
		grow = &growth{nodes: r.counts(gpus[n:]), pods: (len(gpus) - n) / rj.pod, made: r.now}
	} else if n != len(gpus) {
		r.s.log.Error("placement is not made of whole pods; job not started", "job", jobName(kj.key), "gpus", len(gpus), "pod", rj.pod)
		_ = r.state.Stop(mj)
		return
	}
	for _, p := range rj.compPending {
		binds = append(binds, podBind{uid: p.uid, ns: p.ns, name: p.name, node: binds[0].node, seen: p.seen})
	}
	if why := r.draAllocate(binds); why != "" {
		_ = r.state.Stop(mj)
		rj.setReason(why, true)
		return
	}
	for _, b := range binds {
		r.w.assumed[b.uid] = b.node
	}
	r.work.binds = append(r.work.binds, bindTask{job: kj.key, pods: binds})
	if mj.FirstStart < 0 {
		mj.FirstStart = r.t
	}
	mj.LastStart, mj.Mark, mj.Resume = r.t, r.t, r.t
	kj.running, kj.stopped, kj.reserve, kj.boundGPUs, kj.size = true, false, nil, len(gpus), len(gpus)/rj.pod
	kj.grow = grow
	kj.gpuType = r.cluster.Types[r.cluster.TypeOf(gpus[0])].Name
	kj.attempt++
	rj.started = true
}

// stop deletes a running job's bound pods (their grace periods apply) and
// closes its execution period; its GPUs stay held in this round's model.
func (r *round) stop(rj *rjob, why string) {
	kj, mj := rj.kj, rj.kj.mj
	if kj.stopped {
		return
	}
	if note := checkpointNote(kj, r.now); note != "" {
		why += " (" + note + ")"
	}
	for _, p := range append(slices.Clone(rj.bound), rj.compBound...) {
		r.w.deleted[p.uid] = true
		r.victims = append(r.victims, p.uid)
		r.work.deletes = append(r.work.deletes, deleteTask{uid: p.uid, ns: p.ns, name: p.name, why: why, preempt: true})
		r.s.event(p, v1.EventTypeNormal, "Preempted", "Preempted by gpusched: "+why)
	}
	if len(mj.Alloc) > 0 {
		mj.EndPeriod(r.t, r.cluster)
	}
	mj.Preemptions++
	mj.Queued = r.t
	kj.stopped, kj.reserve, kj.grow = true, nil, nil
	r.s.log.Info("stopping job", "job", jobName(kj.key), "why", why)
}

// checkpointNote describes a job's latest checkpoint as the service does
// (model.CheckpointNote), "" when it has none.
func checkpointNote(kj *kjob, now time.Time) string {
	if kj.ckpt.IsZero() {
		return ""
	}
	return model.CheckpointNote(kj.ckptSteps, now.Sub(kj.ckpt).Round(100*time.Millisecond).String())
}

// reserve keeps gpus for job kj until its pods can start there.
func (r *round) reserve(kj *kjob, gpus []model.GPU) {
	rv := &reservation{made: r.now, victims: slices.Clone(r.victims)}
	idx := map[string]int{}
	for _, g := range gpus {
		name := r.cluster.Nodes[g.Node].Name
		i, ok := idx[name]
		if !ok {
			i = len(rv.nodes)
			idx[name] = i
			rv.nodes = append(rv.nodes, nodeCount{node: name})
		}
		rv.nodes[i].gpus++
	}
	kj.reserve = rv
}

// nodeList names the nodes of gpus, comma-separated, in order.
func nodeList(c *model.Cluster, gpus []model.GPU) string {
	var names []string
	for _, g := range gpus {
		if n := c.Nodes[g.Node].Name; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// refill binds the pending pods of running jobs one by one on free GPUs
// of the job's type, on nodes they may use, best fit first. Before the
// engine's round it binds replacements only (pods that bring a job back
// to the size it started with, which its controller created again after
// a pod went): a running job keeps its place ahead of waiting ones. After
// the plan it binds the pods beyond that size (a job started with its
// minimum) on the GPUs the plan left free. A job's size never shrinks
// here and this is not an elastic resize.
func (r *round) refill(replace bool) {
	for _, rj := range r.jobs {
		mj, kj := rj.kj.mj, rj.kj
		if mj.State != model.Running || kj.stopped || rj.event || len(mj.Alloc) == 0 || kj.grow != nil {
			continue
		}
		r.bindCompanions(rj)
		if len(rj.pending) == 0 || rj.elastic && !replace {
			continue
		}
		want := len(rj.pending)
		if replace {
			want = kj.size - len(mj.Alloc)/rj.pod
		}
		if want <= 0 || !slices.ContainsFunc(rj.pending, func(p *podInfo) bool { return r.w.assumed[p.uid] == "" }) {
			continue
		}
		t := r.cluster.TypeOf(mj.Alloc[0])
		elig := r.eligible(rj)
		for _, p := range rj.pending {
			if want <= 0 {
				break
			}
			if r.w.assumed[p.uid] != "" {
				continue
			}
			ni := r.bestNode(mj, t, rj.pod, elig)
			if ni < 0 {
				break
			}
			if !r.addPod(rj, p, ni) {
				break
			}
			want--
		}
	}
}

// addPod binds pending pod p of running job rj on cluster node ni.
func (r *round) addPod(rj *rjob, p *podInfo, ni int) bool {
	mj, kj := rj.kj.mj, rj.kj
	if !r.admitsPod(p, ni) {
		return false
	}
	b := []podBind{{uid: p.uid, ns: p.ns, name: p.name, node: r.cluster.Nodes[ni].Name, seen: p.seen}}
	if why := r.draAllocate(b); why != "" {
		return false
	}
	gpus := slices.Clone(mj.Alloc)
	m := r.state.FreeMask(ni)
	for range rj.pod {
		g := bits.TrailingZeros64(m)
		gpus = append(gpus, model.GPU{Node: int32(ni), Index: int32(g)})
		m &^= 1 << uint(g)
	}
	mj.EndPeriod(r.t, r.cluster)
	if err := r.state.Resize(mj, gpus); err != nil {
		r.s.log.Error("a running job's new pod's GPUs are not free", "job", jobName(kj.key), "err", err)
		r.undoAllocations(b[0].claims)
		return false
	}
	node := r.cluster.Nodes[ni].Name
	r.w.assumed[p.uid] = node
	kj.boundGPUs += rj.pod
	kj.size = max(kj.size, len(gpus)/rj.pod)
	r.work.binds = append(r.work.binds, bindTask{job: kj.key, pods: b})
	return true
}

// bestNode returns the cluster node of type t, allowed by elig, with room
// for one more pod of job j (roomOn), whose free GPUs exceed pod by the
// least (lowest index among equals), or -1.
func (r *round) bestNode(j *model.Job, t, pod int, elig []bool) int {
	best, bestFree := -1, 0
	for i, n := range r.cluster.Nodes {
		if n.Type != t || elig != nil && !elig[i] || !r.roomOn(j, i) {
			continue
		}
		if f := bits.OnesCount64(r.state.FreeMask(i)); f >= pod && (best < 0 || f < bestFree) {
			best, bestFree = i, f
		}
	}
	return best
}

// reasons records why every pending pod that was not bound waits: the
// job's own reason, else the plan's (engine.WaitReason), else that it
// waits behind others; replacement pods of running jobs wait for GPUs.
func (r *round) reasons(plan *engine.Plan) {
	trace := map[string]string{}
	if plan != nil {
		for _, d := range plan.Trace {
			if why, ok := engine.WaitReason(d); ok {
				trace[d.Job] = why
			}
		}
	}
	for _, rj := range r.jobs {
		why := rj.reason
		own := why != ""
		switch {
		case why != "":
		case r.cluster == nil:
			why = waitNoNodes
		case len(rj.bound) > 0 || rj.started:
			why = waitReplace
		case trace[rj.kj.key] != "":
			why = trace[rj.kj.key]
		default:
			why = engine.WaitBehind
		}
		if !own && len(rj.bound) == 0 && !rj.started {
			why = r.filterSummary(rj, why)
		}
		rj.why = why
		for _, p := range rj.pending {
			r.note(p, why, rj.event)
		}
	}
}

// note queues a pending pod's PodScheduled=False condition and its
// FailedScheduling event when its reason changed, once it has waited
// condDelay.
func (r *round) note(p *podInfo, why string, event bool) {
	if r.w.assumed[p.uid] != "" || r.now.Sub(p.seen) < condDelay || len(p.gates) > 0 {
		return // a gated pod keeps the API server's SchedulingGated condition
	}
	if event && p.evented != why {
		p.evented = why
		r.s.event(p, v1.EventTypeWarning, "FailedScheduling", why)
	}
	if p.cond == why || p.want == why {
		return
	}
	p.want = why
	r.work.status = append(r.work.status, statusTask{uid: p.uid, ns: p.ns, name: p.name, rv: p.obj.ResourceVersion, why: why})
}
