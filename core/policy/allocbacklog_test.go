package policy

import (
	"math"
	"testing"
)

func TestBacklogPower(t *testing.T) {
	for _, tc := range []struct {
		demand, capacity, backlog, want float64
	}{
		{24, 24, 8, 0},       // every job fits: equal per GPU
		{12, 24, 8, 0},       // below capacity: clamped at 0
		{48, 24, 8, 1.0 / 7}, // twice the cluster: (2 − 1)/(8 − 1)
		{36, 24, 3, 0.25},    // (1.5 − 1)/(3 − 1)
		{192, 24, 8, 1},      // the backlog reached: the weights are the policy's
		{400, 24, 8, 1},      // beyond it: clamped at 1
		{48, 24, 0, 1},       // no priority backlog
		{48, 24, 1, 1},       // at most 1 counts as none
		{48, 0, 8, 1},        // a cluster without GPUs
	} {
		if got := backlogPower(tc.demand, tc.capacity, tc.backlog); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("backlogPower(%v, %v, %v) = %v, want %v", tc.demand, tc.capacity, tc.backlog, got, tc.want)
		}
	}
}

func TestFlatten(t *testing.T) {
	for _, tc := range []struct {
		w    float64
		gpus int
		beta float64
		want float64
	}{
		{0.5, 1, 0, 1},                       // β 0: 1 per GPU
		{0.5, 8, 0, 8},                       // for every job
		{0.5, 1, 1, 0.5},                     // β 1: unchanged
		{0.5, 8, 1, 0.5},                     // gangs too
		{1, 4, 0.5, 2},                       // 4·(1/4)^½
		{9, 1, 0.5, 3},                       // 9^½
		{0.01, 2, 0.5, 2 * math.Sqrt(0.005)}, // 2·(0.005)^½ ≈ 0.1414
		{1e-8, 1, 0.25, 0.01},                // (10^−8)^¼
	} {
		if got := flatten(tc.w, tc.gpus, tc.beta); math.Abs(got-tc.want) > 1e-12*max(1, tc.want) {
			t.Errorf("flatten(%v, %d, %v) = %v, want %v", tc.w, tc.gpus, tc.beta, got, tc.want)
		}
	}
}

func TestProbeQuantile(t *testing.T) {
	for _, tc := range []struct {
		probe, light, beta, want float64
	}{
		{0.3, 0.6, 0, 0.6},    // every job fits: the light-load probe
		{0.3, 0.6, 1, 0.3},    // the backlog reached: the gang probe
		{0.3, 0.6, 0.5, 0.45}, // halfway: halfway
		{0.3, 0.6, 0.25, 0.525},
		{0.3, 0, 0, 0.3}, // no light-load probe: the gang probe at every load
		{0.3, 0, 0.5, 0.3},
		{0.5, 0.2, 0, 0.2}, // a light-load probe may be the shorter one
	} {
		a := &Alloc{GangProbe: tc.probe, GangProbeLight: tc.light}
		if got := a.probeQuantile(tc.beta); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("probe %v, light %v, β %v: quantile %v, want %v", tc.probe, tc.light, tc.beta, got, tc.want)
		}
	}
}
