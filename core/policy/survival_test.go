package policy

import (
	"math"
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
