package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/service/api"
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
	j, err := s.Submit(context.WithoutCancel(r.Context()), spec)
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, http.StatusCreated, j)
}

// Submit stores a new job durably, queues it and wakes the scheduling loop.
// spec must be valid (api.DecodeSpec validates).
func (s *Server) Submit(ctx context.Context, spec api.JobSpec) (api.Job, error) {
	seq := s.nextSeq.Add(1)
	id := "j" + strconv.FormatInt(seq, 10)
	rec := newRecord(id, spec, s.now())
	data, err := marshalRecord(&rec)
	if err != nil {
		return api.Job{}, err
	}
	if _, err := s.store.Txn(ctx, store.IfAbsent(jobKey(id)), store.OpPut(jobKey(id), data)); err != nil {
		return api.Job{}, fmt.Errorf("store job %s: %w", id, err)
	}
	j := &job{rec: rec, seq: int(seq)}
	s.mu.Lock()
	s.addJob(j)
	if s.state != nil {
		s.state.Submit(j.mj)
	}
	v := s.view(j, false)
	s.mu.Unlock()
	s.metrics.submissions.Inc()
	s.notify()
	return v, nil
}

// handleList is GET /v1/jobs[?state=S[,S...]].
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	want := map[api.State]bool{}
	if q := r.URL.Query().Get("state"); q != "" {
		for _, st := range strings.Split(q, ",") {
			if !slices.Contains(api.States(), api.State(st)) {
				writeError(w, http.StatusBadRequest, "state", "unknown state %q (known: queued, running, preempted, succeeded, failed, cancelled)", st)
				return
			}
			want[api.State(st)] = true
		}
	}
	s.mu.Lock()
	list := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		if len(want) == 0 || want[j.rec.State] {
			list = append(list, j)
		}
	}
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
	out := api.JobList{Jobs: make([]api.Job, len(list))}
	for i, j := range list {
		out.Jobs[i] = s.view(j, false)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// handleGet is GET /v1/jobs/{id}, with the job's history.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	j := s.jobs[id]
	var v api.Job
	if j != nil {
		v = s.view(j, true)
	}
	s.mu.Unlock()
	if j == nil {
		writeError(w, http.StatusNotFound, "", "no job %q", id)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// errFinal is a cancel of a job that has ended.
var errFinal = errors.New("job has already ended")

// errNoJob is a request about a job that does not exist.
var errNoJob = errors.New("no such job")

// handleCancel is POST /v1/jobs/{id}/cancel: 200 with the job; a running
// job stays running (Reason says it is being cancelled) until its
// processes are gone, then it is cancelled.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := s.Cancel(id)
	s.writeJobResult(w, id, v, err)
}

// writeJobResult answers a request about job id: 200 with v, 404 for an
// unknown job, 409 for one that has ended, 500 for anything else.
func (s *Server) writeJobResult(w http.ResponseWriter, id string, v api.Job, err error) {
	switch {
	case errors.Is(err, errNoJob):
		writeError(w, http.StatusNotFound, "", "no job %q", id)
	case errors.Is(err, errFinal):
		writeError(w, http.StatusConflict, "", "job %s is already %s", id, v.State)
	case err != nil:
		s.writeFailure(w, err)
	default:
		writeJSON(w, http.StatusOK, v)
	}
}

// Cancel cancels job id durably: a queued job at once, a running one by
// stopping its replicas.
func (s *Server) Cancel(id string) (api.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return api.Job{}, errNoJob
	}
	now := s.now()
	b := s.newBatch()
	switch rec := &j.rec; {
	case rec.State.Final():
		return s.view(j, false), errFinal
	case rec.State == api.Running && (rec.Stopping == stopCancel || rec.Stopping == stopFail):
		return s.view(j, true), nil
	case rec.State == api.Running:
		s.stopJob(b, j, stopCancel, "cancelled by the user: stopping its replicas", now)
	default:
		nr := b.edit(j)
		nr.State, nr.Reason, nr.FinishedAt = api.Cancelled, "cancelled by the user", ptr(now.UTC())
		nr.event(now, "cancelled", "cancelled by the user while %s", rec.State)
		b.then(func() { s.release(j, api.Cancelled, 0) })
	}
	if err := b.run("cancel " + id); err != nil {
		return api.Job{}, err
	}
	return s.view(j, true), nil
}
