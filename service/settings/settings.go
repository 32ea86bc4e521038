package settings

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/energy"
	"github.com/gpusched/gpusched/service/metrics"
	"github.com/gpusched/gpusched/service/store"
)

// Defaults for Config's zero fields.
const (
	DefaultHeartbeatInterval = 2 * time.Second
	DefaultHeartbeatTimeout  = 10 * time.Second
	DefaultRound             = time.Second
	DefaultCoalesce          = 2 * time.Millisecond
	DefaultPortBase          = 29500
	DefaultPortRange         = 1000
)

// ErrConfig marks the errors of New caused by its configuration (rather
// than by the store): test with errors.Is.
var ErrConfig = errors.New("server configuration")

// Config configures a scheduler (package scheduler's New). Only DataDir is
// required; the zero value of
// every other field selects its default.
type Config struct {
	// Store holds jobs and nodes. Nil: New opens the bbolt store
	// DataDir/store.db and Close closes it.
	Store store.Store
	// DataDir holds the replicas' logs (DataDir/logs/<job>/<replica>.log)
	// and, when Store is nil, the store.
	DataDir string
	// Names are the engine's stage names (recipe.Names); empty names take
	// recipe.Defaults(). The policy srtf is refused: it needs job durations.
	Names recipe.Names
	// Options are the stage settings; nil means recipe.DefaultOptions().
	Options *recipe.Options
	// Queues are the teams' queues (docs/QUEUES.md): their quotas, weights
	// and limits (the engine's queue layer, unless Options.Queues is set)
	// and their users (who may submit to them and see their jobs). Nil: no
	// queues.
	Queues *config.QueuesSpec
	// HeartbeatInterval is how often agents must report.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is how long a node may stay silent before it is
	// marked down and its replicas are lost (an elastic job that keeps its
	// minimum continues without them, other jobs are queued again); also
	// how long a restarted server waits for the nodes of its previous run.
	HeartbeatTimeout time.Duration
	// Round is the period of the scheduling rounds that run even when
	// nothing happens (the engine's time-based decisions).
	Round time.Duration
	// Coalesce is the shortest time between two event-driven rounds: events
	// arriving meanwhile (submissions, exits) share one round.
	Coalesce time.Duration
	// PortBase and PortRange bound MASTER_PORT: a job attempt's port is
	// chosen deterministically in [PortBase, PortBase+PortRange).
	PortBase, PortRange int
	// Logger receives the scheduler's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the scheduler's Prometheus metrics and Gatherer
	// gathers them (Scheduler.Gatherer; the HTTP transport serves it as
	// /metrics). Both nil: a fresh registry. Registerer alone: it must also
	// be a prometheus.Gatherer (a *prometheus.Registry).
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Clock returns the current time; nil means time.Now. Scheduling uses
	// it as model.Time in Unix milliseconds.
	Clock func() time.Time
	// JobToken, when set, gives every replica the token of its job as
	// GPUSCHED_TOKEN (docs/SECURITY.md: a job reports its progress and reads
	// its host list with it).
	JobToken func(job string) (string, error)
	// PowerSampleEvery is the shortest time between two stored power
	// samples of a node at the same load (a sample at a new load is
	// always stored); 0 means DefaultPowerSampleEvery.
	PowerSampleEvery time.Duration
	// Live configures seed 002 on live machines: learned thresholds,
	// measured distances, idle nodes (docs/ENERGY.md, "Live").
	Live energy.Config
}

// WithDefaults returns c with every zero field set to its default and
// checks the values.
func (c Config) WithDefaults() (Config, error) {
	if c.DataDir == "" {
		return c, errors.New("server: a data directory is required")
	}
	def := recipe.Defaults()
	c.Names.Policy = or(c.Names.Policy, def.Policy)
	c.Names.Placer = or(c.Names.Placer, def.Placer)
	c.Names.Scaler = or(c.Names.Scaler, def.Scaler)
	if c.Names.Policy == "srtf" {
		return c, errors.New("policy srtf needs every job's remaining duration, which the service does not know; " +
			"use fifo, hlas, las or tiresias")
	}
	if c.Options == nil {
		o := recipe.DefaultOptions()
		c.Options = &o
	}
	if c.Queues != nil && c.Queues.Declared() && c.Options.Queues == nil {
		q, err := c.Queues.Quota("queues")
		if err != nil {
			return c, err
		}
		o := *c.Options
		o.Queues = &q
		c.Options = &o
	}
	c.PowerSampleEvery = orDur(c.PowerSampleEvery, energy.DefaultPowerSampleEvery)
	if err := c.Live.Defaults(); err != nil {
		return c, err
	}
	c.HeartbeatInterval = orDur(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.HeartbeatTimeout = orDur(c.HeartbeatTimeout, DefaultHeartbeatTimeout)
	c.Round = orDur(c.Round, DefaultRound)
	c.Coalesce = orDur(c.Coalesce, DefaultCoalesce)
	if c.HeartbeatTimeout <= c.HeartbeatInterval {
		return c, fmt.Errorf("heartbeat timeout %s must exceed the heartbeat interval %s", c.HeartbeatTimeout, c.HeartbeatInterval)
	}
	if c.PortBase == 0 {
		c.PortBase = DefaultPortBase
	}
	if c.PortRange == 0 {
		c.PortRange = DefaultPortRange
	}
	if c.PortBase < 1 || c.PortRange < 1 || c.PortBase+c.PortRange-1 > 65535 {
		return c, fmt.Errorf("MASTER_PORT range %d+%d: want ports within 1..65535", c.PortBase, c.PortRange)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	var err error
	c.Registerer, c.Gatherer, err = metrics.Registry(c.Registerer, c.Gatherer)
	return c, err
}

// StorePath returns the path of the bbolt store in a data directory.
func StorePath(dataDir string) string { return filepath.Join(dataDir, "store.db") }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Check reports whether New would refuse c for its configuration (an error
// wrapping ErrConfig), without opening a store: a server checks its flags
// before it contacts etcd.
func (c Config) Check() error {
	c, err := c.WithDefaults()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if _, err := recipe.New(c.Names, *c.Options); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}
