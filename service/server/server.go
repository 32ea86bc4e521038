package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gpusched/gpusched/service/access"
	"github.com/gpusched/gpusched/service/auth"
	"github.com/gpusched/gpusched/service/edl"
	"github.com/gpusched/gpusched/service/scheduler"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// Defaults and bounds of the work long-poll's wait.
const (
	// DefaultPollTimeout is Config.PollTimeout's default.
	DefaultPollTimeout = 25 * time.Second
	// MaxPollTimeout caps the wait query parameter of the work long-poll.
	MaxPollTimeout = 5 * time.Minute
)

// DefaultBodyTimeout is Config.BodyTimeout's default.
const DefaultBodyTimeout = 30 * time.Second

// Config configures New: the job lifecycle (settings.Config, whose fields
// it promotes) and the HTTP transport.
type Config struct {
	settings.Config
	// PollTimeout is the longest a work long-poll waits by default
	// (DefaultPollTimeout when zero; at most MaxPollTimeout).
	PollTimeout time.Duration
	// Auth, when set, requires authentication (docs/SECURITY.md); nil
	// serves everyone as an admin (gpusched dev on loopback).
	Auth *AuthConfig
	// BodyTimeout bounds the reading of a request's body (default
	// DefaultBodyTimeout): a slower body is answered 408.
	BodyTimeout time.Duration
	// AuditRetention is how long audit entries are kept: older ones are
	// deleted when the scheduling loop starts and then periodically
	// (retention.go); 0 keeps every entry.
	AuditRetention time.Duration
	// JobRetention is how long ended jobs are kept (their records, logs
	// and EDL state), from when they ended; pruned likewise. 0 keeps every
	// job.
	JobRetention time.Duration
}

// AuthConfig configures authentication.
type AuthConfig struct {
	// AdminTokenFile is where the bootstrap admin token is written on the
	// first start (DATA/admin.token, mode 0600); empty writes none.
	AdminTokenFile string
}

// Server is the HTTP transport of the scheduler service: the REST API
// under /v1 and the agent protocol over a scheduler.Scheduler, which holds
// the jobs, the nodes and the scheduling loop. It keeps no state of its
// own.
type Server struct {
	sched *scheduler.Scheduler
	own   bool // Close closes sched
	// access makes the lifecycle's requests on behalf of the callers.
	access      *access.Guard
	pollTimeout time.Duration
	bodyTimeout time.Duration
	log         *slog.Logger
	handler     http.Handler
	// leadership answers GET /v1/leader when the server is one of several
	// (HA); nil: a single server.
	leadership Leadership
	// edl serves the jobs' EDL primitives (edl.go).
	edl *edl.Service
	// tokens authenticates requests (nil: no authentication); audit
	// records mutations.
	tokens *auth.Tokens
	audit  *auth.Audit
	// auditRetention and jobRetention are Config's.
	auditRetention, jobRetention time.Duration
	now                          func() time.Time
	// AdminTokenWritten says that New wrote a new bootstrap admin token.
	AdminTokenWritten bool
	// ownStore is the store New opened for the tokens (Close closes it).
	ownStore store.Store
}

// New builds a scheduler from cfg.Config (scheduler.New: it opens the
// store when cfg.Store is nil and loads every job and node) and the HTTP
// transport over it; Close closes both. An error caused by cfg wraps
// settings.ErrConfig.
func New(cfg Config) (*Server, error) {
	var tokens *auth.Tokens
	var own store.Store
	if cfg.Auth != nil {
		// The tokens live in the scheduler's store, and its replicas carry
		// their jobs' tokens: open the store first.
		if cfg.Store == nil {
			if cfg.DataDir == "" {
				return nil, fmt.Errorf("%w: server: a data directory is required", settings.ErrConfig)
			}
			b, err := store.OpenBolt(settings.StorePath(cfg.DataDir), store.BoltOptions{Logger: cfg.Logger})
			if err != nil {
				return nil, fmt.Errorf("server: %w", err)
			}
			cfg.Store, own = b, b
		}
		tokens = auth.NewTokens(cfg.Store, cfg.Clock)
		cfg.JobToken = func(job string) (string, error) { return tokens.JobToken(context.Background(), job) }
	}
	sch, err := scheduler.New(cfg.Config)
	if err != nil {
		closeOwn(own)
		return nil, err
	}
	s := attach(sch, cfg)
	s.own, s.ownStore, s.tokens = true, own, tokens
	if cfg.Auth != nil && cfg.Auth.AdminTokenFile != "" {
		if s.AdminTokenWritten, err = tokens.Bootstrap(context.Background(), cfg.Auth.AdminTokenFile); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

func closeOwn(st store.Store) {
	if st != nil {
		_ = st.Close()
	}
}

// WroteAdminToken reports whether New wrote a new bootstrap admin token.
func (s *Server) WroteAdminToken() bool { return s.AdminTokenWritten }

// Tokens returns the server's tokens (nil without authentication), for a
// shell that mints a credential for an agent of its own (gpusched dev).
func (s *Server) Tokens() *auth.Tokens { return s.tokens }

// Attach returns the HTTP transport over a scheduler that the caller runs
// and closes (Close leaves it open). pollTimeout is the work long-poll's
// default wait (DefaultPollTimeout when zero; at most MaxPollTimeout).
func Attach(sch *scheduler.Scheduler, pollTimeout time.Duration) *Server {
	return attach(sch, Config{PollTimeout: pollTimeout})
}

// attach builds the transport over sch with cfg's transport settings.
func attach(sch *scheduler.Scheduler, cfg Config) *Server {
	pollTimeout := cfg.PollTimeout
	if pollTimeout <= 0 {
		pollTimeout = DefaultPollTimeout
	}
	body := cfg.BodyTimeout
	if body <= 0 {
		body = DefaultBodyTimeout
	}
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	s := &Server{sched: sch, access: access.New(sch, sch.QueueSpec()), pollTimeout: min(pollTimeout, MaxPollTimeout), bodyTimeout: body, log: sch.Logger(), now: now,
		audit: auth.NewAudit(sch.Store(), now), auditRetention: cfg.AuditRetention, jobRetention: cfg.JobRetention, edl: edl.New(sch.Store(), sch, nil)}
	s.handler = s.secure(s.newHandler())
	return s
}

// Handler returns the HTTP handler of the API (/v1/..., /healthz,
// /metrics, /openapi.yaml).
func (s *Server) Handler() http.Handler { return s.handler }

// Scheduler returns the job lifecycle the server serves.
func (s *Server) Scheduler() *scheduler.Scheduler { return s.sched }

// Run runs the scheduler's loop (scheduler.Scheduler.Run), and the
// pruning of old audit entries and ended jobs when it has a retention for
// them, until ctx ends or the server is closed.
func (s *Server) Run(ctx context.Context) error { return s.runWithRetention(ctx, s.sched.Run) }

// Close closes the scheduler when New built it (scheduler.Scheduler.Close:
// it ends Run, answers long-polls and log followers and closes the store
// New opened). Close the HTTP server first, so that no request uses the
// store afterwards.
func (s *Server) Close() error {
	if !s.own {
		return nil
	}
	err := s.sched.Close()
	if s.ownStore != nil {
		if cerr := s.ownStore.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("server: close store: %w", cerr)
		}
	}
	return err
}
