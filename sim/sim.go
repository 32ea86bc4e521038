package sim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
)

// Workload turns job specs into work and gives job speeds; *profile.Table
// implements it.
type Workload interface {
	model.Profile
	// Work returns a job's profile index and total work.
	Work(s *model.JobSpec) (int, float64, error)
}

// Sink receives the event log; *eventlog.Writer implements it.
type Sink interface {
	Emit(eventlog.Event)
}

// Config is one simulation run.
type Config struct {
	Engine   *engine.Engine
	Cluster  *model.Cluster
	Workload Workload
	// Jobs is the trace, sorted by submit time.
	Jobs []model.JobSpec
	// RestartOverhead is the pause without progress on every restart and
	// resize.
	RestartOverhead model.Time
	// Round, when positive, adds a scheduling round every Round while jobs
	// are active.
	Round model.Time
	// RoundsOnly schedules only at those rounds, as Gavel does (rounds.go).
	RoundsOnly bool
	// Network, when set, is the cluster's network model: starting a job
	// with a dataset costs its staging time (network.go).
	Network *network.Network
	// Power is the cluster's power model (docs/ENERGY.md); Energy and
	// Contention need it.
	Power *power.Cluster
	// Spare, when positive, is how many idle power-managed nodes of each
	// kind of interchangeable nodes the power manager keeps on while jobs
	// keep coming (more where the workload's largest gang fills more), and
	// it keeps every idle node on while jobs wait (spare.go); 0: idle nodes
	// suspend themselves after their delay regardless, as before issue 28.
	// DefaultSpare is gpusched sim's.
	Spare int
	// Energy accounts the energy the cluster draws (Result.Energy,
	// JobRecord.EnergyKWh, Sample.PowerW); Power must then have figures
	// for every GPU type.
	Energy bool
	// Contention slows the jobs on a node near full load: a job's rate is
	// its profile speed times the contention factor of the most loaded
	// node it runs on (power.Workload.Speed), recomputed whenever the load
	// of one of its nodes changes. Power's nodes give the knee and
	// slowdown.
	Contention bool
	// PowerWorkload gives the power workload (utilisation, contention
	// sensitivity) of a job's algorithm type, its Spec.Model; nil gives
	// every job power.DefaultWorkload.
	PowerWorkload func(s *model.JobSpec) power.Workload
	// Events, when set, receives the event log.
	Events Sink
	// Progress, when set, is called now and then with the number of jobs
	// that have ended (finished or rejected).
	Progress func(ended int)
	// From, when set, is the state the run resumes from instead of an
	// empty cluster and a trace: Jobs is then ignored (resume.go).
	From *Start
	// Queues, when set, are the teams' queues the engine's queue layer
	// uses (package quota); the run then measures how fairly it served
	// them (Result.Fairness) and records each job's queue.
	Queues *quota.Config
}

// DefaultSpare is gpusched sim's Config.Spare: with two spare nodes of each
// kind, or as many as the workload's largest gang fills (spare.go), the
// average JCT of every run of issue 28's two development grids (seeds 1–3
// and 101–103) stays within 2 % of the run with every node on, and of 575
// of the 576 runs of its held-out seeds 201–203 (docs/EXPERIMENTS.md).
const DefaultSpare = 2

// Result is what a run produced.
type Result struct {
	// Records has one entry per job, in trace order.
	Records []metrics.JobRecord
	// Samples are the points where busy GPUs, queue length or the
	// cluster's draw changed.
	Samples []metrics.Sample
	// Rounds counts the engine rounds run.
	Rounds int
	// Energy is the run's energy when Config.Energy is set, else nil.
	Energy *Energy
	// Fairness is how evenly the queues were served when Config.Queues
	// is set, else nil.
	Fairness *Fairness
	// Resources is what jobs held of the resources besides GPUs, and the
	// stranded GPUs, over time, when the cluster models such resources
	// (model.Cluster.Vectored), else nil.
	Resources *metrics.Resources
}

// Run simulates cfg to the end: until every job has finished or been
// rejected, or nothing more can happen.
func Run(cfg Config) (*Result, error) {
	if cfg.Engine == nil || cfg.Cluster == nil || cfg.Workload == nil {
		return nil, errors.New("sim: engine, cluster and workload are required")
	}
	r, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	if err := r.loop(); err != nil {
		return nil, err
	}
	energy := r.meter.result(r.recs)
	return &Result{Records: r.recs, Samples: r.samples, Rounds: r.rounds, Energy: energy, Fairness: r.fair.result(),
		Resources: r.res}, nil
}

