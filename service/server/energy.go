package server

import "net/http"

// Seed 002 on live machines (docs/ENERGY.md, "Live"): the thresholds in
// use and their recalibration, and the energy report with its replay.

// handleCalibration answers GET /v1/calibration: the thresholds in use
// for every node class and algorithm type.
func (s *Server) handleCalibration(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.sched.Energy().Calibration())
}

// handleRecalibrate answers POST /v1/calibration: every class and type
// with enough samples is fitted now (gpusched calibrate --from-server).
// The request has no body.
func (s *Server) handleRecalibrate(w http.ResponseWriter, r *http.Request) {
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	if len(data) > 0 && string(data) != "{}" {
		writeError(w, http.StatusBadRequest, "", "POST /v1/calibration takes no body")
		return
	}
	writeJSON(w, http.StatusOK, s.sched.Energy().Recalibrate())
}

// handleEnergy answers GET /v1/energy: the energy report.
func (s *Server) handleEnergy(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.sched.Energy().Report())
}

// handleEnergyReplay answers GET /v1/energy/replay: the pack replay's
// inputs; 409 when nothing has run.
func (s *Server) handleEnergyReplay(w http.ResponseWriter, _ *http.Request) {
	rep, err := s.sched.Energy().Replay()
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
