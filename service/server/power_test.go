package server

import (
	"bytes"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/service/api"
)

// reading builds a power reading of a 4-GPU node.
func reading(at time.Time, load, node float64, gpu ...float64) *api.PowerReading {
	r := &api.PowerReading{At: at, Load: load, NodeW: node}
	for i, w := range gpu {
		r.GPUs = append(r.GPUs, api.GPUPower{Index: i, Watts: w})
	}
	return r
}

// TestPowerReadings drives the status endpoint with power readings, as an
// agent sends them: the latest readings are gauges in /metrics, the energy
// between readings goes to the jobs on the node (checked against a hand
// computation), and the stored samples come out as the CSV that gpusched
// calibrate reads, also after a restart.
func TestPowerReadings(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	j1 := h.submit(`{"command":["x"],"gpus":1}`)
	j2 := h.submit(`{"command":["x"],"gpus":2}`)
	w := a.waitWork("both jobs", func(w api.Work) bool { return findReplica(w, j1.ID) != nil && findReplica(w, j2.ID) != nil })
	x1, x2 := *findReplica(w, j1.ID), *findReplica(w, j2.ID)
	reps := []api.ReplicaStatus{running(x1), running(x2)}
	report := func(r *api.PowerReading) {
		t.Helper()
		var got api.Work
		h.call("POST", "/v1/agents/n1/status", api.Status{Replicas: reps, Version: a.applied, Power: r}, http.StatusOK, &got)
	}
	t0 := time.Now().Add(-time.Minute)
	report(reading(t0, 0.75, 1000, 100, 200, 300, 50))
	report(reading(t0.Add(10*time.Second), 0.75, 1400, 300, 200, 100, 50))
	report(reading(t0.Add(5*time.Second), 0.75, 9999, 999, 999, 999, 999)) // older: ignored
	report(reading(t0.Add(11*time.Second), 2, 0))                          // implausible: ignored

	// Over the 10 s: GPU joules by device (trapezoid), and the node's energy
	// beyond its GPUs' split by GPU share (a quarter per GPU held).
	gpuJ := []float64{(100 + 300) / 2 * 10, (200 + 200) / 2 * 10, (300 + 100) / 2 * 10, (50 + 50) / 2 * 10}
	rest := (1000+1400)/2*10.0 - (2000 + 2000 + 2000 + 500)
	for _, c := range []struct {
		id   string
		gpus []int
	}{{j1.ID, x1.GPUs}, {j2.ID, x2.GPUs}} {
		want := rest * float64(len(c.gpus)) / 4
		for _, g := range c.gpus {
			want += gpuJ[g]
		}
		want /= 3.6e6
		if got := h.job(c.id).EnergyKWh; math.Abs(got-want) > 1e-12 {
			t.Errorf("job %s on GPUs %v: %v kWh, want %v", c.id, c.gpus, got, want)
		}
	}

	_, body := h.do("GET", "/metrics", nil)
	for _, want := range []string{
		`gpusched_gpu_power_watts{gpu="0",node="n1"} 300`,
		`gpusched_gpu_power_watts{gpu="3",node="n1"} 50`,
		`gpusched_node_power_watts{node="n1"} 1400`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	// A sample every powerSampleEvery: load 0.75 twice (averaged), then
	// load 0.25 with GPU readings only (power = their sum, throughput =
	// the busy GPUs: no job has a measured rate).
	reps = reps[:1]
	report(reading(t0.Add(20*time.Second), 0.25, 0, 60, 40, 40, 40))
	checkCSV := func(when string) {
		t.Helper()
		code, csv := h.do("GET", "/v1/nodes/n1/power-samples", nil)
		if code != http.StatusOK {
			t.Fatalf("%s: power-samples: %d %s", when, code, csv)
		}
		byType, err := calibrate.ParseCSV("power-samples", bytes.NewReader(csv))
		if err != nil {
			t.Fatalf("%s: %v\n%s", when, err, csv)
		}
		want := []calibrate.Sample{{Load: 0.25, PowerW: 180, Throughput: 1}, {Load: 0.75, PowerW: 1200, Throughput: 3}}
		if got := byType["n1"]; len(byType) != 1 || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: samples %v, want n1: %v\n%s", when, byType, want, csv)
		}
	}
	checkCSV("before the restart")
	if code, _ := h.do("GET", "/v1/nodes/nope/power-samples", nil); code != http.StatusNotFound {
		t.Errorf("power samples of an unknown node: %d, want 404", code)
	}

	h.s.mu.Lock()
	h.s.active[j1.ID].progressSaved = time.Now().Add(-progressPersist)
	h.s.mu.Unlock()
	h.s.flushProgress()
	want := h.job(j1.ID).EnergyKWh
	if rec, _ := h.stored(j1.ID); rec.EnergyKWh != want || want == 0 {
		t.Errorf("stored energy %v, want %v", rec.EnergyKWh, want)
	}
	h.restart()
	checkCSV("after a restart")
	if got := h.job(j1.ID).EnergyKWh; got != want {
		t.Errorf("energy after a restart: %v, want %v", got, want)
	}
}

// TestCalibrationRows averages the samples of each load and sorts by load.
func TestCalibrationRows(t *testing.T) {
	got := calibrationRows([]powerSample{
		{Load: 0.5, PowerW: 100, Throughput: 2}, {Load: 0.25, PowerW: 50, Throughput: 1},
		{Load: 0.5, PowerW: 200, Throughput: 4}, {Load: 0.5000000001, PowerW: 300, Throughput: 6},
	})
	want := []powerSample{{Load: 0.25, PowerW: 50, Throughput: 1}, {Load: 0.5, PowerW: 200, Throughput: 4}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("calibrationRows: %+v, want %+v", got, want)
	}
}
