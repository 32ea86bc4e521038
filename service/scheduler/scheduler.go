package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/service/energy"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/learn"
	"github.com/gpusched/gpusched/service/logs"
	"github.com/gpusched/gpusched/service/metrics"
	"github.com/gpusched/gpusched/service/queues"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// errStopped answers the submissions still waiting when the scheduler
// stops: nothing of them was written.
var errStopped = fmt.Errorf("%w: the scheduler has stopped (it shuts down, or its term as leader ended); nothing was written", store.ErrClosed)

// refTypeName is the reference GPU type of the embedded throughput matrix.
const refTypeName = "v100"

// Scheduler is the scheduler service's job lifecycle: the store, the job
// records and their transactions, the nodes and their work, the engine and
// the scheduling loop. Build it with New, run Run, hand it to a transport
// (package server serves it over HTTP), and Close it. Its methods are safe
// for concurrent use.
type Scheduler struct {
	cfg      settings.Config
	log      *slog.Logger
	store    store.Store
	ownStore bool
	engine   *engine.Engine
	matrix   *profile.Matrix
	models   map[string]int
	ref      model.GPUType
	metrics  *metrics.Set
	logs     *logs.Store
	started  time.Time

	nextSeq atomic.Int64
	// prunedSeq is the highest sequence number of a pruned job (prune.go);
	// guarded by mu.
	prunedSeq int
	commits   store.GroupCommit // submissions share transactions
	kick      chan struct{}
	// stopped is closed when Run ends or Close is called; long-polls and log
	// followers return (Done).
	stopped  chan struct{}
	stopOnce sync.Once
	running  atomic.Bool
	runDone  chan struct{}
	// logSignal fires when a log grows or a job changes state.
	logSignal logs.Signal

	mu sync.Mutex
	// tab is the jobs, the nodes and the scheduling model (package jobs).
	tab     jobs.Table
	dirty   bool // the node set changed: rebuild cluster and state
	version int64
	wake    model.Time
	// learner is online learning over the job table: the profiles learned
	// from progress reports, what forecasts learn, the jobs' series
	// (package learn, learn.go).
	learner  *learn.Table
	learning *learn.Room
	// forecasts serve the latest forecast of starts and finishes (rooms.go).
	forecasts *forecast.Room
	// quota is the engine's queue layer, nil without queues (rooms.go);
	// usage keeps its fair-share usage in the store.
	quota *quota.Policy
	usage *queues.Usage
	// energy is seed 002 on live machines and the energy accounting
	// (package energy, rooms.go).
	energy *energy.Live
	world  energy.Table // the job table as energy reads it (rooms.go)
	room   *energy.Room
}