// run is the mutable state of one simulation.
type run struct {
	cfg     Config
	state   *model.State
	jobs    []*model.Job
	recs    []metrics.JobRecord
	version []int // per job; finish events of older versions are stale
	queue   eventQueue
	next    int // next job of the trace to submit
	ended   int
	busy    int
	samples []metrics.Sample
	rounds  int
	nextRnd model.Time
	meter   *meter // energy and contention (energy.go); nil without either
	paused  []int  // per job: the last round that paused it (pause.go)
	err     error  // the first error; the loop stops at it (fail)
	// fair tracks the queues' shares (fair.go); nil without queues.
	// reclaimed holds the jobs the current round's plan stops to reclaim
	// quota.
	fair      *fairness
	reclaimed map[string]bool
	// res measures the resources besides GPUs (resources.go); nil when
	// the cluster models none.
	res *metrics.Resources
	// grows holds, by job, the growths waiting for their nodes to be up
	// (grow.go); nil until the first.
	grows map[int]growth
}

// newRun returns the run of cfg before its first event: its jobs built from
// the trace (one slab, each spec copied in place and its work computed by
// the workload) or adopted from cfg.From, and its meters. It fails on a
// job out of order or outside the horizon, the workload's error for a
// job, or the power description's.
func newRun(cfg Config) (*run, error) {
	r := &run{cfg: cfg, state: model.NewState(cfg.Cluster, cfg.Workload), nextRnd: -1, fair: newFairness(cfg.Queues, len(cfg.Jobs))}
	if cfg.From != nil {
		err := r.adopt(cfg.From)
		r.res = newResources(cfg.Cluster, r.jobs)
		return r, err
	}
	r.jobs = make([]*model.Job, len(cfg.Jobs))
	slab := make([]model.Job, len(cfg.Jobs)) // one allocation for every job
	r.recs = make([]metrics.JobRecord, len(cfg.Jobs))
	r.version = make([]int, len(cfg.Jobs))
	for i := range cfg.Jobs {
		j := &slab[i]
		j.Spec = cfg.Jobs[i] // the workload reads a copy in place
		spec := &j.Spec
		if i > 0 && spec.Submit < cfg.Jobs[i-1].Submit {
			return nil, fmt.Errorf("sim: job %s submitted before its predecessor: trace not sorted", spec.ID)
		}
		if spec.Submit < 0 || spec.Submit > model.Horizon {
			return nil, fmt.Errorf("sim: job %s submitted at %ss, outside [0, %ss] (model.Horizon)",
				spec.ID, spec.Submit.SecondsString(), model.Horizon.SecondsString())
		}
		mi, work, err := cfg.Workload.Work(spec)
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		*j = *model.NewJob(*spec, i, mi, work)
		r.jobs[i] = j
		r.recs[i] = metrics.JobRecord{ID: spec.ID, Submit: spec.Submit, Start: -1, Finish: -1, Queue: spec.Queue}
		if r.fair != nil {
			r.recs[i].Queue = r.fair.queues[r.fair.queue(r.jobs[i])].Name
		}
	}
	r.res = newResources(cfg.Cluster, r.jobs)
	var err error
	if r.meter, err = newMeter(&r.cfg, r.state, r.jobs); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *run) loop() error {
	r.emitCluster()
	var end model.Time
	if len(r.jobs) > 0 {
		end = r.jobs[0].Spec.Submit
	}
	if r.cfg.From != nil {
		end = r.cfg.From.Now
		if err := r.resume(end); err != nil {
			return err
		}
	}
	for {
		t, ok := r.nextTime()
		if !ok {
			return r.close(end)
		}
		end = t
		r.fair.observe(t)
		changed := r.applyFinishes(t)
		r.applyJoins(t)
		changed = r.applySubmits(t) || changed
		tick := r.nextRnd >= 0 && r.nextRnd <= t
		if tick {
			r.nextRnd = -1
		}
		if r.trigger(changed, tick) {
			if err := r.round(t); err != nil {
				return err
			}
		}
		r.settle(t)
		if r.err != nil {
			return r.err
		}
		r.sample(t)
		r.sampleResources(t)
		if r.cfg.Progress != nil {
			r.cfg.Progress(r.ended)
		}
	}
}

// nextTime returns the time of the next event.
func (r *run) nextTime() (model.Time, bool) {
	t := model.Time(math.MaxInt64)
	if r.next < len(r.jobs) {
		t = r.jobs[r.next].Spec.Submit
	}
	for len(r.queue) > 0 && r.queue[0].version != r.version[r.queue[0].job] {
		heap.Pop(&r.queue) // stale finish
	}
	if len(r.queue) > 0 {
		t = min(t, r.queue[0].t)
	}
	if at, ok := r.nextJoin(); ok {
		t = min(t, at)
	}
	// A periodic round can only change something while jobs run or more
	// will arrive; otherwise waiting jobs would already have been placed.
	if r.nextRnd >= 0 && (len(r.state.Running()) > 0 || r.next < len(r.jobs)) {
		t = min(t, r.nextRnd)
	}
	// Nothing happens after the horizon: the run ends there.
	return t, t <= model.Horizon
}
