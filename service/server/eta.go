package server

import (
	"net/http"

	"github.com/gpusched/gpusched/service/api"
)

// handleETA is GET /v1/jobs/{id}/eta: the forecast of an active job; 404
// for an unknown job, 409 for one that has ended (docs/ETA.md).
func (s *Server) handleETA(w http.ResponseWriter, r *http.Request) {
	e, err := s.sched.Forecasts().ETA(r.PathValue("id"))
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// handleETAs is GET /v1/eta: the forecast of every active job, oldest
// first.
func (s *Server) handleETAs(w http.ResponseWriter, _ *http.Request) {
	list, err := s.sched.Forecasts().ETAs()
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.ETAList{ETAs: list})
}

// handleAccuracy is GET /v1/eta/accuracy: how good the start forecasts
// have been.
func (s *Server) handleAccuracy(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.sched.Learning().ETAAccuracy())
}

// handleSeries is GET /v1/jobs/{id}/series: a job's replicas, progress and
// power over time (the dashboard's job page); 404 for an unknown job.
func (s *Server) handleSeries(w http.ResponseWriter, r *http.Request) {
	v, err := s.sched.Learning().Series(r.PathValue("id"))
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleCluster is GET /v1/cluster: the dashboard's cluster view.
func (s *Server) handleCluster(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.sched.Cluster())
}
