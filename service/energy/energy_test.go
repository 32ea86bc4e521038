package energy

import (
	"context"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// fakeWorld is one node, n1, with 4 v100 GPUs and the jobs on it; it
// keeps what Live charges.
type fakeWorld struct {
	node    Node
	jobs    []JobOn
	charged map[string]float64 // joules by job
	model   map[string]float64 // modelled joules by job
	records []Job              // every job, for the report
}

func (w *fakeWorld) NodeNames() []string { return []string{w.node.Name} }
func (w *fakeWorld) Node(name string) (Node, bool) {
	return w.node, name == w.node.Name
}
func (w *fakeWorld) Cluster() (*model.Cluster, map[string]int) { return nil, nil }
func (w *fakeWorld) UsedGPUs(string) int {
	n := 0
	for _, j := range w.jobs {
		n += len(j.Devs)
	}
	return n
}
func (w *fakeWorld) JobsOn(string) []JobOn { return w.jobs }
func (w *fakeWorld) Active() (models, endpoints []string) {
	for _, j := range w.jobs {
		models, endpoints = append(models, j.Model), append(endpoints, "")
	}
	return models, endpoints
}
func (w *fakeWorld) Charge(job string, joules float64, modelled bool, _ time.Duration, _ time.Time) {
	w.charged[job] += joules
	if modelled {
		w.model[job] += joules
	}
}

func (w *fakeWorld) Jobs() []Job { return w.records }
func (w *fakeWorld) GPUType(typ string) model.GPUType {
	return model.GPUType{Name: typ, MemMiB: 16384, TFLOPS: 15.7}
}

func newLive(t *testing.T, now *time.Time) *Live {
	l, err := New(Config{}, Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: func() time.Time { return *now },
		Heartbeat: 2 * time.Second, Round: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "store.db"), store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := l.Load(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return l
}

func v100s(n int) []api.GPU {
	gpus := make([]api.GPU, n)
	for i := range gpus {
		gpus[i] = api.GPU{Index: i, Type: "v100"}
	}
	return gpus
}

// TestReadingsCharged: between two readings 10 s apart a job holding GPUs
// 0 and 1 gets their energy (trapezoid rule) and half of the node's draw
// beyond its GPUs'; the node's account holds all of it, measured.
func TestReadingsCharged(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLive(t, &now)
	w := &fakeWorld{node: Node{Name: "n1", Type: "v100", GPUs: v100s(4), Ready: true},
		jobs: []JobOn{{ID: "j1", Model: "ResNet-50", Devs: []int{0, 1}, LiveGPUs: 2}}, charged: map[string]float64{}, model: map[string]float64{}}
	read := func(at time.Time, node float64, gpu ...float64) *api.PowerReading {
		r := &api.PowerReading{At: at, Load: 0.5, NodeW: node}
		for i, g := range gpu {
			r.GPUs = append(r.GPUs, api.GPUPower{Index: i, Watts: g})
		}
		return r
	}
	l.Reading(w, "n1", read(now, 1000, 200, 200, 50, 50))
	now = now.Add(10 * time.Second)
	l.Reading(w, "n1", read(now, 1200, 300, 300, 50, 50))
	// GPUs 0+1: (200+300)/2*10*2 = 5000 J; node beyond GPUs: (1000+1200)/2*10 - (5000+1000) = 5000 J, half = 2500 J.
	if got := w.charged["j1"]; math.Abs(got-7500) > 1e-9 || w.model["j1"] != 0 {
		t.Errorf("j1 charged %v J (%v modelled), want 7500 measured", got, w.model["j1"])
	}
	rep := l.Report(w, "fifo", "pack", nil)
	if len(rep.Nodes) != 1 || math.Abs(rep.Nodes[0].KWh*JoulesPerKWh-11000) > 1e-6 || !rep.Nodes[0].Measured {
		t.Errorf("node accounts %+v, want n1 with 11000 J measured", rep.Nodes)
	}
	if rows, ok := l.Samples("n1"); !ok || len(rows) != 1 || rows[0].Load != 0.5 {
		t.Errorf("samples %+v, %v; want one row at load 0.5", rows, ok)
	}
	l.Reading(w, "n1", read(now.Add(-time.Second), 1, 1)) // older than the previous: ignored
	if got := w.charged["j1"]; math.Abs(got-7500) > 1e-9 {
		t.Errorf("an old reading was charged: %v J", got)
	}
}

// TestModelledWithoutReadings: a node whose reports carry no reading is
// accounted from its class's power model from its first second; its jobs
// get their GPUs' share, marked modelled.
func TestModelledWithoutReadings(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLive(t, &now)
	w := &fakeWorld{node: Node{Name: "n1", Type: "v100", GPUs: v100s(4), Ready: true, Unmetered: true},
		jobs: []JobOn{{ID: "j1", Devs: []int{0}, LiveGPUs: 1}}, charged: map[string]float64{}, model: map[string]float64{}}
	l.AccountModelled(w, now)
	now = now.Add(time.Minute)
	l.AccountModelled(w, now)
	if w.charged["j1"] <= 0 || w.charged["j1"] != w.model["j1"] {
		t.Errorf("j1 charged %v J, %v modelled; want a positive, modelled share", w.charged["j1"], w.model["j1"])
	}
	rep := l.Report(w, "fifo", "pack", nil)
	if len(rep.Nodes) != 1 || rep.Nodes[0].Measured || rep.ModelledKWh <= 0 || rep.ModelledKWh != rep.TotalKWh {
		t.Errorf("report %+v: want n1's energy all modelled", rep.Nodes)
	}
}
