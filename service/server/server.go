package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gpusched/gpusched/service/edl"
	"github.com/gpusched/gpusched/service/scheduler"
)

// Defaults and bounds of the work long-poll's wait.
const (
	// DefaultPollTimeout is Config.PollTimeout's default.
	DefaultPollTimeout = 25 * time.Second
	// MaxPollTimeout caps the wait query parameter of the work long-poll.
	MaxPollTimeout = 5 * time.Minute
)

// Config configures New: the job lifecycle (scheduler.Config, whose fields
// it promotes) and the HTTP transport.
type Config struct {
	scheduler.Config
	// PollTimeout is the longest a work long-poll waits by default
	// (DefaultPollTimeout when zero; at most MaxPollTimeout).
	PollTimeout time.Duration
}

// Server is the HTTP transport of the scheduler service: the REST API
// under /v1 and the agent protocol over a scheduler.Scheduler, which holds
// the jobs, the nodes and the scheduling loop. It keeps no state of its
// own.
type Server struct {
	sched       *scheduler.Scheduler
	own         bool // Close closes sched
	pollTimeout time.Duration
	log         *slog.Logger
	handler     http.Handler
	// leadership answers GET /v1/leader when the server is one of several
	// (HA); nil: a single server.
	leadership Leadership
	// edl serves the jobs' EDL primitives (edl.go).
	edl *edl.Service
}

// New builds a scheduler from cfg.Config (scheduler.New: it opens the
// store when cfg.Store is nil and loads every job and node) and the HTTP
// transport over it; Close closes both. An error caused by cfg wraps
// scheduler.ErrConfig.
func New(cfg Config) (*Server, error) {
	sch, err := scheduler.New(cfg.Config)
	if err != nil {
		return nil, err
	}
	s := Attach(sch, cfg.PollTimeout)
	s.own = true
	return s, nil
}

// Attach returns the HTTP transport over a scheduler that the caller runs
// and closes (Close leaves it open). pollTimeout is the work long-poll's
// default wait (DefaultPollTimeout when zero; at most MaxPollTimeout).
func Attach(sch *scheduler.Scheduler, pollTimeout time.Duration) *Server {
	if pollTimeout <= 0 {
		pollTimeout = DefaultPollTimeout
	}
	s := &Server{sched: sch, pollTimeout: min(pollTimeout, MaxPollTimeout), log: sch.Logger(),
		edl: edl.New(sch.Store(), sch, nil)}
	s.handler = s.newHandler()
	return s
}

// Handler returns the HTTP handler of the API (/v1/..., /healthz,
// /metrics, /openapi.yaml).
func (s *Server) Handler() http.Handler { return s.handler }

// Scheduler returns the job lifecycle the server serves.
func (s *Server) Scheduler() *scheduler.Scheduler { return s.sched }

// Run runs the scheduler's loop (scheduler.Scheduler.Run) until ctx ends
// or the server is closed.
func (s *Server) Run(ctx context.Context) error { return s.sched.Run(ctx) }

// Close closes the scheduler when New built it (scheduler.Scheduler.Close:
// it ends Run, answers long-polls and log followers and closes the store
// New opened). Close the HTTP server first, so that no request uses the
// store afterwards.
func (s *Server) Close() error {
	if !s.own {
		return nil
	}
	return s.sched.Close()
}
