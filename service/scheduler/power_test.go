package scheduler

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/energy"
)

// reading builds a power reading of a 4-GPU node.
func reading(at time.Time, load, node float64, gpu ...float64) *api.PowerReading {
	r := &api.PowerReading{At: at, Load: load, NodeW: node}
	for i, w := range gpu {
		r.GPUs = append(r.GPUs, api.GPUPower{Index: i, Watts: w})
	}
	return r
}

// TestPowerReadings sends status reports with power readings, as an agent
// does: the latest readings are gauges in the metrics, the energy between
// readings goes to the jobs on the node (checked against a hand
// computation), and the stored samples come out as the rows that gpusched
// calibrate reads, also after a restart. (package server's
// TestPowerEndpoints checks the CSV and /metrics over HTTP.)
func TestPowerReadings(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	j1 := h.submit(`{"command":["x"],"gpus":1}`)
	j2 := h.submit(`{"command":["x"],"gpus":2}`)
	w := a.waitWork("both jobs", func(w api.Work) bool {
		return agenttest.FindReplica(w, j1.ID) != nil && agenttest.FindReplica(w, j2.ID) != nil
	})
	x1, x2 := *agenttest.FindReplica(w, j1.ID), *agenttest.FindReplica(w, j2.ID)
	reps := []api.ReplicaStatus{agenttest.Running(x1), agenttest.Running(x2)}
	report := func(r *api.PowerReading) {
		t.Helper()
		a.statusPower(r, reps...)
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

	metrics := gather(t, h.s)
	for _, want := range []string{
		`gpusched_gpu_power_watts{gpu="0",node="n1"} 300`,
		`gpusched_gpu_power_watts{gpu="3",node="n1"} 50`,
		`gpusched_node_power_watts{node="n1"} 1400`,
	} {
		if !slices.Contains(metrics, want) {
			t.Errorf("metrics lack %q: %q", want, metrics)
		}
	}

	// A sample every powerSampleEvery: load 0.75 twice (averaged), then
	// load 0.25 with GPU readings only (power = their sum, throughput =
	// the busy GPUs: no job has a measured rate).
	reps = reps[:1]
	report(reading(t0.Add(20*time.Second), 0.25, 0, 60, 40, 40, 40))
	checkCSV := func(when string) {
		t.Helper()
		rows, err := h.s.Energy().PowerSamples("n1")
		if err != nil {
			t.Fatalf("%s: power samples: %v", when, err)
		}
		want := []energy.PowerSample{{Load: 0.25, PowerW: 180, Throughput: 1}, {Load: 0.75, PowerW: 1200, Throughput: 3}}
		if !slices.Equal(rows, want) {
			t.Errorf("%s: samples %+v, want %+v", when, rows, want)
		}
	}
	checkCSV("before the restart")
	_, err := h.s.Energy().PowerSamples("nope")
	wantKind(t, "power samples of an unknown node", err, ErrNotFound)

	h.s.mu.Lock()
	h.s.tab.Active[j1.ID].ProgressSaved = time.Now().Add(-progressPersist)
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

// gather returns the scheduler's gauges and counters as lines of the text
// format without help and type: `name{label="value",...} value`, labels
// sorted by name.
func gather(t *testing.T, s *Scheduler) []string {
	t.Helper()
	fams, err := s.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			name := f.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetGauge() != nil:
				out = append(out, fmt.Sprintf("%s %v", name, m.GetGauge().GetValue()))
			case m.GetCounter() != nil:
				out = append(out, fmt.Sprintf("%s %v", name, m.GetCounter().GetValue()))
			}
		}
	}
	return out
}
