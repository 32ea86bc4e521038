package placer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
)

// liveFixture is three idle nodes n0..n2 of 4 GPUs of one type, one class
// each, with the thresholds th, costs cost (nil: none) and, when links is
// set, one storage device "d" reached over links[i] from node i.
func liveFixture(t *testing.T, th []placer.LoadThresholds, cost []float64, links []network.Link) *energyFixture {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}
	var ns []model.Node
	for i := range th {
		ns = append(ns, model.Node{Name: fmt.Sprintf("n%d", i), Type: 0, GPUs: 4})
	}
	c, err := model.NewCluster(types, ns)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speeds{1, 1})
	table := &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: make([]int, len(th))}
	for i := range th {
		table.Class[i] = i
		table.Th = append(table.Th, []placer.LoadThresholds{th[i]})
		if cost != nil {
			table.Cost = append(table.Cost, []float64{cost[i]})
		}
	}
	var net *network.Network
	if links != nil {
		rows := make([][]network.Link, len(links))
		for i, l := range links {
			rows[i] = []network.Link{l}
		}
		storage := []network.Storage{{Name: "d", Interfaces: []network.Interface{{Name: "x", BandwidthGbps: 1, Quality: 1}}}}
		if net, err = network.NewDirect(storage, rows); err != nil {
			t.Fatal(err)
		}
	}
	e, err := placer.NewEnergy(c, table, net)
	if err != nil {
		t.Fatal(err)
	}
	p := engine.NewPool(c)
	p.Reset(s)
	return &energyFixture{s: s, pool: p, place: e}
}

// fill places one-GPU jobs (with upload address upload) one after another,
// taking their GPUs in the pool, until one is not placed; it returns the
// nodes in placement order and the last job's pause reason.
func (f *energyFixture) fill(t *testing.T, upload string) ([]string, string) {
	t.Helper()
	var order []string
	for k := range 20 {
		j := model.NewJob(model.JobSpec{ID: fmt.Sprintf("f%d", k), GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Upload: upload}, 100+k, -1, 1)
		pl := f.place.Place(f.s, f.pool, j, 1, engine.TypeSet(1))
		if pl.GPUs == nil {
			return order, pl.Pause
		}
		f.pool.Take(pl.GPUs)
		order = append(order, f.s.Cluster.Nodes[pl.GPUs[0].Node].Name)
	}
	return order, ""
}

// TestEnergyCostOrder: with equal latencies, the node with the lowest
// energy per unit of work at its stable level fills first within each
// load state; without costs, ties go to the node index. Thresholds: n0
// and n1 hold 2 GPUs in state 1 (⌊0.5·4⌋) and 3 in state 2, n2 1 and 3.
// The seed's claiming (a node at its limit still claims one GPU into the
// next state) gives, by cost n1 (lowest), n2, n0: state 1 n1 ×3 (its two,
// then one more into state 2), n2 ×2, n0 ×3; state 2 n1 ×1 (to 4: state
// 3), n2 ×2, n0 ×1; then every node with a free GPU is in state 3: paused.
func TestEnergyCostOrder(t *testing.T) {
	th := []placer.LoadThresholds{{Th1: 0.5, Th2: 0.75}, {Th1: 0.5, Th2: 0.75}, {Th1: 0.25, Th2: 0.75}}
	f := liveFixture(t, th, []float64{300, 200, 250}, nil)
	order, pause := f.fill(t, "")
	if got, want := strings.Join(order, " "), "n1 n1 n1 n2 n2 n0 n0 n0 n1 n2 n2 n0"; got != want {
		t.Errorf("with costs: order %q, want %q", got, want)
	}
	if pause != "" {
		t.Errorf("with costs: pause %q after filling every GPU", pause)
	}
	f = liveFixture(t, th, nil, nil)
	order, _ = f.fill(t, "")
	if got, want := strings.Join(order, " "), "n0 n0 n0 n1 n1 n1 n2 n2 n0 n1 n2 n2"; got != want {
		t.Errorf("without costs: order %q, want %q", got, want)
	}
}

// TestEnergyPauseAllState3: every node's th2 below full load: once each
// node with a free GPU is in state 3, the next job is paused, naming the
// head of the sequence.
func TestEnergyPauseAllState3(t *testing.T) {
	th := []placer.LoadThresholds{{Th1: 0.25, Th2: 0.5}, {Th1: 0.25, Th2: 0.5}}
	f := liveFixture(t, th, []float64{1, 2}, nil)
	order, pause := f.fill(t, "")
	// n0: 1 (to th1), +1 (into state 2), +1 (into state 3); then n1 alike.
	if got, want := strings.Join(order, " "), "n0 n0 n1 n1 n0 n1"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if pause != "best node n0 is in load state 3" {
		t.Errorf("pause %q", pause)
	}
}

// TestEnergyDirectNetwork: in a direct network the job's upload address
// names its storage device; the nearest reachable node fills first, an
// unreachable node is never used, and a job with no address (or one that
// names no device) ignores the network.
func TestEnergyDirectNetwork(t *testing.T) {
	th := []placer.LoadThresholds{{Th1: 1, Th2: 1}, {Th1: 1, Th2: 1}, {Th1: 1, Th2: 1}}
	links := []network.Link{{LatencyMs: 5, BandwidthGbps: 1}, {LatencyMs: 0.1, BandwidthGbps: 1}, {LatencyMs: 0.01, BandwidthGbps: 1, Unreachable: true}}
	f := liveFixture(t, th, nil, links)
	order, _ := f.fill(t, "d")
	if got, want := strings.Join(order, " "), "n1 n1 n1 n1 n0 n0 n0 n0"; got != want {
		t.Errorf("job with data on d: order %q, want %q (n2 cannot reach d)", got, want)
	}
	for _, addr := range []string{"", "elsewhere"} {
		f = liveFixture(t, th, nil, links)
		order, _ = f.fill(t, addr)
		if got, want := strings.Join(order, " "), "n0 n0 n0 n0 n1 n1 n1 n1 n2 n2 n2 n2"; got != want {
			t.Errorf("upload %q: order %q, want %q", addr, got, want)
		}
	}
}

func TestEnergyTableCostValidate(t *testing.T) {
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}, []model.Node{{Name: "n0", GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	base := func(cost [][]float64) *placer.EnergyTable {
		return &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: []int{0},
			Th: [][]placer.LoadThresholds{{{Th1: 0.5, Th2: 0.8}}}, Cost: cost}
	}
	for _, tc := range []struct {
		cost [][]float64
		err  string
	}{
		{nil, ""},
		{[][]float64{{3}}, ""},
		{[][]float64{{3}, {4}}, "costs for 2 classes, thresholds for 1"},
		{[][]float64{{}}, "class 0 has 0 costs, want 1"},
		{[][]float64{{-1}}, "cost -1: want a finite number ≥ 0"},
	} {
		err := base(tc.cost).Validate(c)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("cost %v: error %v, want %q", tc.cost, err, tc.err)
		}
	}
}
