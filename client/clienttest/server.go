package clienttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/api"
)

// Server is a fake scheduler service backed by memory. Jobs never start on
// their own: the test calls Start, Log and Finish.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	jobs     []*entry
	nodes    []api.Node
	requests []string
	// changed is closed (and replaced) whenever a job or its log changes,
	// waking the log streams.
	changed chan struct{}
}

type entry struct {
	job  api.Job
	spec api.JobSpec
	logs []byte
}

// New starts a fake server; it is closed when the test ends.
func New(tb testing.TB) *Server {
	s := &Server{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", s.submit)
	mux.HandleFunc("GET /v1/jobs", s.list)
	mux.HandleFunc("GET /v1/jobs/{id}", s.get)
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", s.cancel)
	mux.HandleFunc("GET /v1/jobs/{id}/logs", s.logs)
	mux.HandleFunc("GET /v1/nodes", s.listNodes)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	s.srv = httptest.NewServer(s.record(mux))
	tb.Cleanup(s.Close)
	return s
}

// URL returns the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server; open log streams end.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns every request so far as "METHOD /path?query".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Spec returns the spec job id was submitted with.
func (s *Server) Spec(id string) (api.JobSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.find(id); e != nil {
		return e.spec, true
	}
	return api.JobSpec{}, false
}

// AddNode adds (or replaces, by name) a node that GET /v1/nodes lists.
func (s *Server) AddNode(n api.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.nodes {
		if s.nodes[i].Name == n.Name {
			s.nodes[i] = n
			return
		}
	}
	s.nodes = append(s.nodes, n)
}

// Start moves a job to running on alloc ("node/index" entries).
func (s *Server) Start(id string, alloc ...string) {
	s.update(id, func(j *api.Job, now time.Time) {
		j.State, j.Alloc, j.StartedAt = api.Running, alloc, &now
		j.Attempt++
		j.Events = append(j.Events, api.JobEvent{Time: now, Event: "start", Message: fmt.Sprint(alloc)})
	})
}

// Finish ends a job with exitCode: succeeded when 0, else failed. Log
// streams of the job end.
func (s *Server) Finish(id string, exitCode int) {
	s.update(id, func(j *api.Job, now time.Time) {
		j.State = api.Succeeded
		if exitCode != 0 {
			j.State, j.Reason = api.Failed, fmt.Sprintf("exit code %d", exitCode)
		}
		j.ExitCode, j.FinishedAt, j.Alloc = &exitCode, &now, []string{}
		j.Events = append(j.Events, api.JobEvent{Time: now, Event: string(j.State)})
	})
}

// Log appends output to a job's log.
func (s *Server) Log(id, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.find(id); e != nil {
		e.logs = append(e.logs, text...)
		s.wake()
	}
}

func (s *Server) update(id string, f func(*api.Job, time.Time)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.find(id); e != nil {
		f(&e.job, time.Now().UTC().Truncate(time.Second))
		s.wake()
	}
}

// wake tells the log streams that something changed; s.mu is held.
func (s *Server) wake() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// find returns the job with id, or nil; s.mu is held.
func (s *Server) find(id string) *entry {
	for _, e := range s.jobs {
		if e.job.ID == id {
			return e
		}
	}
	return nil
}

func (s *Server) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// writeJSON writes v as the answer with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// writeError writes an api.Error answer.
func writeError(w http.ResponseWriter, code int, field, format string, a ...any) {
	writeJSON(w, code, api.Error{Error: fmt.Sprintf(format, a...), Field: field})
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, api.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, http.StatusRequestEntityTooLarge, "", "request body larger than %d bytes", api.MaxBodyBytes)
			return
		}
		writeError(w, http.StatusBadRequest, "", "read body: %v", err)
		return
	}
	spec, err := api.DecodeSpec(data)
	if err != nil {
		var fe *api.FieldError
		errors.As(err, &fe)
		writeError(w, http.StatusBadRequest, fe.Field, "%s", fe.Error())
		return
	}
	now := time.Now().UTC().Truncate(time.Second)
	s.mu.Lock()
	j := api.Job{
		ID: fmt.Sprintf("j%d", len(s.jobs)+1), Name: spec.Name, User: spec.User, State: api.Queued,
		GPUsRequested: spec.GPUs, MinGPUs: spec.Min(), MaxGPUs: spec.Max(), GPUType: spec.GPUType,
		Model: spec.Model, Priority: spec.Priority, Command: spec.Command, Env: spec.Env,
		Workdir: spec.Workdir, GracePeriodS: spec.Grace(), Alloc: []string{}, SubmittedAt: now,
		Events: []api.JobEvent{{Time: now, Event: "submit"}},
	}
	s.jobs = append(s.jobs, &entry{job: j, spec: spec})
	s.mu.Unlock()
	j.Events = nil
	writeJSON(w, http.StatusCreated, j)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	state := api.State(r.URL.Query().Get("state"))
	if state != "" && !slices.Contains(api.States(), state) {
		writeError(w, http.StatusBadRequest, "state", "state: %q is not a job state", state)
		return
	}
	s.mu.Lock()
	l := api.JobList{Jobs: []api.Job{}}
	for _, e := range s.jobs {
		if state == "" || e.job.State == state {
			j := e.job
			j.Events = nil
			l.Jobs = append(l.Jobs, j)
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, l)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	e := s.find(id)
	var j api.Job
	if e != nil {
		j = e.job
	}
	s.mu.Unlock()
	if e == nil {
		writeError(w, http.StatusNotFound, "", "job %s not found", id)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.find(id)
	switch {
	case e == nil:
		writeError(w, http.StatusNotFound, "", "job %s not found", id)
	case e.job.State.Final():
		writeError(w, http.StatusConflict, "", "job %s has already ended (%s)", id, e.job.State)
	default:
		now := time.Now().UTC().Truncate(time.Second)
		e.job.State, e.job.Reason, e.job.FinishedAt, e.job.Alloc = api.Cancelled, "cancelled by user", &now, []string{}
		e.job.Events = append(e.job.Events, api.JobEvent{Time: now, Event: "cancel"})
		s.wake()
		j := e.job
		j.Events = nil
		writeJSON(w, http.StatusOK, j)
	}
}

func (s *Server) listNodes(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	l := api.NodeList{Nodes: append([]api.Node{}, s.nodes...)}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, l)
}

// logs writes a job's log; with ?follow=true it keeps writing new output
// until the job is final or the client goes away.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	follow := r.URL.Query().Get("follow") == "true"
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	for off, first := 0, true; ; first = false {
		s.mu.Lock()
		e := s.find(id)
		if e == nil {
			s.mu.Unlock()
			writeError(w, http.StatusNotFound, "", "job %s not found", id)
			return
		}
		chunk, final, changed := e.logs[off:], e.job.State.Final(), s.changed
		off = len(e.logs)
		s.mu.Unlock()
		w.Write(chunk)
		if first || len(chunk) > 0 {
			http.NewResponseController(w).Flush()
		}
		if !follow || final {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}
