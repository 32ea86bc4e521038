package policy

import (
	"math"
	"slices"
	"testing"
)

// sizesFrom returns the sizes a, a+step, … (n of them), in descending
// order, so that sizeClasses.add must sort them.
func sizesFrom(a, step float64, n int) []float64 {
	var s []float64
	for i := n - 1; i >= 0; i-- {
		s = append(s, a+step*float64(i))
	}
	return s
}

func TestProbeQuantileEven(t *testing.T) {
	tenSingles := sizesFrom(100, 100, 10) // 100 … 1000: the upper median, the 6th, is 600
	for _, tc := range []struct {
		name           string
		obj            Objective
		light, even    float64
		gangs, singles []float64
		beta, want     float64
	}{
		{"gangs as long as singles: the even probe", Gittins, 0.6, 0.8, sizesFrom(100, 100, 10), tenSingles, 0, 0.8},
		{"halfway to the gang probe from it", Gittins, 0.6, 0.8, sizesFrom(100, 100, 10), tenSingles, 0.5, 0.55}, // 0.8 + (0.3 − 0.8)·½
		{"the backlog reached: the gang probe", Gittins, 0.6, 0.8, sizesFrom(100, 100, 10), tenSingles, 1, 0.3},
		{"gangs shorter", Gittins, 0.6, 0.8, sizesFrom(10, 10, 10), tenSingles, 0, 0.8},                            // median 60 ≤ 600
		{"gangs' median longer by 10 s", Gittins, 0.6, 0.8, sizesFrom(110, 100, 10), tenSingles, 0, 0.6},           // 610 > 600
		{"nine gangs only", Gittins, 0.6, 0.8, sizesFrom(100, 100, 9), tenSingles, 0, 0.6},                         // fewer than GangEvenJobs
		{"nine singles only", Gittins, 0.6, 0.8, sizesFrom(100, 100, 10), sizesFrom(100, 100, 9), 0, 0.6},          // likewise
		{"off", Gittins, 0.6, 0, sizesFrom(100, 100, 10), tenSingles, 0, 0.6},                                      // GangProbeEven 0
		{"esrpt keeps its light probe", EstSRPT, 0.6, 0.8, sizesFrom(100, 100, 10), tenSingles, 0, 0.6},            // Gittins only
		{"no light probe, even: the even probe", Gittins, 0, 0.8, sizesFrom(100, 100, 10), tenSingles, 0, 0.8},     // replaces the light quantile
		{"no light probe, not even: the gang probe", Gittins, 0, 0.8, sizesFrom(200, 100, 10), tenSingles, 0, 0.3}, // 700 > 600
	} {
		a := &Alloc{Objective: tc.obj, GangProbe: 0.3, GangProbeLight: tc.light, GangProbeEven: tc.even}
		for _, s := range tc.gangs {
			a.sizes.add(s, true)
		}
		for _, s := range tc.singles {
			a.sizes.add(s, false)
		}
		if got := a.probeQuantile(tc.beta); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: quantile %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSizeClassesAdd(t *testing.T) {
	var c sizeClasses
	for _, s := range []struct {
		size float64
		gang bool
	}{{5, true}, {1, false}, {3, true}, {4, false}, {1, true}, {2, false}, {3, true}} {
		c.add(s.size, s.gang)
	}
	if want := []float64{1, 3, 3, 5}; !slices.Equal(c.gangs, want) {
		t.Errorf("gangs %v, want %v", c.gangs, want)
	}
	if want := []float64{1, 2, 4}; !slices.Equal(c.singles, want) {
		t.Errorf("singles %v, want %v", c.singles, want)
	}
}
