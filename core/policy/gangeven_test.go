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

// TestUpperMedian: after each value, the upper median (index ⌊n/2⌋ of the
// values sorted) worked by hand, then against a sort on 2,000 values with
// many ties.
func TestUpperMedian(t *testing.T) {
	var m upperMedian
	for i, tc := range []struct{ v, want float64 }{
		{5, 5},  // [5]
		{1, 5},  // [1 5]
		{3, 3},  // [1 3 5]
		{4, 4},  // [1 3 4 5]
		{1, 3},  // [1 1 3 4 5]
		{2, 3},  // [1 1 2 3 4 5]
		{3, 3},  // [1 1 2 3 3 4 5]
		{9, 3},  // [1 1 2 3 3 4 5 9]
		{0, 3},  // [0 1 1 2 3 3 4 5 9]
		{-1, 3}, // [-1 0 1 1 2 3 3 4 5 9]
	} {
		m.add(tc.v)
		if got := m.get(); got != tc.want || m.n() != i+1 {
			t.Fatalf("after %d values: upper median %v of %d, want %v of %d", i+1, got, m.n(), tc.want, i+1)
		}
	}
	var r upperMedian
	var all []float64
	x := uint64(1)
	for i := 0; i < 2000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		v := float64(x>>54) / 8 // 0 … 127.875 in steps of 1/8: many ties
		r.add(v)
		all = append(all, v)
		sorted := slices.Sorted(slices.Values(all))
		if got, want := r.get(), sorted[len(sorted)/2]; got != want {
			t.Fatalf("after %d values: upper median %v, want %v", i+1, got, want)
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
	// gangs [1 3 3 5]: upper median 3 of 4; singles [1 2 4]: 2 of 3.
	if got, n := c.gangs.get(), c.gangs.n(); got != 3 || n != 4 {
		t.Errorf("gangs: upper median %v of %d, want 3 of 4", got, n)
	}
	if got, n := c.singles.get(), c.singles.n(); got != 2 || n != 3 {
		t.Errorf("singles: upper median %v of %d, want 2 of 3", got, n)
	}
}

// TestAdvantage: best speed over second-best, capped; a job that runs on
// one type only has the cap.
func TestAdvantage(t *testing.T) {
	for _, tc := range []struct {
		speed []float64
		want  float64
	}{
		{[]float64{1, 0.25, 0.1}, 4},
		{[]float64{0.2, 0.5, 1}, 2},    // best last
		{[]float64{1, 1, 0.5}, 1},      // a tie for best
		{[]float64{1, 0.1, 0.05}, 8},   // 10, capped
		{[]float64{0, 1, 0}, 8},        // one type only
		{[]float64{0.5, 0.4, 0}, 1.25}, // a type it cannot run on
	} {
		if got := advantage(tc.speed); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("advantage(%v) = %v, want %v", tc.speed, got, tc.want)
		}
	}
}

// TestAdvantageOn: the advantage weight applies only to Gittins, with
// AdvantageEven set, at β = 0 and while the finished gangs are no longer
// than the single-GPU jobs (at least GangEvenJobs of each).
func TestAdvantageOn(t *testing.T) {
	tenSingles := sizesFrom(100, 100, 10) // upper median 600
	for _, tc := range []struct {
		name           string
		obj            Objective
		alpha, beta    float64
		gangs, singles []float64
		want           bool
	}{
		{"even, light load", Gittins, 0.5, 0, sizesFrom(100, 100, 10), tenSingles, true},
		{"gangs longer", Gittins, 0.5, 0, sizesFrom(110, 100, 10), tenSingles, false}, // 610 > 600
		{"nine gangs only", Gittins, 0.5, 0, sizesFrom(100, 100, 9), tenSingles, false},
		{"a backlog", Gittins, 0.5, 0.1, sizesFrom(100, 100, 10), tenSingles, false},
		{"off", Gittins, 0, 0, sizesFrom(100, 100, 10), tenSingles, false},
		{"esrpt", EstSRPT, 0.5, 0, sizesFrom(100, 100, 10), tenSingles, false},
	} {
		a := &Alloc{Objective: tc.obj, AdvantageEven: tc.alpha}
		for _, s := range tc.gangs {
			a.sizes.add(s, true)
		}
		for _, s := range tc.singles {
			a.sizes.add(s, false)
		}
		if got := a.advantageOn(tc.beta); got != tc.want {
			t.Errorf("%s: advantageOn %v, want %v", tc.name, got, tc.want)
		}
	}
}
