package kube

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The API calls a round decides; workers make them after the round, so
// that no call is made while the world is locked.
type (
	// podBind binds one pod to a node.
	podBind struct {
		uid            types.UID
		ns, name, node string
		// seen is when gpusched first saw the pod (the scheduling latency).
		seen time.Time
		// claims are written before the Binding (claims.go).
		claims []claimWrite
	}
	// bindTask binds a job's pods: all of them, or, when one fails, none
	// (the bound ones are deleted again).
	bindTask struct {
		job  string
		pods []podBind
	}
	// deleteTask deletes a pod with its own grace period; preempt adds
	// the DisruptionTarget condition first, as kube-scheduler does.
	deleteTask struct {
		uid           types.UID
		ns, name, why string
		preempt       bool
		// force deletes at once (grace 0): the pod's node is gone or not
		// Ready, no kubelet can run its grace period.
		force bool
	}
	// statusTask sets a pending pod's PodScheduled=False condition, if
	// the pod is still at resource version rv.
	statusTask struct {
		uid               types.UID
		ns, name, rv, why string
	}
	tasks struct {
		binds   []bindTask
		deletes []deleteTask
		status  []statusTask
		// owners, groups and hosts are elastic jobs' (elastic.go,
		// volcano.go, hosts.go).
		owners []ownerPatch
		groups []groupTask
		hosts  []hostsTask
	}
)

// dispatch hands a round's tasks to the workers.
func (s *Scheduler) dispatch(ctx context.Context, t tasks) {
	for _, d := range t.deletes {
		select {
		case s.deletes <- d:
		case <-ctx.Done():
			return
		}
	}
	for _, b := range t.binds {
		s.inflight.Add(1)
		select {
		case s.binds <- b:
		case <-ctx.Done():
			return
		}
	}
	s.status.push(t.status)
	s.hosts.push(t.hosts)
	for _, o := range t.owners {
		select {
		case s.owners <- o:
		case <-ctx.Done():
			return
		}
	}
	for _, g := range t.groups {
		select {
		case s.groups <- g:
		case <-ctx.Done():
			return
		}
	}
}

// runWorkers runs the bind, delete and status workers until ctx ends,
// and waits for them.
func (s *Scheduler) runWorkers(ctx context.Context) func() {
	var wg sync.WaitGroup
	for range s.cfg.BindWorkers {
		wg.Go(func() {
			for {
				select {
				case t := <-s.binds:
					s.bindJob(ctx, t)
					s.inflight.Add(-1)
				case <-ctx.Done():
					return
				}
			}
		})
	}
	wg.Go(func() { s.hostsWorker(ctx) })
	wg.Go(func() {
		for {
			select {
			case o := <-s.owners:
				s.patchOwner(ctx, o)
			case g := <-s.groups:
				s.setGroupStatus(ctx, g)
			case <-ctx.Done():
				return
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case d := <-s.deletes:
					s.deletePod(ctx, d)
				case <-ctx.Done():
					return
				}
			}
		})
		wg.Go(func() { s.statusWorker(ctx) })
	}
	return wg.Wait
}

// bindJob binds a job's pods, concurrently, and records the outcome.
func (s *Scheduler) bindJob(ctx context.Context, t bindTask) {
	errs := make([]error, len(t.pods))
	if len(t.pods) == 1 {
		errs[0] = s.bindPod(ctx, t.pods[0])
	} else {
		var wg sync.WaitGroup
		for i := range t.pods {
			wg.Go(func() { errs[i] = s.bindPod(ctx, t.pods[i]) })
		}
		wg.Wait()
	}
	s.bound(ctx, t, errs)
}

// bindPod creates the pod's Binding (with the pod's UID as a
// precondition).
func (s *Scheduler) bindPod(ctx context.Context, b podBind) error {
	t0 := time.Now()
	if len(b.claims) > 0 {
		if err := s.writeClaims(ctx, b); err != nil {
			return err
		}
	}
	err := s.client.CoreV1().Pods(b.ns).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: b.ns, UID: b.uid},
		Target:     v1.ObjectReference{Kind: "Node", Name: b.node}}, metav1.CreateOptions{})
	if err != nil && len(b.claims) > 0 {
		s.unreserveClaims(ctx, b)
	}
	s.metrics.bindLatency.Observe(time.Since(t0).Seconds())
	return err
}

// bound records the Bindings of a job: bound pods get the Scheduled
// event; when some failed, the others are deleted so that their
// controller creates them again, and the job waits.
func (s *Scheduler) bound(ctx context.Context, t bindTask, errs []error) {
	now := time.Now()
	failed := ""
	for i, err := range errs {
		if err != nil && failed == "" {
			failed = t.pods[i].name + ": " + err.Error()
		}
	}
	var dels []deleteTask
	// Only a failure changes the world: a successful gang's outcome does
	// not wait for a round to release the lock.
	if failed != "" {
		s.w.mu.Lock()
	}
	for i, b := range t.pods {
		err := errs[i]
		s.metrics.bindings.WithLabelValues(bindResult(err)).Inc()
		ref := &podInfo{uid: b.uid, ns: b.ns, name: b.name}
		switch {
		case err != nil:
			delete(s.w.assumed, b.uid)
			s.w.dra.dropInflight(b)
			s.log.Warn("binding failed", "pod", b.ns+"/"+b.name, "node", b.node, "result", bindResult(err), "err", err)
			if len(t.pods) > 1 {
				s.event(ref, v1.EventTypeWarning, "FailedScheduling", "binding its gang failed ("+failed+"); the gang waits")
			}
		case failed != "":
			s.w.deleted[b.uid] = true
			dels = append(dels, deleteTask{uid: b.uid, ns: b.ns, name: b.name,
				why: "another pod of its gang could not be bound (" + failed + ")"})
			s.event(ref, v1.EventTypeWarning, "FailedScheduling", "deleted after binding: another pod of its gang could not be bound ("+
				failed+"); its controller creates it again and the gang waits")
		default:
			s.metrics.scheduling.Observe(now.Sub(b.seen).Seconds())
			s.event(ref, v1.EventTypeNormal, "Scheduled", "Successfully assigned "+b.ns+"/"+b.name+" to "+b.node)
		}
	}
	if failed != "" {
		s.w.mu.Unlock()
		s.dispatch(ctx, tasks{deletes: dels})
		s.kickRound()
	}
}

