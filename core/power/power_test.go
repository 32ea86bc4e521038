package power_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/power"
)

// v100 and node are round figures for hand-checked expectations.
func v100() power.GPUPower { return power.GPUPower{IdleW: 50, MaxW: 300} }

func node(base, knee, slowdown float64) power.NodePower {
	return power.NodePower{BaseW: base, Contention: power.Contention{Knee: knee, Slowdown: slowdown}}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestNodeWatts(t *testing.T) {
	tests := []struct {
		name        string
		busy, total int
		util        float64
		want        float64
	}{
		{"idle node", 0, 8, 1, 200 + 8*50},
		{"all busy at full utilisation", 8, 8, 1, 200 + 8*300},
		{"half busy at full utilisation", 4, 8, 1, 200 + 4*50 + 4*300},
		{"busy GPUs at 60 %", 2, 4, 0.6, 200 + 2*50 + 2*(50+250*0.6)},
		{"busy clamped to total", 9, 8, 1, 200 + 8*300},
		{"negative busy is idle", -1, 8, 1, 200 + 8*50},
		{"utilisation clamped to 1", 1, 1, 1.5, 200 + 300},
		{"no GPUs", 0, 0, 1, 200},
	}
	for _, tt := range tests {
		if got := power.NodeWatts(node(200, 0.75, 0.3), v100(), tt.busy, tt.total, tt.util); !near(got, tt.want) {
			t.Errorf("%s: NodeWatts = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSpeed(t *testing.T) {
	tests := []struct {
		name                string
		knee, slowdown      float64
		load, sensitivity   float64
		want, wantFamilyPow float64
	}{
		{"below the knee", 0.75, 0.3, 0.5, 2, 1, 1},
		{"at the knee", 0.75, 0.3, 0.75, 2, 1, 1},
		{"half way to full load", 0.75, 0.3, 0.875, 2, 0.85, 0.85 * 0.85},
		{"full load", 0.75, 0.3, 1, 2, 0.7, 0.49},
		{"load clamped to 1", 0.75, 0.3, 3, 1, 0.7, 0.7},
		{"insensitive family", 0.75, 0.3, 1, 0, 0.7, 1},
		{"knee 1: no slowdown", 1, 0.3, 1, 1, 1, 1},
		{"knee 0: slows from the first GPU", 0, 0.5, 0.5, 1, 0.75, 0.75},
		{"slowdown 0", 0.5, 0, 1, 1, 1, 1},
	}
	for _, tt := range tests {
		n := node(0, tt.knee, tt.slowdown)
		if got := power.Speed(n, tt.load); !near(got, tt.want) {
			t.Errorf("%s: Speed = %v, want %v", tt.name, got, tt.want)
		}
		w := power.Workload{Util: 1, Sensitivity: tt.sensitivity}
		if got := w.Speed(n, tt.load); !near(got, tt.wantFamilyPow) {
			t.Errorf("%s: Workload.Speed = %v, want %v", tt.name, got, tt.wantFamilyPow)
		}
	}
}

func TestEnergyPerWork(t *testing.T) {
	w := power.Workload{Util: 1, Sensitivity: 1}
	tests := []struct {
		name  string
		total int
		load  float64
		want  float64
	}{
		{"half load: 4 busy of 8", 8, 0.5, (200 + 4*50 + 4*300) / 4.0},
		{"full load, slowed to 0.7", 8, 1, (200 + 8*300) / (8 * 0.7)},
		{"fractional busy GPUs", 4, 0.1, (200 + 4*50 + 0.4*250) / 0.4},
		{"no work at load 0", 8, 0, math.Inf(1)},
		{"no GPUs", 0, 0.5, math.NaN()},
	}
	for _, tt := range tests {
		got := power.EnergyPerWork(node(200, 0.75, 0.3), v100(), w, tt.total, tt.load)
		if !(near(got, tt.want) || math.IsNaN(got) && math.IsNaN(tt.want) || math.IsInf(got, 1) && math.IsInf(tt.want, 1)) {
			t.Errorf("%s: EnergyPerWork = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" for valid
	}{
		{"gpu ok", power.GPUPower{IdleW: 0, MaxW: 1}.Validate(), ""},
		{"gpu idle = max", power.GPUPower{IdleW: 70, MaxW: 70}.Validate(), ""},
		{"gpu negative idle", power.GPUPower{IdleW: -1, MaxW: 300}.Validate(), "idle power -1 W"},
		{"gpu zero max", power.GPUPower{IdleW: 0, MaxW: 0}.Validate(), "maximum power 0 W"},
		{"gpu NaN max", power.GPUPower{IdleW: 0, MaxW: math.NaN()}.Validate(), "maximum power NaN W"},
		{"gpu max below idle", power.GPUPower{IdleW: 80, MaxW: 70}.Validate(), "maximum power 70 W is below the idle power 80 W"},
		{"node ok", node(0, 1, 0).Validate(), ""},
		{"node negative base", node(-5, 0.75, 0.3).Validate(), "base power -5 W"},
		{"node infinite base", node(math.Inf(1), 0.75, 0.3).Validate(), "base power +Inf W"},
		{"node knee above 1", node(200, 1.5, 0.3).Validate(), "contention knee 1.5"},
		{"node knee NaN", node(200, math.NaN(), 0.3).Validate(), "contention knee NaN"},
		{"node slowdown 1", node(200, 0.75, 1).Validate(), "contention slowdown 1"},
		{"node negative slowdown", node(200, 0.75, -0.1).Validate(), "contention slowdown -0.1"},
		{"workload ok", power.Workload{Util: 0.5, Sensitivity: 0}.Validate(), ""},
		{"workload util 0", power.Workload{Util: 0, Sensitivity: 1}.Validate(), "utilisation 0"},
		{"workload util above 1", power.Workload{Util: 1.1, Sensitivity: 1}.Validate(), "utilisation 1.1"},
		{"workload negative sensitivity", power.Workload{Util: 1, Sensitivity: -1}.Validate(), "contention sensitivity -1"},
	}
	for _, tt := range tests {
		switch {
		case tt.want == "" && tt.err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, tt.err)
		case tt.want != "" && (tt.err == nil || !strings.HasPrefix(tt.err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one starting %q", tt.name, tt.err, tt.want)
		}
	}
}

func TestRamp(t *testing.T) {
	n, g, w := node(200, 0.75, 0.3), v100(), power.Workload{Util: 0.8, Sensitivity: 1}
	r := power.Ramp(n, g, w, 8, 8)
	if len(r) != 9 {
		t.Fatalf("Ramp gave %d samples, want 9", len(r))
	}
	if r[0] != (power.Sample{Load: 0, PowerW: 200 + 8*50, Throughput: 0}) {
		t.Errorf("first sample %+v, want an idle reading", r[0])
	}
	for k, s := range r {
		busy := k // steps = total: one more busy GPU per step
		if !near(s.Load, float64(k)/8) || !near(s.PowerW, power.NodeWatts(n, g, busy, 8, w.Util)) ||
			!near(s.Throughput, float64(busy)*w.Speed(n, s.Load)) {
			t.Errorf("sample %d = %+v, disagrees with NodeWatts and Speed", k, s)
		}
		if k > 0 && s.Throughput > 0 && !near(s.PowerW/s.Throughput, power.EnergyPerWork(n, g, w, 8, s.Load)) {
			t.Errorf("sample %d: power/throughput disagrees with EnergyPerWork", k)
		}
	}
	for _, bad := range [][2]int{{0, 10}, {8, 0}, {-1, -1}} {
		if got := power.Ramp(n, g, w, bad[0], bad[1]); got != nil {
			t.Errorf("Ramp(total %d, steps %d) = %v, want nil", bad[0], bad[1], got)
		}
	}
}
