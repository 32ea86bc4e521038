package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/edl"
)

// The EDL endpoints (docs/EDL.md): a job's master lock, task queue and
// pserver slots, served by package edl over the scheduler's store.

// edlRoutes lists the EDL endpoints.
func (s *Server) edlRoutes() []route {
	return []route{
		{http.MethodGet, "/v1/jobs/{id}/master", s.edlAccess("read the master of", s.handleGetMaster)},
		{http.MethodPost, "/v1/jobs/{id}/master", s.edlAccess("take the master lock of", s.handleMaster)},
		{http.MethodPost, "/v1/jobs/{id}/tasks", s.edlAccess("register the tasks of", s.handleRegisterTasks)},
		{http.MethodGet, "/v1/jobs/{id}/tasks", s.edlAccess("read the task queue of", s.handleTasks)},
		{http.MethodPost, "/v1/jobs/{id}/tasks/lease", s.edlAccess("lease a task of", s.handleLease)},
		{http.MethodPost, "/v1/jobs/{id}/tasks/{index}/done", s.edlAccess("report a task of", s.handleTaskDone)},
		{http.MethodPost, "/v1/jobs/{id}/tasks/{index}/failed", s.edlAccess("report a task of", s.handleTaskFailed)},
		{http.MethodGet, "/v1/jobs/{id}/pservers", s.edlAccess("read the pservers of", s.handlePServers)},
		{http.MethodPost, "/v1/jobs/{id}/pservers/claim", s.edlAccess("claim a pserver slot of", s.handleClaimPServer)},
		{http.MethodPost, "/v1/jobs/{id}/pservers/{index}/renew", s.edlAccess("renew a pserver slot of", s.handleRenewPServer)},
	}
}

// edlAccess runs h when the caller may use the job's EDL state (its owner,
// an admin, or the job's own token while it runs; scheduler.CheckEDL):
// 404 for an unknown job, 403 otherwise.
func (s *Server) edlAccess(what string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.access.CheckEDL(caller(r), r.PathValue("id"), what); err != nil {
			s.writeErr(w, err)
			return
		}
		h(w, r)
	}
}

// edlContext returns r's context with which the EDL service writes r's
// audit entry in the transaction of the change it makes (status 200, what
// every EDL mutation but a registration answers), so that taking the
// master role or a pserver slot costs one durable write, not two. A call
// that writes nothing leaves the entry to the audit wrapper
// (serveAudited); the data plane (task leases and reports, renewals) is
// not recorded (audited).
func (s *Server) edlContext(r *http.Request) context.Context {
	rq, ok := r.Context().Value(identityKey{}).(*request)
	if !ok || s.audit == nil || !audited(r, classUser) {
		return r.Context()
	}
	return edl.WithPut(r.Context(), func() (string, []byte, bool) {
		op, err := s.audit.Op(api.AuditEntry{Who: rq.who.String(), Action: r.Method + " " + r.URL.Path,
			Target: r.PathValue("id"), Status: http.StatusOK})
		if err != nil {
			return "", nil, false // the wrapper tries again
		}
		key, value, isPut := op.Put()
		rq.recorded = isPut
		return key, value, isPut
	})
}

// writeEDL answers an EDL call: v, or the error's status (404, 409, the
// scheduler's kinds, else a failure).
func (s *Server) writeEDL(w http.ResponseWriter, status int, v any, err error) {
	switch {
	case err == nil:
		writeJSON(w, status, v)
	case errors.Is(err, edl.ErrNotFound):
		writeError(w, http.StatusNotFound, "", "%v", err)
	case errors.Is(err, edl.ErrConflict):
		writeError(w, http.StatusConflict, "", "%v", err)
	default:
		s.writeErr(w, err)
	}
}

func (s *Server) handleGetMaster(w http.ResponseWriter, r *http.Request) {
	m, err := s.edl.Master(r.Context(), r.PathValue("id"))
	s.writeEDL(w, http.StatusOK, m, err)
}

func (s *Server) handleMaster(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeBody(w, r, api.DecodeMasterRequest)
	if !ok {
		return
	}
	m, err := s.edl.AcquireMaster(s.edlContext(r), r.PathValue("id"), req)
	s.writeEDL(w, http.StatusOK, m, err)
}

func (s *Server) handleRegisterTasks(w http.ResponseWriter, r *http.Request) {
	spec, ok := decodeBody(w, r, api.DecodeTaskQueueSpec)
	if !ok {
		return
	}
	q, err := s.edl.RegisterTasks(r.Context(), r.PathValue("id"), spec)
	s.writeEDL(w, http.StatusCreated, q, err)
}

func (s *Server) handleTasks(w http.ResponseWriter, r *http.Request) {
	q, err := s.edl.Tasks(r.Context(), r.PathValue("id"))
	s.writeEDL(w, http.StatusOK, q, err)
}

func (s *Server) handleLease(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeBody(w, r, api.DecodeLeaseRequest)
	if !ok {
		return
	}
	l, err := s.edl.Lease(s.edlContext(r), r.PathValue("id"), req)
	s.writeEDL(w, http.StatusOK, l, err)
}

func (s *Server) handleTaskDone(w http.ResponseWriter, r *http.Request)   { s.report(w, r, true) }
func (s *Server) handleTaskFailed(w http.ResponseWriter, r *http.Request) { s.report(w, r, false) }

// report is POST .../tasks/{index}/done and .../failed.
func (s *Server) report(w http.ResponseWriter, r *http.Request, done bool) {
	index, ok := pathIndex(w, r)
	if !ok {
		return
	}
	rep, ok := decodeBody(w, r, api.DecodeTaskReport)
	if !ok {
		return
	}
	q, err := s.edl.Report(s.edlContext(r), r.PathValue("id"), index, rep.Lease, done)
	s.writeEDL(w, http.StatusOK, q, err)
}

func (s *Server) handlePServers(w http.ResponseWriter, r *http.Request) {
	l, err := s.edl.PServers(r.Context(), r.PathValue("id"))
	s.writeEDL(w, http.StatusOK, l, err)
}

func (s *Server) handleClaimPServer(w http.ResponseWriter, r *http.Request) {
	c, ok := decodeBody(w, r, func(b []byte) (api.PServerClaim, error) { return api.DecodePServerClaim(b, true) })
	if !ok {
		return
	}
	p, err := s.edl.ClaimPServer(s.edlContext(r), r.PathValue("id"), c)
	s.writeEDL(w, http.StatusOK, p, err)
}

func (s *Server) handleRenewPServer(w http.ResponseWriter, r *http.Request) {
	index, ok := pathIndex(w, r)
	if !ok {
		return
	}
	c, ok := decodeBody(w, r, func(b []byte) (api.PServerClaim, error) { return api.DecodePServerClaim(b, false) })
	if !ok {
		return
	}
	p, err := s.edl.RenewPServer(s.edlContext(r), r.PathValue("id"), index, c)
	s.writeEDL(w, http.StatusOK, p, err)
}

// pathIndex reads the {index} path segment, answering 400 naming it when
// it is not a non-negative integer.
func pathIndex(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.PathValue("index")
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		writeError(w, http.StatusBadRequest, "index", "index %q: want a non-negative integer", v)
		return 0, false
	}
	return i, true
}
