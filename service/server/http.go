package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/scheduler"
)

// route is one endpoint of the API.
type route struct {
	method, path string
	handle       http.HandlerFunc
}

// routes lists every endpoint the server serves (docs/SERVER.md and
// api/openapi.yaml describe them).
func (s *Server) routes() []route {
	return append([]route{
		{http.MethodPost, "/v1/jobs", s.handleSubmit},
		{http.MethodGet, "/v1/jobs", s.handleList},
		{http.MethodGet, "/v1/jobs/{id}", s.handleGet},
		{http.MethodPost, "/v1/jobs/{id}/cancel", s.handleCancel},
		{http.MethodPost, "/v1/jobs/{id}/progress", s.handleProgress},
		{http.MethodGet, "/v1/jobs/{id}/logs", s.handleLogs},
		{http.MethodGet, "/v1/jobs/{id}/hostfile", s.handleHostfile},
		{http.MethodGet, "/v1/nodes", s.handleNodes},
		{http.MethodGet, "/v1/nodes/{name}/power-samples", s.handlePowerSamples},
		{http.MethodGet, "/v1/profiles", s.handleProfiles},
		{http.MethodPost, "/v1/agents/register", s.handleRegister},
		{http.MethodGet, "/v1/agents/{name}/work", s.handleWork},
		{http.MethodPost, "/v1/agents/{name}/status", s.handleStatus},
		{http.MethodPost, "/v1/agents/{name}/logs", s.handleLogUpload},
		{http.MethodGet, "/v1/leader", s.handleLeader},
		// Authentication, queues and the audit log (issue 18).
		{http.MethodGet, "/v1/whoami", s.handleWhoami},
		{http.MethodPost, "/v1/tokens", s.handleTokenCreate},
		{http.MethodGet, "/v1/tokens", s.handleTokenList},
		{http.MethodDelete, "/v1/tokens/{id}", s.handleTokenRevoke},
		{http.MethodGet, "/v1/audit", s.handleAudit},
		{http.MethodGet, "/v1/queues", s.handleQueues},
		{http.MethodGet, "/healthz", handleHealth},
		{http.MethodGet, "/metrics", promhttp.HandlerFor(s.sched.Gatherer(), promhttp.HandlerOpts{}).ServeHTTP},
		{http.MethodGet, "/openapi.yaml", handleOpenAPI},
		// Forecasts and the dashboard's views (eta.go; the dashboard's
		// pages are uiRoutes, ui.go).
		{http.MethodGet, "/v1/jobs/{id}/eta", s.handleETA},
		{http.MethodGet, "/v1/eta", s.handleETAs},
		{http.MethodGet, "/v1/eta/accuracy", s.handleAccuracy},
		{http.MethodGet, "/v1/jobs/{id}/series", s.handleSeries},
		{http.MethodGet, "/v1/cluster", s.handleCluster},
		// Seed 002 on live machines (energy.go).
		{http.MethodGet, "/v1/calibration", s.handleCalibration},
		{http.MethodPost, "/v1/calibration", s.handleRecalibrate},
		{http.MethodGet, "/v1/energy", s.handleEnergy},
		{http.MethodGet, "/v1/energy/replay", s.handleEnergyReplay},
	}, s.edlRoutes()...)
}

// newHandler registers the routes on a ServeMux; a known path with another
// method answers 405 (with Allow), any other path 404, both as api.Error.
func (s *Server) newHandler() http.Handler {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	var paths []string
	for _, rt := range append(s.routes(), uiRoutes()...) {
		mux.HandleFunc(rt.method+" "+rt.path, rt.handle)
		if methods[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		methods[rt.path] = append(methods[rt.path], rt.method)
	}
	for _, p := range paths {
		allow := methods[p]
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, "", "method %s is not allowed on %s (allowed: %s)",
				r.Method, r.URL.Path, strings.Join(allow, ", "))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no such endpoint: %s %s", r.Method, r.URL.Path)
	})
	return mux
}

func handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(api.OpenAPI())
}

func handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// writeJSON writes v as the JSON body of a response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes an api.Error.
func writeError(w http.ResponseWriter, status int, field, format string, a ...any) {
	writeJSON(w, status, api.Error{Error: fmt.Sprintf(format, a...), Field: field})
}

// writeErr answers an error of the scheduler by its kind: 400 naming the
// field for an *api.FieldError, 404 for scheduler.ErrNotFound (with a hint
// to register again for scheduler.ErrNotRegistered), 409 for
// scheduler.ErrConflict, else writeFailure.
func (s *Server) writeErr(w http.ResponseWriter, err error) {
	switch {
	case isForbidden(err):
		writeForbidden(w, err)
	case errors.Is(err, scheduler.ErrNotRegistered):
		writeError(w, http.StatusNotFound, "", "%v (POST /v1/agents/register)", err)
	case errors.Is(err, scheduler.ErrNotFound):
		writeError(w, http.StatusNotFound, "", "%v", err)
	case errors.Is(err, scheduler.ErrConflict):
		writeError(w, http.StatusConflict, "", "%v", err)
	default:
		if _, ok := errors.AsType[*api.FieldError](err); ok {
			writeFieldError(w, err)
			return
		}
		s.writeFailure(w, err)
	}
}

// writeFailure answers an internal error: 503 when the store is closed
// (shutting down) or unavailable (etcd without quorum), or the write was
// fenced (this server no longer leads), 500 otherwise
// (writeStoreFailure).
func (s *Server) writeFailure(w http.ResponseWriter, err error) {
	writeStoreFailure(w, s.log, err)
}

// readBody reads a request body of at most api.MaxBodyBytes; a larger one
// is answered 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, api.MaxBodyBytes))
	if err == nil {
		return data, true
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		writeError(w, http.StatusRequestEntityTooLarge, "", "request body larger than %d bytes", api.MaxBodyBytes)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		writeError(w, http.StatusRequestTimeout, "", "request body not received in time: a client must send its body at once")
	} else {
		writeError(w, http.StatusBadRequest, "", "read request body: %v", err)
	}
	return nil, false
}

// readJSON decodes a request body strictly into v (api.Decode), answering
// 400 naming the field or 413 when it cannot.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	_, ok := decodeBody(w, r, func(data []byte) (struct{}, error) { return struct{}{}, api.Decode(data, v) })
	return ok
}

// decodeBody reads a request body and decodes it with decode, answering 413
// for a body over api.MaxBodyBytes and 400 naming the field for an invalid
// one.
func decodeBody[T any](w http.ResponseWriter, r *http.Request, decode func([]byte) (T, error)) (T, bool) {
	var zero T
	data, ok := readBody(w, r)
	if !ok {
		return zero, false
	}
	v, err := decode(data)
	if err != nil {
		writeFieldError(w, err)
		return zero, false
	}
	return v, true
}

// writeFieldError answers 400 for an api.FieldError (or another error).
func writeFieldError(w http.ResponseWriter, err error) {
	if fe, ok := errors.AsType[*api.FieldError](err); ok {
		writeError(w, http.StatusBadRequest, fe.Field, "%s", fe.Error())
		return
	}
	writeError(w, http.StatusBadRequest, "", "%v", err)
}
