package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
)

// refTypeName is the reference GPU type of the embedded throughput matrix
// (as in the service).
const refTypeName = "v100"

// Scheduler is the Kubernetes mode: informers keep its view of nodes and
// pods, rounds run the engine on it and carry the plan out through the
// API server. Build it with New and run it with Run.
type Scheduler struct {
	cfg    Config
	client kubernetes.Interface
	log    *slog.Logger
	engine *engine.Engine
	// shapes are the current round's, read by the pod placer.
	shapes shapes
	matrix *profile.Matrix
	ref    model.GPUType
	prof   *profiles
	w      *world
	kick   chan struct{}
	elig   eligibility
	// prevCluster is the last round's cluster; tab its profile table (for
	// tabMatrix).
	prevCluster *model.Cluster
	tab         *profile.Table
	tabCluster  *model.Cluster
	tabMatrix   *profile.Matrix
	warned      map[string]bool
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	leading     atomic.Bool
	metrics     *metricSet
	binds       chan bindTask
	deletes     chan deleteTask
	status      *statusQueue
	inflight    atomic.Int64
	// Elastic jobs' API calls (elastic.go, volcano.go, hosts.go) and gauges.
	owners  chan ownerPatch
	groups  chan groupTask
	hosts   *hostsQueue
	elastic *elasticMetrics

	// filters is the current round's filterRound (podfilter.go), read by
	// the pod placer.
	filters *filterRound
}

// New builds a scheduler that talks to the API server through client.
func New(client kubernetes.Interface, cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, client: client, log: cfg.Logger, w: newWorld(), kick: make(chan struct{}, 1),
		warned: map[string]bool{}, binds: make(chan bindTask, 1024), deletes: make(chan deleteTask, 1024),
		status: newStatusQueue(), owners: make(chan ownerPatch, 256), groups: make(chan groupTask, 256), hosts: newHostsQueue()}
	opts := *cfg.Options
	opts.WrapPlacer = func(p engine.Placer) engine.Placer {
		return &podPlacer{inner: p, shapes: &s.shapes, filters: &s.filters}
	}
	if s.engine, err = recipe.New(cfg.Names, opts); err != nil {
		return nil, configErrorf("%w", err)
	}
	if s.matrix, err = profile.ParseMatrix("embedded throughput matrix", assets.Throughputs()); err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	s.ref, _ = config.LookupType(refTypeName)
	online, err := profile.NewOnline(profile.DefaultOnlineWeight)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	s.prof = &profiles{base: s.matrix, online: online}
	if s.metrics, err = newMetrics(s, cfg.Registerer); err != nil {
		return nil, err
	}
	if s.elastic, err = newElasticMetrics(cfg.Registerer); err != nil {
		return nil, err
	}
	s.broadcaster = record.NewBroadcaster()
	s.recorder = s.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: cfg.SchedulerName})
	return s, nil
}

// Identity returns the name this scheduler uses in the leader lease.
func (s *Scheduler) Identity() string { return s.cfg.Identity }

// Run watches the cluster and schedules until ctx ends: at once without
// leader election, else while it holds the lease. It returns nil when ctx
// ends and an error when it lost the lease (the process should exit and be
// restarted, as kube-scheduler does) or could not start.
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.watch(ctx); err != nil {
		return err
	}
	s.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.client.CoreV1().Events("")})
	defer s.broadcaster.Shutdown()
	if !s.cfg.LeaderElect {
		s.lead(ctx)
		return nil
	}
	return s.elect(ctx)
}

