package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/service/confine"
	"github.com/gpusched/gpusched/service/shim"
)

// Agent runs one node's replicas for a gpusched server. Make one with New
// and start it with Run.
type Agent struct {
	cfg  Config
	log  *slog.Logger
	api  *client
	reps *table
	t    timing
	kick chan struct{} // a replica started or exited: report now
	boot string        // the machine's boot ID (bootID)
	// epoch counts successful registrations; a replica's log length heard
	// in an earlier one must be confirmed again.
	epoch atomic.Int64
	ran   atomic.Bool // Run was called
	// detach is closed when Run returns: supervisors stop watching and the
	// replicas run on, unwatched, as after the agent process exits.
	detach chan struct{}
	// power is the latest power reading (power.go).
	power powerState
	// probes are the data endpoints to probe and the results (probe.go).
	probes *probeState
	// host is where replicas' cgroups are made; confine.None when
	// replicas run unconfined (set by Run, setupConfinement).
	host confine.Host
	// minors are the device minor numbers (/dev/nvidiaM) of the GPUs by
	// index, from NVML; nil: M is the index.
	minors map[int]int
}

// timing holds the agent's intervals; tests shorten them.
type timing struct {
	logEvery    time.Duration // log shipping period
	backoffMin  time.Duration // first delay after a failed contact
	backoffMax  time.Duration // longest delay between attempts
	pollTimeout time.Duration // how long one long poll may wait
	callTimeout time.Duration // other requests
	groupPoll   time.Duration // how often a dying process group is checked
	sweepEvery  time.Duration // how often stray zombies are reaped
	progEvery   time.Duration // how often progress files are read
	// shimStart is how long an adopted replica's shim may take to record
	// its start before the replica counts as lost.
	shimStart time.Duration
}

// defaultTiming is the production timing.
func defaultTiming() timing {
	return timing{
		logEvery:    250 * time.Millisecond,
		backoffMin:  200 * time.Millisecond,
		backoffMax:  10 * time.Second,
		pollTimeout: 5 * time.Minute,
		callTimeout: 30 * time.Second,
		groupPoll:   50 * time.Millisecond,
		sweepEvery:  2 * time.Second,
		progEvery:   200 * time.Millisecond,
		shimStart:   5 * time.Second,
	}
}

// New checks cfg, fills in its defaults and returns an agent; it creates
// the data directory but contacts no one.
func New(cfg Config) (*Agent, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := makeDataDir(cfg); err != nil {
		return nil, err
	}
	a := &Agent{
		cfg:    cfg,
		log:    cfg.Logger.With("node", cfg.Name),
		api:    &client{base: strings.Split(cfg.Server, ",")[0], name: cfg.Name, http: cfg.Client},
		reps:   newTable(),
		t:      defaultTiming(),
		kick:   make(chan struct{}, 1),
		boot:   shim.BootID(),
		detach: make(chan struct{}),
		probes: newProbeState(),
	}
	return a, nil
}

// makeDataDir creates the agent's data directory and its replicas/. Only
// the agent's account may list them: 0700, or 0711 under RunAsOwner, where
// the replicas' accounts must pass through them to reach their own
// directories (each 0711 too, holding files only the replica's account or
// root may read).
func makeDataDir(cfg Config) error {
	mode := os.FileMode(0o700)
	if cfg.RunAs == RunAsOwner {
		mode = 0o711
	}
	for _, d := range []string{cfg.DataDir, filepath.Join(cfg.DataDir, "replicas")} {
		if err := os.MkdirAll(d, mode); err != nil {
			return fmt.Errorf("agent data dir: %w", err)
		}
		if err := os.Chmod(d, mode); err != nil {
			return fmt.Errorf("agent data dir: %w", err)
		}
	}
	return nil
}

// Name returns the node's name (Config.Name or its default).
func (a *Agent) Name() string { return a.cfg.Name }

// DataDir returns the agent's data directory (Config.DataDir or its
// default).
func (a *Agent) DataDir() string { return a.cfg.DataDir }

// replicaDir is the directory of replica id.
func (a *Agent) replicaDir(id string) string {
	return filepath.Join(a.cfg.DataDir, "replicas", id)
}

// report asks the status loop to report now.
func (a *Agent) report() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}
