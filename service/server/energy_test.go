package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// TestEnergyEndpoints: the calibration (GET, and POST without a body),
// the energy report and its replay (409 before any job ran, then the
// files), and a spec's data endpoint checked and kept.
func TestEnergyEndpoints(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	var cal api.Calibration
	h.call("GET", "/v1/calibration", nil, http.StatusOK, &cal)
	if len(cal.Classes) != 1 || cal.Classes[0].Class != "v100x4" || cal.Classes[0].Source != api.ThresholdsCatalog {
		t.Errorf("calibration %+v", cal)
	}
	h.call("POST", "/v1/calibration", nil, http.StatusOK, &cal)
	if !strings.Contains(cal.Classes[0].Error, "too few samples") {
		t.Errorf("recalibration without samples: %+v", cal)
	}
	if code, _ := h.do("POST", "/v1/calibration", `{"window":0.2}`); code != http.StatusBadRequest {
		t.Errorf("POST /v1/calibration with a body: %d, want 400", code)
	}
	var rep api.EnergyReport
	h.call("GET", "/v1/energy", nil, http.StatusOK, &rep)
	if rep.PackKWh != nil || rep.PackError == "" || rep.Placer != "pack" || len(rep.States) != 4 {
		t.Errorf("report before any job: %+v", rep)
	}
	if code, data := h.do("GET", "/v1/energy/replay", nil); code != http.StatusConflict || !strings.Contains(string(data), "no job has run") {
		t.Errorf("replay before any job: %d %s", code, data)
	}
	if code, data := h.do("POST", "/v1/jobs", `{"command":["x"],"gpus":1,"data_endpoint":"nas"}`); code != http.StatusBadRequest ||
		!strings.Contains(string(data), `"field":"data_endpoint"`) {
		t.Errorf("bad data endpoint: %d %s", code, data)
	}
	j := h.submit(`{"command":["x"],"gpus":1,"data_endpoint":"nas:2049"}`)
	if j.DataEndpoint != "nas:2049" {
		t.Errorf("job %+v", j)
	}
	r := *agenttest.FindReplica(a.waitWork("the job", agenttest.HasReplica(j.ID)), j.ID)
	if w := a.status(agenttest.Running(r)); len(w.Probes) != 1 || w.Probes[0] != "nas:2049" {
		t.Errorf("probes %v", w.Probes)
	}
	time.Sleep(20 * time.Millisecond) // a run the replay counts (it skips runs under 1 ms)
	a.status(agenttest.Exited(r, 0))
	h.waitState(j.ID, api.Succeeded)
	var files api.EnergyReplay
	h.call("GET", "/v1/energy/replay", nil, http.StatusOK, &files)
	if !strings.Contains(files.Trace, `"id":"j1"`) || !strings.Contains(files.Cluster, "name: n1") {
		t.Errorf("replay %+v", files)
	}
}
