package policy

import (
	"cmp"
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

// TestSurvivalMatchesReference: fit gives bit for bit the estimate of the
// plain Kaplan–Meier pass it replaced (referenceFit: every observation laid
// out by size, events first at equal sizes, S multiplied down at each
// event by 1 − 1/(observations from it on)), on random observations with
// many ties, zeros of both signs, infinities and NaNs, fitted round after
// round as in a run.
func TestSurvivalMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	odd := []float64{0, math.Copysign(0, -1), math.Inf(1), math.NaN()}
	draw := func(withOdd bool) float64 {
		if withOdd && rng.IntN(20) == 0 {
			return odd[rng.IntN(len(odd))]
		}
		return float64(rng.IntN(30)) * 0.5
	}
	var s survival
	var finished []float64
	for round := range 400 {
		withOdd := round%100 >= 80 // the last fifth of each run
		if round%100 == 0 {
			finished = nil
			s.forget()
		}
		for range rng.IntN(5) {
			finished = append(finished, draw(withOdd))
		}
		attained := make([]float64, rng.IntN(10))
		for i := range attained {
			attained[i] = draw(withOdd)
		}
		s.fit(finished, attained)
		at, surv, tail, end := referenceFit(s.fin, attained)
		if !sameBits(s.at, at) || !sameBits(s.surv, surv) || !sameBits(s.tail, tail) || !sameBits([]float64{s.end}, []float64{end}) {
			t.Fatalf("round %d: fit %v %v %v %v, reference %v %v %v %v", round, s.at, s.surv, s.tail, s.end, at, surv, tail, end)
		}
	}
}

// referenceFit is fit as first written: the observations merged into one
// list, then one pass over it. fin is the finished sizes as addFinished
// keeps them, ascending (equal under cmp.Compare, -0 and 0 keep its order).
func referenceFit(fin, attained []float64) (at, surv, tail []float64, end float64) {
	type observation struct {
		v     float64
		event bool
	}
	live := slices.Clone(attained)
	slices.SortFunc(live, cmp.Compare[float64])
	var obs []observation
	i, k := 0, 0
	for i < len(fin) || k < len(live) {
		if k == len(live) || i < len(fin) && cmp.Compare(fin[i], live[k]) <= 0 {
			obs = append(obs, observation{fin[i], true})
			i++
			continue
		}
		obs = append(obs, observation{live[k], false})
		k++
	}
	at, surv = []float64{0}, []float64{1}
	n, sv := len(obs), 1.0
	for i, o := range obs {
		end = max(end, o.v)
		if o.event {
			sv *= 1 - 1/float64(n-i)
			at, surv = append(at, o.v), append(surv, sv)
		}
	}
	m := len(at)
	tail = make([]float64, m)
	last := surv[m-1]
	acc := last*(end-at[m-1]) + last*end
	for i := m - 1; i >= 0; i-- {
		tail[i] = acc
		if i > 0 {
			acc += surv[i-1] * (at[i] - at[i-1])
		}
	}
	return at, surv, tail, end
}

// sameBits reports whether a and b hold the same float64 bit patterns.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