// New builds a scheduler from cfg: it opens the store if cfg.Store is nil,
// builds the engine, registers its metrics on cfg.Registerer and loads
// every job and node the store holds. An error caused by cfg wraps
// ErrConfig.
func New(cfg settings.Config) (*Scheduler, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", settings.ErrConfig, err)
	}
	live, err := energy.New(cfg.Live, energy.Deps{Log: cfg.Logger, Clock: cfg.Clock,
		SampleEvery: cfg.PowerSampleEvery, Heartbeat: cfg.HeartbeatInterval, Round: cfg.Round})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", settings.ErrConfig, err)
	}
	eng, err := live.NewEngine(cfg.Names, *cfg.Options)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", settings.ErrConfig, err)
	}
	matrix, err := profile.ParseMatrix("embedded throughput matrix", assets.Throughputs())
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	ref, _ := config.LookupType(refTypeName)
	s := &Scheduler{cfg: cfg, log: cfg.Logger, store: cfg.Store, engine: eng, matrix: matrix, ref: ref,
		models: map[string]int{}, kick: make(chan struct{}, 1), stopped: make(chan struct{}),
		runDone: make(chan struct{}), commits: store.GroupCommit{Stopped: errStopped}, tab: jobs.NewTable(waitNoNodes),
		logs: logs.New(filepath.Join(cfg.DataDir, "logs")), started: cfg.Clock(), wake: -1,
		version: cfg.Clock().UnixMicro(), energy: live}
	s.world = s.newWorld()
	s.learner = &learn.Table{T: &s.tab, Clock: s.now, Seq: s.nextSeq.Load, Names: cfg.Names, None: waitNoNodes + ": there is nothing to forecast on",
		Options: func(c *model.Cluster) recipe.Options { return live.Options(*cfg.Options, c) }}
	s.forecasts = forecast.NewRoom(&s.mu, s.learner)
	s.room = energy.NewRoom(live, &s.mu, s.world, func() (string, string) {
		pol, pla, _ := eng.Names()
		return pol, pla
	}, cfg.Names.Policy)
	for i, m := range matrix.Models {
		s.models[m] = i
	}
	s.quota, _ = eng.Policy().(*quota.Policy)
	if s.store == nil {
		b, err := store.OpenBolt(settings.StorePath(cfg.DataDir), store.BoltOptions{Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.store, s.ownStore = b, true
	}
	s.usage = queues.NewUsage(s.quota, s.store, s.log)
	if s.metrics, err = newMetrics(s, cfg.Registerer); err != nil {
		s.closeStore()
		return nil, err
	}
	if err := s.loadLearning(context.Background()); err != nil {
		s.closeStore()
		return nil, err
	}
	if err := s.usage.Load(context.Background()); err != nil {
		s.closeStore()
		return nil, err
	}
	if err := s.energy.Load(context.Background(), s.store); err != nil {
		s.closeStore()
		return nil, err
	}
	if err := s.load(context.Background()); err != nil {
		s.closeStore()
		return nil, err
	}
	return s, nil
}

// Gatherer returns the registry that holds the scheduler's metrics (what a
// transport serves as /metrics).
func (s *Scheduler) Gatherer() prometheus.Gatherer { return s.cfg.Gatherer }

// Store returns the store the scheduler writes (behind the leader's fence
// when it is one of several servers).
func (s *Scheduler) Store() store.Store { return s.store }

// Logger returns the scheduler's logger.
func (s *Scheduler) Logger() *slog.Logger { return s.log }

// Done returns a channel closed when Run ends or Close is called: long
// polls and log followers then return.
func (s *Scheduler) Done() <-chan struct{} { return s.stopped }

// Run runs the scheduling loop until ctx ends or the scheduler is closed:
// a round after every event (coalesced), every Config.Round, and when the
// engine asks to be woken; node liveness is checked every Config.Round.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("server: Run called twice")
	}
	defer close(s.runDone)
	defer s.stop()
	tick := time.NewTicker(s.cfg.Round)
	defer tick.Stop()
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	s.schedule()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.stopped:
			return nil
		case <-s.kick:
			if !s.sleep(ctx, s.cfg.Coalesce) {
				return nil
			}
		case <-tick.C:
			if ctx.Err() != nil {
				return nil
			}
			s.checkNodes()
			s.flushProgress()
			s.checkLimits()
			s.tickForecast()
			s.saveUsage(false)
			s.room.Tick()
		case <-wake.C:
		}
		if ctx.Err() != nil { // select picks among ready cases at random: an ended ctx wins
			return nil
		}
		s.schedule()
		wake.Reset(s.untilWake())
	}
}

// sleep waits d unless ctx ends or the scheduler stops first.
func (s *Scheduler) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-s.stopped:
		return false
	case <-t.C:
		return true
	}
}

// untilWake returns the time to the engine's requested wake-up (an hour
// when it asked for none).
func (s *Scheduler) untilWake() time.Duration {
	s.mu.Lock()
	w := s.wake
	s.mu.Unlock()
	if w < 0 {
		return time.Hour
	}
	return max(time.Duration(w-s.modelNow())*time.Millisecond, time.Millisecond)
}

// notify asks the loop for a round soon.
func (s *Scheduler) notify() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// stop wakes every long-poll and log follower for good.
func (s *Scheduler) stop() { s.stopOnce.Do(func() { close(s.stopped) }) }

// Close stops the scheduler: it ends Run (waiting for it), wakes long-polls
// and log followers, writes the learned profiles and power samples, and
// closes the store if New opened it. Close the transports first, so that no
// request uses the store afterwards.
func (s *Scheduler) Close() error {
	s.stop()
	if s.running.Load() {
		<-s.runDone
	}
	s.mu.Lock()
	s.learner.Prof.Flush(s.now())
	s.energy.Flush()
	s.learner.TickETA(s.now(), true)
	s.mu.Unlock()
	s.saveUsage(true)
	return s.closeStore()
}

func (s *Scheduler) closeStore() error {
	if !s.ownStore {
		return nil
	}
	if err := s.store.Close(); err != nil {
		return fmt.Errorf("server: close store: %w", err)
	}
	return nil
}

// now returns the scheduler's clock.
func (s *Scheduler) now() time.Time { return s.cfg.Clock() }

// modelNow returns the clock as model time (Unix milliseconds).
func (s *Scheduler) modelNow() model.Time { return model.Time(s.cfg.Clock().UnixMilli()) }

// writeCtx is the context of state writes: they must finish once started,
// so that memory never disagrees with the store.
func writeCtx() context.Context { return context.Background() }
