package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
	"github.com/gpusched/gpusched/service/leader"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/scheduler"
	"github.com/gpusched/gpusched/service/store"
)

// Leadership answers "who leads?" for GET /v1/leader; a Server without one
// is a single server and leads itself.
type Leadership interface {
	Leader() api.Leader
}

// HA is the HTTP transport of one of several servers sharing an etcd store
// (docs/SERVER.md, "Several servers"). The servers elect a leader
// (package leader); the leader builds a scheduler for its term — loading
// every job and node from the store, behind the fence of its election key
// — and serves the whole API with it. A follower answers reads of jobs and
// nodes from the store, GET /v1/leader, /healthz, /metrics and
// /openapi.yaml itself, and everything else (writes, the agent protocol,
// logs) with 307 Temporary Redirect to the leader; while no leader is known
// it answers 503 with Retry-After: 1 (nothing was done, try again).
type HA struct {
	cfg     Config
	st      *store.Etcd
	el      *leader.Elector
	log     *slog.Logger
	reg     *prometheus.Registry
	handler http.Handler

	mu  sync.RWMutex
	cur *Server // the leader's transport during a term; nil otherwise

	// tokens authenticate requests (nil without authentication); with
	// them a follower serves no data and sends every API request to the
	// leader, which checks who may see what.
	tokens *auth.Tokens
	// AdminTokenWritten says that NewHA wrote the cluster's bootstrap
	// admin token (the first server of the cluster does).
	AdminTokenWritten bool
}

// NewHA returns the transport of one of several servers on st, electing
// with el. cfg.Store is ignored (each term uses st behind its fence);
// cfg.Registerer and Gatherer too (each term registers its metrics afresh).
func NewHA(cfg Config, st *store.Etcd, el *leader.Elector) (*HA, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &HA{cfg: cfg, st: st, el: el, log: log, reg: prometheus.NewRegistry()}
	if cfg.Auth != nil {
		h.tokens = auth.NewTokens(st, cfg.Clock)
		if cfg.Auth.AdminTokenFile != "" {
			wrote, err := h.tokens.BootstrapShared(context.Background(), cfg.Auth.AdminTokenFile)
			if err != nil {
				return nil, err
			}
			h.AdminTokenWritten = wrote
		}
	}
	h.handler = http.HandlerFunc(h.serve)
	return h, nil
}

// Handler returns the HTTP handler: the leader's API during a term, the
// follower's otherwise.
func (h *HA) Handler() http.Handler { return h.handler }

// Leader answers GET /v1/leader.
func (h *HA) Leader() api.Leader { return h.el.Leader() }

// Current returns the leader's Server during a term of this server, else
// nil.
func (h *HA) Current() *Server {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.cur
}

// Run campaigns and leads until ctx ends (leader.Elector.Run).
func (h *HA) Run(ctx context.Context) error { return h.el.Run(ctx, h.lead) }

// lead runs one term: a scheduler on the fenced store, served until the
// term ends.
func (h *HA) lead(ctx context.Context, t leader.Term) {
	cfg := h.cfg.Config
	cfg.Store = store.Fence(h.st, t.Key, t.Rev)
	cfg.Registerer, cfg.Gatherer = nil, nil
	cfg.Logger = h.log.With("term", t.Rev)
	var tokens *auth.Tokens
	if h.tokens != nil { // the term's token changes go behind its fence too
		tokens = auth.NewTokens(cfg.Store, cfg.Clock)
		cfg.JobToken = func(job string) (string, error) { return tokens.JobToken(context.Background(), job) }
	}
	start := time.Now()
	sch, err := scheduler.New(cfg)
	if err != nil {
		h.log.Error("cannot lead: loading the store failed; resigning", "err", err)
		return
	}
	srv := attach(sch, h.cfg)
	srv.leadership = h
	srv.tokens = tokens
	h.mu.Lock()
	h.cur = srv
	h.mu.Unlock()
	h.log.Info("leading", "term", t.Rev, "loaded_in", time.Since(start).Round(time.Millisecond))
	if err := srv.runWithRetention(ctx, sch.Run); err != nil {
		h.log.Error("scheduling loop", "err", err)
	}
	h.mu.Lock()
	h.cur = nil
	h.mu.Unlock()
	if err := sch.Close(); err != nil {
		h.log.Warn("closing the term's scheduler", "err", err)
	}
}

// serve dispatches a request to the leader's transport or the follower's.
func (h *HA) serve(w http.ResponseWriter, r *http.Request) {
	if cur := h.Current(); cur != nil {
		cur.Handler().ServeHTTP(w, r)
		return
	}
	h.follow(w, r)
}

