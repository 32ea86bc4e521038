package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/scheduler"
	"github.com/gpusched/gpusched/service/store"
)

// handleSubmit is POST /v1/jobs: 201 and the job once it is durable.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	spec, ok := decodeBody(w, r, api.DecodeSpec)
	if !ok {
		return
	}
	// The write must finish once started, even if the client goes away:
	// a job in the store is a job the server runs.
	ctx := context.WithoutCancel(r.Context())
	if rq, ok := r.Context().Value(identityKey{}).(*request); ok {
		// The audit entry goes into the job's own transaction.
		ctx = scheduler.WithSubmitOp(ctx, func(id string) (store.Op, error) {
			rq.recorded = true
			return s.audit.Op(api.AuditEntry{Who: rq.who.String(), Action: r.Method + " " + r.URL.Path, Target: id,
				Status: http.StatusCreated})
		})
	}
	j, err := s.access.SubmitAs(ctx, caller(r), spec)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	setTarget(r, j.ID)
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, http.StatusCreated, j)
}

// handleList is GET /v1/jobs[?state=S[,S...]].
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	want, ok := parseStates(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, api.JobList{Jobs: s.access.JobsAs(caller(r), want...)})
}

// handleGet is GET /v1/jobs/{id}, with the job's history.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	v, err := s.access.JobAs(caller(r), r.PathValue("id"))
	s.writeJob(w, v, err)
}

// handleCancel is POST /v1/jobs/{id}/cancel: 200 with the job; a running
// job stays running (Reason says it is being cancelled) until its
// processes are gone, then it is cancelled.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	v, err := s.access.CancelAs(caller(r), r.PathValue("id"))
	s.writeJob(w, v, err)
}

// handleProgress is POST /v1/jobs/{id}/progress: 200 with the job once the
// report is recorded (a checkpoint durably).
func (s *Server) handleProgress(w http.ResponseWriter, r *http.Request) {
	p, ok := decodeBody(w, r, api.DecodeProgress)
	if !ok {
		return
	}
	v, err := s.access.ProgressAs(caller(r), r.PathValue("id"), p)
	s.writeJob(w, v, err)
}

// writeJob answers a request about a job: 200 with v, or the error's
// status (writeErr: 404 for an unknown job, 409 for one that has ended).
func (s *Server) writeJob(w http.ResponseWriter, v api.Job, err error) {
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleHostfile is GET /v1/jobs/{id}/hostfile: the current host list of a
// running job as text, one "host:slots" line per member replica in node-rank
// order (what a horovodrun --host-discovery-script prints); 404 for an
// unknown job, 409 for one that is not running.
func (s *Server) handleHostfile(w http.ResponseWriter, r *http.Request) {
	list, err := s.access.HostfileAs(caller(r), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(list))
}

// parseBool reads a boolean query parameter (empty: false), answering 400
// naming it when it is not one.
func parseBool(w http.ResponseWriter, r *http.Request, name string) (value, ok bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, true
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, name, "%s=%q: want true or false", name, v)
		return false, false
	}
	return b, true
}
