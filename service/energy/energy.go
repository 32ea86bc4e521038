package energy

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
	"github.com/gpusched/gpusched/service/store"
)

// Deps are what a Live takes from its shell besides its Config.
type Deps struct {
	// Log receives what the accounting logs.
	Log *slog.Logger
	// Clock returns the current time.
	Clock func() time.Time
	// SampleEvery is the shortest time between two stored power samples
	// of a node at the same load (0: DefaultPowerSampleEvery).
	SampleEvery time.Duration
	// Heartbeat is the agents' heartbeat interval (a new device's
	// measuring grace is three of them); Round the period of the shell's
	// ticks.
	Heartbeat, Round time.Duration
}

// Node is a node as the energy accounting sees it.
type Node struct {
	Name, Addr string
	// Type is its GPU type, GPUs its GPUs sorted by index.
	Type string
	GPUs []api.GPU
	// Ready: it is registered and heard from. Unmetered: its latest status
	// report carried no power reading. Working: it has work (replicas).
	Ready, Unmetered, Working bool
}

// NodeOf returns node n of the node table as the energy accounting sees
// it.
func NodeOf(n *nodes.Node) Node {
	return Node{Name: n.Name, Addr: n.MasterAddr(), Type: n.Type, GPUs: n.GPUs, Ready: n.Ready,
		Unmetered: n.Unmetered, Working: len(n.Work) > 0}
}

// pos returns the position of device index dev among n's GPUs, or -1.
func (n *Node) pos(dev int) int {
	for i, g := range n.GPUs {
		if g.Index == dev {
			return i
		}
	}
	return -1
}

// JobOn is a running job's share of one node.
type JobOn struct {
	ID, Model string
	// Devs are the device indices its live replicas hold on the node,
	// LiveGPUs all the GPUs its live replicas hold.
	Devs     []int
	LiveGPUs int
	// Rate is its latest measured steps/s (0: none known).
	Rate float64
}

// World is the shell's state as the energy accounting reads it, and the
// jobs' accounts it charges. Its methods are called with the shell's lock
// held (the lock that serializes every method of Live).
type World interface {
	// NodeNames returns the names of the known nodes, sorted; Node one of
	// them.
	NodeNames() []string
	Node(name string) (Node, bool)
	// Cluster returns the scheduling model's cluster of the ready nodes
	// (nil: none) and the index of each node name in it.
	Cluster() (*model.Cluster, map[string]int)
	// UsedGPUs returns the GPUs of node name that jobs hold.
	UsedGPUs(name string) int
	// JobsOn returns the running jobs with live replicas on node name.
	JobsOn(name string) []JobOn
	// Active returns the model and the data endpoint of every active job.
	Active() (models, endpoints []string)
	// Charge adds energy a job drew on a node to its account: joules,
	// measured over the d before at, or modelled.
	Charge(job string, joules float64, modelled bool, d time.Duration, at time.Time)
	// Jobs returns every job the shell keeps, in order of submission, for
	// the report, its replay and the metrics.
	Jobs() []Job
	// GPUType describes GPU type typ as the shell's model does (among the
	// ready nodes).
	GPUType(typ string) model.GPUType
}

// Live is the live seed 002 state and the energy accounting of one shell.
// It is not safe for concurrent use: the shell serializes its calls (the
// scheduler holds its mutex).
type Live struct {
	cfg   Config
	log   *slog.Logger
	store store.Store
	clock func() time.Time
	// sampleEvery, heartbeat and round are Deps'.
	sampleEvery, heartbeat, round time.Duration
	// power holds the nodes' power readings and samples (power.go).
	power map[string]*nodePower
	liveState
}

// New returns the live state of cfg (defaults filled in, its cluster file
// read); Load restores what the store keeps.
func New(cfg Config, d Deps) (*Live, error) {
	if err := cfg.Defaults(); err != nil {
		return nil, err
	}
	l := &Live{cfg: cfg, log: d.Log, clock: d.Clock, sampleEvery: d.SampleEvery, heartbeat: d.Heartbeat,
		round: d.Round, power: map[string]*nodePower{}}
	if l.sampleEvery <= 0 {
		l.sampleEvery = DefaultPowerSampleEvery
	}
	if err := l.readCluster(); err != nil {
		return nil, err
	}
	return l, nil
}

// Load restores the samples, fits, accounts and modelled energy st holds;
// l writes them to st from then on.
func (l *Live) Load(ctx context.Context, st store.Store) error {
	l.store = st
	for _, load := range []func(context.Context) error{l.loadPower, l.loadLearned, l.loadEnergy, l.loadModel} {
		if err := load(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Config returns the configuration in use (defaults filled in).
func (l *Live) Config() Config { return l.cfg }

// HookRuns returns how many times the suspend hook was started.
func (l *Live) HookRuns() int { return l.hooks }

func (l *Live) now() time.Time { return l.clock() }

// node returns node name of w, nil when w does not know it.
func node(w World, name string) *Node {
	n, ok := w.Node(name)
	if !ok {
		return nil
	}
	return &n
}

func ptr[T any](v T) *T { return &v }

// minTime returns the earlier of two times.
func minTime(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}

// writeCtx is the context of state writes: they must finish once started.
func writeCtx() context.Context { return context.Background() }