// follow is a follower's answer. With authentication on it serves no data
// (the leader decides who may see which job): everything but the public
// routes is sent to the leader.
func (h *HA) follow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if h.tokens != nil {
		if class, _ := classify(r); class == classPublic {
			h.followPublic(w, r)
		} else {
			h.redirect(w, r)
		}
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/leader":
		writeJSON(w, http.StatusOK, h.Leader())
	case r.Method == http.MethodGet && r.URL.Path == "/healthz":
		handleHealth(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/openapi.yaml":
		handleOpenAPI(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/metrics":
		promhttp.HandlerFor(h.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/jobs":
		h.followJobs(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/nodes":
		nodes, err := ledger.ReadNodes(ctx, h.st)
		h.answer(w, api.NodeList{Nodes: nodes}, err)
	case r.Method == http.MethodGet && isJobPath(r.URL.Path):
		j, err := ledger.ReadJob(ctx, h.st, strings.TrimPrefix(r.URL.Path, "/v1/jobs/"))
		h.answer(w, j, err)
	default:
		h.redirect(w, r)
	}
}

// followPublic answers the public routes on a follower.
func (h *HA) followPublic(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/openapi.yaml" {
		handleOpenAPI(w, r)
		return
	}
	handleHealth(w, r)
}

// parseStates reads the state query parameter (a comma-separated list),
// answering 400 naming it for an unknown state.
func parseStates(w http.ResponseWriter, r *http.Request) ([]api.State, bool) {
	var want []api.State
	if q := r.URL.Query().Get("state"); q != "" {
		for _, st := range strings.Split(q, ",") {
			if !slices.Contains(api.States(), api.State(st)) {
				writeError(w, http.StatusBadRequest, "state", "unknown state %q (known: queued, running, preempted, succeeded, failed, cancelled)", st)
				return nil, false
			}
			want = append(want, api.State(st))
		}
	}
	return want, true
}

// isJobPath reports whether p is /v1/jobs/{id} (no further segment).
func isJobPath(p string) bool {
	id, ok := strings.CutPrefix(p, "/v1/jobs/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// followJobs is a follower's GET /v1/jobs.
func (h *HA) followJobs(w http.ResponseWriter, r *http.Request) {
	states, ok := parseStates(w, r)
	if !ok {
		return
	}
	jobs, err := ledger.ReadJobs(r.Context(), h.st, states...)
	h.answer(w, api.JobList{Jobs: jobs}, err)
}

// answer writes v, or the error of a read from the store.
func (h *HA) answer(w http.ResponseWriter, v any, err error) {
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		writeError(w, http.StatusNotFound, "", "%v", err)
	case err != nil:
		writeStoreFailure(w, h.log, err)
	default:
		writeJSON(w, http.StatusOK, v)
	}
}

// redirect sends the client to the leader (307 keeps the method and the
// body), or answers 503 with Retry-After while no leader is known.
func (h *HA) redirect(w http.ResponseWriter, r *http.Request) {
	l := h.el.Leader()
	if l.URL == "" || l.Self || l.URL == h.el.Self() { // none known, or this server's own ended term
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "",
			"no leader: the servers are electing one (or etcd has lost its quorum); nothing was done, retry")
		return
	}
	w.Header().Set("Location", strings.TrimRight(l.URL, "/")+r.URL.RequestURI())
	writeError(w, http.StatusTemporaryRedirect, "", "this server does not lead; the leader is %s", l.URL)
}

// handleLeader is GET /v1/leader.
func (s *Server) handleLeader(w http.ResponseWriter, r *http.Request) {
	if s.leadership != nil {
		writeJSON(w, http.StatusOK, s.leadership.Leader())
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, api.Leader{URL: scheme + "://" + r.Host, Self: true, Mode: "single"})
}

// writeStoreFailure answers a failed store call: 503 when the store is
// unavailable (etcd without quorum) or closed, else 500.
func writeStoreFailure(w http.ResponseWriter, log *slog.Logger, err error) {
	status := http.StatusInternalServerError
	msg := err.Error()
	switch {
	case errors.Is(err, store.ErrUnavailable):
		status = http.StatusServiceUnavailable
		msg = fmt.Sprintf("the store is unavailable, the request may not have been carried out: %v", err)
	case errors.Is(err, store.ErrFenced):
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
		msg = fmt.Sprintf("this server has just lost the leadership, nothing was changed; retry: %v", err)
	case errors.Is(err, store.ErrClosed): // nothing was done: try again (another server, or later)
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	log.Error("request failed", "err", err)
	writeError(w, status, "", "%s", msg)
}