// bindResult names the outcome of a Binding for the metrics: a conflict
// is a pod already bound (by another scheduler, or twice).
func bindResult(err error) string {
	if r := claimResult(err); r != "" {
		return r
	}
	switch {
	case err == nil:
		return "bound"
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsNotFound(err):
		return "not_found"
	}
	return "error"
}

// deletePod deletes a pod with its own grace period (its
// terminationGracePeriodSeconds: SIGTERM, then SIGKILL, the window to
// checkpoint), marking a preempted pod with the DisruptionTarget
// condition first.
func (s *Scheduler) deletePod(ctx context.Context, d deleteTask) {
	if d.preempt {
		patch := conditionPatch("", v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Reason: "PreemptionByScheduler", Message: "gpusched: " + d.why, LastTransitionTime: metav1.Now()})
		if _, err := s.client.CoreV1().Pods(d.ns).Patch(ctx, d.name, types.StrategicMergePatchType, patch,
			metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
			s.log.Debug("cannot set DisruptionTarget", "pod", d.ns+"/"+d.name, "err", err)
		}
	}
	uid := d.uid
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	if d.force {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	err := s.client.CoreV1().Pods(d.ns).Delete(ctx, d.name, opts)
	if err == nil || apierrors.IsNotFound(err) || ctx.Err() != nil {
		return
	}
	s.log.Error("cannot delete pod", "pod", d.ns+"/"+d.name, "err", err)
	s.w.mu.Lock()
	delete(s.w.deleted, d.uid)
	s.w.mu.Unlock()
	s.kickRound()
}

// conditionPatch is a strategic merge patch of a pod's status that sets
// one condition; with rv, only at that resource version.
func conditionPatch(rv string, c v1.PodCondition) []byte {
	type meta struct {
		ResourceVersion string `json:"resourceVersion,omitempty"`
	}
	p := struct {
		Meta   *meta `json:"metadata,omitempty"`
		Status struct {
			Conditions []v1.PodCondition `json:"conditions"`
		} `json:"status"`
	}{}
	if rv != "" {
		p.Meta = &meta{rv}
	}
	p.Status.Conditions = []v1.PodCondition{c}
	b, _ := json.Marshal(p)
	return b
}

// statusQueue holds the status writes not yet made, the latest per pod.
type statusQueue struct {
	mu    sync.Mutex
	items map[types.UID]statusTask
	order []types.UID
	ready chan struct{}
}

func newStatusQueue() *statusQueue {
	return &statusQueue{items: map[types.UID]statusTask{}, ready: make(chan struct{}, 1)}
}

func (q *statusQueue) push(ts []statusTask) {
	if len(ts) == 0 {
		return
	}
	q.mu.Lock()
	for _, t := range ts {
		if _, ok := q.items[t.uid]; !ok {
			q.order = append(q.order, t.uid)
		}
		q.items[t.uid] = t
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *statusQueue) pop() (statusTask, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) > 0 {
		uid := q.order[0]
		q.order = q.order[1:]
		if t, ok := q.items[uid]; ok {
			delete(q.items, uid)
			if len(q.order) > 0 {
				select {
				case q.ready <- struct{}{}:
				default:
				}
			}
			return t, true
		}
	}
	return statusTask{}, false
}

// statusWorker writes PodScheduled conditions; it yields to Bindings,
// which matter more.
func (s *Scheduler) statusWorker(ctx context.Context) {
	for {
		select {
		case <-s.status.ready:
		case <-ctx.Done():
			return
		}
		for {
			for s.inflight.Load() > 0 {
				select {
				case <-time.After(20 * time.Millisecond):
				case <-ctx.Done():
					return
				}
			}
			t, ok := s.status.pop()
			if !ok {
				break
			}
			s.writeStatus(ctx, t)
		}
	}
}

// writeStatus sets a pending pod's PodScheduled=False condition with
// reason Unschedulable and the wait reason as its message.
func (s *Scheduler) writeStatus(ctx context.Context, t statusTask) {
	patch := conditionPatch(t.rv, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse,
		Reason: v1.PodReasonUnschedulable, Message: t.why, LastTransitionTime: metav1.Now()})
	_, err := s.client.CoreV1().Pods(t.ns).Patch(ctx, t.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err == nil || ctx.Err() != nil {
		return
	}
	if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		s.log.Warn("cannot set the pod's PodScheduled condition", "pod", t.ns+"/"+t.name, "err", err)
	}
	s.w.mu.Lock()
	if p := s.w.pods[t.uid]; p != nil && p.want == t.why {
		p.want = "" // the next round tries again
	}
	s.w.mu.Unlock()
}
