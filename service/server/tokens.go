package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
)

// handleWhoami is GET /v1/whoami: the caller's identity.
func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.access.IdentityView(caller(r)))
}

// noAuth answers a token request to a server without authentication.
func (s *Server) noAuth(w http.ResponseWriter) bool {
	if s.tokens != nil {
		return false
	}
	writeError(w, http.StatusNotFound, "", "this server runs without authentication: it has no tokens (docs/SECURITY.md)")
	return true
}

// handleTokenCreate is POST /v1/tokens (admins): 201 with the new token,
// shown this once.
func (s *Server) handleTokenCreate(w http.ResponseWriter, r *http.Request) {
	if s.noAuth(w) {
		return
	}
	req, ok := decodeBody(w, r, api.DecodeTokenRequest)
	if !ok {
		return
	}
	c, err := s.tokens.Create(r.Context(), req, caller(r).String())
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	setTarget(r, c.ID)
	writeJSON(w, http.StatusCreated, c)
}

// handleTokenList is GET /v1/tokens (admins), without secrets.
func (s *Server) handleTokenList(w http.ResponseWriter, r *http.Request) {
	if s.noAuth(w) {
		return
	}
	list, err := s.tokens.List(r.Context())
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.TokenList{Tokens: list})
}

// handleTokenRevoke is DELETE /v1/tokens/{id} (admins): the token stops
// working at once.
func (s *Server) handleTokenRevoke(w http.ResponseWriter, r *http.Request) {
	if s.noAuth(w) {
		return
	}
	info, err := s.tokens.Revoke(r.Context(), r.PathValue("id"))
	if errors.Is(err, auth.ErrNotFound) {
		writeError(w, http.StatusNotFound, "id", "%v", err)
		return
	}
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// handleAudit is GET /v1/audit[?limit=N] (admins): the latest entries,
// oldest first (default 100, at most 10000).
func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			writeError(w, http.StatusBadRequest, "limit", "limit=%q: want 1..10000", v)
			return
		}
		limit = n
	}
	es, err := s.audit.List(r.Context(), limit)
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.AuditList{Entries: es})
}

// handleQueues is GET /v1/queues: the teams' queues with their use.
func (s *Server) handleQueues(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.sched.Queues())
}
