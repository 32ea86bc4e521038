package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSurvivalRemaining(t *testing.T) {
	tests := []struct {
		name               string
		finished, censored []float64
		at, want           []float64
	}{
		{
			// Nothing at all: as long again as it has run (at least a
			// minute).
			name: "no history", at: []float64{0, 100}, want: []float64{60, 100},
		},
		{
			// Nothing finished, a job running at 500: S = 1 up to 500,
			// then the tail guess 500 → E[S − a] = 1000 − a; beyond 500,
			// as long again.
			name: "only censored", censored: []float64{500},
			at: []float64{0, 100, 1000}, want: []float64{1000, 900, 1000},
		},
		{
			// Sizes 100 and 300 finished, one job still running at 200:
			// S = 1 on [0,100), 2/3 on [100,300), 0 after.
			// E[S] = 100 + 2/3·200 = 233.3; E[S−150 | S>150] = 150;
			// E[S−250 | S>250] = 50 → the one-minute floor.
			name: "all sizes seen", finished: []float64{100, 300}, censored: []float64{200},
			at: []float64{0, 150, 250}, want: []float64{100 + 2.0/3*200, 150, 60},
		},
		{
			// 100 finished, two running at 200 and 400: S = 2/3 from 100
			// to the largest observation 400, then the tail guess
			// ∫_400^∞ S = S(400)·400. E[S] = 100 + 2/3·300 + 2/3·400;
			// E[S−200 | S>200] = 200 + 400 = 600; beyond 400: as long again.
			name: "censored tail", finished: []float64{100}, censored: []float64{200, 400},
			at: []float64{0, 200, 500}, want: []float64{100 + 2.0/3*700, 600, 500},
		},
	}
	for _, tc := range tests {
		var s survival
		s.fit(tc.finished, tc.censored)
		for i, a := range tc.at {
			if got := s.remaining(a); math.Abs(got-tc.want[i]) > 1e-9 {
				t.Errorf("%s: remaining(%v) = %v, want %v", tc.name, a, got, tc.want[i])
			}
		}
	}
}

// TestSurvivalQuantile: the smallest finished size whose estimated
// probability of not being exceeded reaches p; false before the estimate
// gets there.
func TestSurvivalQuantile(t *testing.T) {
	for _, tc := range []struct {
		name               string
		finished, censored []float64
		p                  float64
		want               float64
		ok                 bool
	}{
		{"no history", nil, nil, 0.3, 0, false},
		{"only censored", nil, []float64{500}, 0.3, 0, false},
		// 100, 300 finished, 200 running: P(S ≤ 100) = 1/3, P(S ≤ 300) = 1.
		{"first step", []float64{100, 300}, []float64{200}, 0.3, 100, true},
		{"second step", []float64{100, 300}, []float64{200}, 0.34, 300, true},
		{"the largest", []float64{100, 300}, []float64{200}, 0.99, 300, true},
		// 100 finished, 200 and 400 running: P(S ≤ 100) = 1/3 and no more
		// events: the median is not known yet.
		{"not reached", []float64{100}, []float64{200, 400}, 0.5, 0, false},
	} {
		var s survival
		s.fit(tc.finished, tc.censored)
		if got, ok := s.quantile(tc.p); got != tc.want || ok != tc.ok {
			t.Errorf("%s: quantile(%v) = %v, %v; want %v, %v", tc.name, tc.p, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSurvivalIncremental: fitting round after round, with the finished
// sizes growing as they do in a run (ties with each other and with the
// active jobs' service included, and a new run after forget), gives
// exactly the estimate of a fit from scratch on the same observations.
func TestSurvivalIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func() float64 { return float64(1 + rng.IntN(40)) } // few values: many ties
	var inc survival
	var finished []float64
	for round := range 300 {
		if round == 150 {
			finished = nil
			inc.forget()
		}
		for range rng.IntN(4) {
			finished = append(finished, draw())
		}
		attained := make([]float64, rng.IntN(8))
		for i := range attained {
			attained[i] = draw()
		}
		inc.fit(finished, attained)
		var fresh survival
		fresh.fit(slices.Clone(finished), attained)
		if !slices.Equal(inc.at, fresh.at) || !slices.Equal(inc.surv, fresh.surv) || !slices.Equal(inc.tail, fresh.tail) || inc.end != fresh.end {
			t.Fatalf("round %d: incremental fit %v %v, from scratch %v %v", round, inc.at, inc.surv, fresh.at, fresh.surv)
		}
		for _, a := range []float64{0, 5, 20, 39, 45} {
			if x, y := inc.remaining(a), fresh.remaining(a); x != y {
				t.Fatalf("round %d: remaining(%v) %v incremental, %v from scratch", round, a, x, y)
			}
		}
	}
}

// TestSurvivalMatchesSort: the merged observations are those a sort by
// size, events first at equal sizes, gives.
func TestSurvivalMatchesSort(t *testing.T) {
	s := survival{}
	s.fit([]float64{3, 1, 2, 2}, []float64{2, 0.5, 3, 4})
	want := []observation{{0.5, false}, {1, true}, {2, true}, {2, true}, {2, false}, {3, true}, {3, false}, {4, false}}
	if !slices.Equal(s.obs, want) {
		t.Errorf("observations %v, want %v", s.obs, want)
	}
}