// watch starts the informers and waits until their caches are filled.
func (s *Scheduler) watch(ctx context.Context) error {
	name := s.cfg.SchedulerName
	ours := coreinformers.NewFilteredPodInformer(s.client, metav1.NamespaceAll, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.schedulerName=" + name + ",status.phase!=Succeeded,status.phase!=Failed"
	})
	foreign := coreinformers.NewFilteredPodInformer(s.client, metav1.NamespaceAll, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.schedulerName!=" + name + ",spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
	})
	nodes := coreinformers.NewFilteredNodeInformer(s.client, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		if sel := s.cfg.NodeSelector; sel != nil && !sel.Empty() {
			o.LabelSelector = sel.String()
		}
	})
	owners := batchinformers.NewFilteredJobInformer(s.client, metav1.NamespaceAll, 0, cache.Indexers{}, nil)
	informers := []cache.SharedIndexInformer{ours, foreign, nodes, owners}
	transforms := []cache.TransformFunc{stripPod, stripForeign, stripNode, stripJob}
	handlers := append([]cache.ResourceEventHandler{s.handler(s.onPod, s.onPodGone)}, s.worldHandlers()...)
	vi, vt, vh := s.volcanoInformers()
	informers, transforms, handlers = append(informers, vi...), append(transforms, vt...), append(handlers, vh...)
	di, dt, dh := s.draInformers()
	informers, transforms, handlers = append(informers, di...), append(transforms, dt...), append(handlers, dh...)
	vi, vt, vh = s.volumeInformers()
	informers, transforms, handlers = append(informers, vi...), append(transforms, vt...), append(handlers, vh...)
	for i, inf := range informers {
		if err := inf.SetTransform(transforms[i]); err != nil {
			return fmt.Errorf("kube: informer: %w", err)
		}
		if _, err := inf.AddEventHandler(handlers[i]); err != nil {
			return fmt.Errorf("kube: informer: %w", err)
		}
		go inf.RunWithContext(ctx)
	}
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		synced[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("kube: the informers' caches did not fill: %w", context.Cause(ctx))
	}
	s.log.Info("watching the cluster", "scheduler", name, "nodes", len(nodes.GetStore().ListKeys()),
		"pods", len(ours.GetStore().ListKeys()))
	return nil
}

// handler adapts set and gone functions to an informer's handler.
func (s *Scheduler) handler(set func(any), gone func(any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			gone(obj)
		},
	}
}

func (s *Scheduler) onPod(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	s.w.mu.Lock()
	kj, relevant := s.w.setPod(p, now)
	s.progress(kj, s.w.pods[p.UID], now)
	s.w.mu.Unlock()
	if relevant {
		s.kickRound()
	}
}

func (s *Scheduler) onPodGone(obj any) {
	if p, ok := obj.(*v1.Pod); ok {
		s.w.mu.Lock()
		s.w.failedWorker(p)
		s.w.deletePod(p.UID, time.Now())
		s.w.mu.Unlock()
		s.kickRound()
	}
}

// onWorld returns an informer callback for objects of type T: change
// runs on the world under its lock, and a round is asked for when it
// reports a change that matters to scheduling.
func onWorld[T any](s *Scheduler, change func(T) bool) func(any) {
	return func(obj any) {
		t, ok := obj.(T)
		if !ok {
			return
		}
		s.w.mu.Lock()
		changed := change(t)
		s.w.mu.Unlock()
		if changed {
			s.kickRound()
		}
	}
}

// worldHandlers returns the handlers of foreign pods, nodes and Jobs.
func (s *Scheduler) worldHandlers() []cache.ResourceEventHandler {
	w := s.w
	return []cache.ResourceEventHandler{
		s.handler(onWorld(s, w.setForeign), onWorld(s, func(p *v1.Pod) bool { return w.deleteForeign(p.UID) })),
		s.handler(onWorld(s, w.setNode), onWorld(s, func(n *v1.Node) bool { w.deleteNode(n.Name); return true })),
		s.handler(onWorld(s, func(j *batchv1.Job) bool { w.setOwner(j); return true }),
			onWorld(s, func(j *batchv1.Job) bool { delete(w.owners, j.UID); return false })),
	}
}

