package cli

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/power"
)

func TestEnergyTable(t *testing.T) {
	// 1,000 v100 nodes of 8 GPUs and 3 k80 nodes of 4: two shapes, so two
	// fits for the default workload, however many families the trace has.
	types := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.37}}
	var nodes []model.Node
	for i := range 1000 {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("v%d", i), Type: 0, GPUs: 8})
	}
	for i := range 3 {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("k%d", i), Type: 1, GPUs: 4})
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := power.DefaultCluster(c)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{{Model: "ResNet-50 (batch size 64)"}, {Model: "LM (batch size 20)"}, {}, {Model: "ResNet-50 (batch size 16)"}}
	fits := 0
	counting := func(k shapeKey) (placer.LoadThresholds, error) { fits++; return fitShape(k) }
	table, err := energyTable(c, pw, jobs, nil, counting)
	if err != nil {
		t.Fatal(err)
	}
	if fits != 2 {
		t.Errorf("%d fits, want 2 (one per node shape)", fits)
	}
	if err := table.Validate(c); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{placer.DefaultFamily: 0, "LM": 1, "ResNet-50": 2}
	if len(table.Families) != len(want) {
		t.Errorf("families %v, want %v", table.Families, want)
	}
	for f, col := range want {
		if table.Families[f] != col {
			t.Errorf("family %q in column %d, want %d", f, table.Families[f], col)
		}
	}
	// docs/ENERGY.md: v100 × 8 at the defaults gives 0.45 / 0.80.
	v := table.Th[table.Class[0]][0]
	if math.Abs(v.Th1-0.45) > 0.02 || math.Abs(v.Th2-0.80) > 0.02 {
		t.Errorf("v100 × 8: %+v, want about 0.45 / 0.80", v)
	}
	if table.Class[999] != table.Class[0] || table.Class[1000] == table.Class[0] {
		t.Errorf("classes %d, %d, %d: want v100 nodes to share one, k80 another", table.Class[0], table.Class[999], table.Class[1000])
	}
	// A workload of its own costs one more fit per shape and changes the
	// family's thresholds (lower utilisation: a higher th1).
	fits = 0
	table, err = energyTable(c, pw, jobs, map[string]power.Workload{"LM": {Util: 0.7, Sensitivity: 1}}, counting)
	if err != nil {
		t.Fatal(err)
	}
	if lm, def := table.Th[table.Class[0]][1], table.Th[table.Class[0]][0]; fits != 4 || !(lm.Th1 > def.Th1) {
		t.Errorf("%d fits, LM %+v vs default %+v: want 4 fits and a higher th1", fits, lm, def)
	}
}

// TestEnergyTableNoStableRegion: a modelled curve without a stable region
// does not fail the energy placer (the property test found such a cluster:
// strong contention from a low knee); both thresholds go to the load of
// least energy per unit of work.
func TestEnergyTableNoStableRegion(t *testing.T) {
	c, err := model.NewCluster([]model.GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}}, []model.Node{{Name: "n0", Type: 0, GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	// No static power and contention from load 0 (knee 0): energy per unit
	// of work, 300·util·busy ÷ (busy·(1 − 0.9·load)), rises over the whole
	// ramp; its lowest point is the ramp's first loaded sample.
	pw := &power.Cluster{Types: []power.GPUPower{{IdleW: 0, MaxW: 300}},
		Nodes: []power.NodePower{{BaseW: 0, Contention: power.Contention{Knee: 0, Slowdown: 0.9}}}}
	table, err := energyTable(c, pw, nil, nil, fitShape)
	if err != nil {
		t.Fatal(err)
	}
	want := 1.0 / power.RampSteps
	if th := table.Th[0][0]; th.Th1 != want || th.Th2 != want {
		t.Errorf("thresholds %+v, want both at load %v", th, want)
	}
}

func TestSavedText(t *testing.T) {
	for _, tc := range []struct {
		kwh  float64
		want string
	}{
		{0.25, "placement by energy saved 0.250 kWh against pack"},
		{0, "placement by energy saved 0.000 kWh against pack"},
		{-0.25, "placement by energy cost 0.250 kWh more than pack"},
	} {
		if got := savedText("energy", tc.kwh); got != tc.want {
			t.Errorf("savedText(%v) = %q, want %q", tc.kwh, got, tc.want)
		}
	}
	if got, want := savedText("pack", -0.25), "placement is pack itself: the live run and its replay with pack differ by 0.250 kWh"; got != want {
		t.Errorf("savedText(pack) = %q, want %q", got, want)
	}
}
