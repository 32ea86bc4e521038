package server

import (
	"encoding/csv"
	"net/http"
	"strconv"

	"github.com/gpusched/gpusched/service/api"
)

// handleNodes is GET /v1/nodes.
func (s *Server) handleNodes(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, api.NodeList{Nodes: s.sched.Nodes()})
}

// handlePowerSamples is GET /v1/nodes/{name}/power-samples: the node's
// stored samples as the CSV gpusched calibrate --samples reads (type =
// the node's name), one row per load.
func (s *Server) handlePowerSamples(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	rows, err := s.sched.Energy().PowerSamples(name)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"type", "load", "power_w", "throughput"})
	for _, x := range rows {
		_ = cw.Write([]string{name, strconv.FormatFloat(x.Load, 'f', -1, 64),
			strconv.FormatFloat(x.PowerW, 'f', 3, 64), strconv.FormatFloat(x.Throughput, 'f', 6, 64)})
	}
	cw.Flush()
}

// handleProfiles is GET /v1/profiles[?prerun=true]: the learned
// throughputs, and with prerun the pre-run matrix's points too.
func (s *Server) handleProfiles(w http.ResponseWriter, r *http.Request) {
	prerun, ok := parseBool(w, r, "prerun")
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, api.ProfileList{Profiles: s.sched.Learning().Profiles(prerun)})
}