// kickRound asks for a round soon.
func (s *Scheduler) kickRound() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// lead schedules until ctx ends: a round whenever the world changed, and
// at least every Tick.
func (s *Scheduler) lead(ctx context.Context) {
	s.leading.Store(true)
	s.metrics.leader.Set(1)
	defer func() {
		s.leading.Store(false)
		s.metrics.leader.Set(0)
	}()
	ctx, cancel := context.WithCancel(ctx)
	wait := s.runWorkers(ctx)
	defer wait()
	defer cancel()
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	for {
		took := s.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-tick.C:
		}
		// Changes arriving while a round ran are taken by the next one;
		// waiting twice as long as the round took keeps gpusched to at
		// most a third of a core while pods stream in (the API server,
		// often on the same machines, needs the rest: kubebench), and
		// batches more changes into each round.
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(minRoundGap, 2*took)):
		}
	}
}

// minRoundGap is the least time between two rounds.
const minRoundGap = 5 * time.Millisecond

// round runs one scheduling round, hands its API calls to the workers,
// and returns how long the round took.
func (s *Scheduler) round(ctx context.Context) time.Duration {
	t0 := time.Now()
	s.w.mu.Lock()
	s.tickProfiles(t0)
	r := &round{s: s, w: s.w, now: t0, t: model.Time(t0.UnixMilli())}
	r.run()
	if r.cluster != nil {
		s.prevCluster = r.cluster
	}
	work := r.work
	s.w.mu.Unlock()
	took := time.Since(t0)
	s.metrics.round.Observe(took.Seconds())
	if len(work.binds)+len(work.deletes) > 0 {
		s.log.Debug("round", "took", took, "jobs", len(r.jobs), "binds", len(work.binds), "deletes", len(work.deletes),
			"status", len(work.status), "inflight", s.inflight.Load())
	}
	s.dispatch(ctx, work)
	return took
}

// elect runs leader election and schedules while this process leads.
func (s *Scheduler) elect(ctx context.Context) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: s.cfg.LeaseName, Namespace: s.cfg.LeaseNamespace},
		Client:     s.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: s.cfg.Identity},
	}
	led := make(chan struct{})
	var acquired atomic.Bool
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: s.cfg.SchedulerName, ReleaseOnCancel: true,
		LeaseDuration: s.cfg.LeaseDuration, RenewDeadline: s.cfg.RenewDeadline, RetryPeriod: s.cfg.RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				acquired.Store(true)
				defer close(led)
				s.log.Info("leading: this process schedules", "identity", s.cfg.Identity)
				s.lead(ctx)
			},
			OnStoppedLeading: func() { s.log.Info("not leading", "identity", s.cfg.Identity) },
			OnNewLeader: func(id string) {
				if id != s.cfg.Identity {
					s.log.Info("standing by: another process leads", "leader", id)
				}
			},
		},
	})
	if err != nil {
		return configErrorf("leader election: %w", err)
	}
	s.log.Info("waiting for the leader lease", "lease", s.cfg.LeaseNamespace+"/"+s.cfg.LeaseName, "identity", s.cfg.Identity)
	le.Run(ctx)
	if acquired.Load() {
		<-led // lead returned: its workers are done
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("kube: lost the leader lease; exiting so that a fresh process stands by")
}

// event records a Kubernetes Event about pod p (the leader only).
func (s *Scheduler) event(p *podInfo, typ, reason, msg string) {
	if !s.leading.Load() {
		return
	}
	ref := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns, UID: p.uid}}
	s.recorder.Event(ref, typ, reason, msg)
}

// warnProduct logs, once per product, a node whose GPU product the
// catalog lacks (it becomes its own type) or whose memory label is
// unreadable (world.mu held).
func (s *Scheduler) warnProduct(n *nodeInfo) {
	if !n.known && !s.warned["product "+n.product] {
		s.warned["product "+n.product] = true
		s.log.Warn("GPU product not in the catalog: it is a GPU type of its own (1 TFLOPS, memory from nvidia.com/gpu.memory if set)",
			"node", n.name, "product", n.product, "type", n.typ)
	}
	if n.badMemory != "" && !s.warned["memory "+n.name] {
		s.warned["memory "+n.name] = true
		s.log.Warn("node's nvidia.com/gpu.memory label is not a number of MiB; ignored", "node", n.name, "value", n.badMemory)
	}
}

// labelSet adapts node labels to labels.Labels.
func labelSet(m map[string]string) labels.Set { return labels.Set(m) }
