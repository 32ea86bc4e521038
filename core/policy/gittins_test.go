package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestGittinsIndex checks the smoothed curve's index against closed forms.
// Finished sizes 100, 400, 1600 s and no active job: Kaplan–Meier S is 1,
// 2/3, 1/3, 0 after them; with fewer events than GittinsKnotEvents the knots
// are the first and last sizes, (100, 1) and (1600, 0), and S falls
// linearly in log-size in between: S(x) = 1 − ln(x/100)/ln 16, hazard
// 1/(x·ln(1600/x)). From the three ages below the index is reached at the
// last size, G(a) = S(a) / ∫_a^1600 S (checked: at 0 the ratio is 0.00156
// at 300 and 0.00165 at 588; from 400 and 1000 it starts at the hazard,
// below the end's, and the hazard grows after 1600/e):
//   - G(0) = 1 / (100 + ∫_100^1600 S) = 1 / (1500/ln 16) = ln 16 / 1500.
//   - G(400): S(400) = 1/2, ∫_400^1600 S = 1200/ln 16 − 200, so
//     G(400) = 0.5 / (1200/ln 16 − 200).
//   - G(1000): S(1000) = 1 − ln 10/ln 16, ∫_1000^1600 S =
//     (1000·ln 10 + 600)/ln 16 − 1000.
//
// From 50, by contrast, the best horizon ends inside the curve (the ratio
// is 0.001949 at 300, above the end's 1/591): G(50) lies above 1/591.
//   - at or beyond 1600, and before any job finished, the curve knows
//     nothing (ok false).
func TestGittinsIndex(t *testing.T) {
	var sv survival
	var g gittinsCurve
	sv.fit(nil, []float64{0, 50})
	g.build(&sv)
	if _, ok := g.index(0); ok {
		t.Error("an index before any job finished")
	}
	sv.fit([]float64{100, 400, 1600}, nil)
	g.build(&sv)
	ln16 := math.Log(16)
	for _, c := range []struct{ a, want float64 }{
		{0, ln16 / 1500},
		{1000, (1 - math.Log(10)/ln16) / ((1000*math.Log(10)+600)/ln16 - 1000)},
		{400, 0.5 / (1200/ln16 - 200)},
	} {
		got, ok := g.index(c.a)
		if !ok || math.Abs(got/c.want-1) > 1e-3 {
			t.Errorf("G(%v) = %v, %v; want %v", c.a, got, ok, c.want)
		}
	}
	if got, _ := g.index(50); got < 0.001949 {
		t.Errorf("G(50) = %v, want at least the ratio at 300, 0.001949", got)
	}
	for _, a := range []float64{1600, 5000} {
		if got, ok := g.index(a); ok {
			t.Errorf("G(%v) = %v beyond the last size, want none", a, got)
		}
	}
}

// TestGittinsCurveEqualSizes: equal finished sizes make one knot, not a
// division by zero.
func TestGittinsCurveEqualSizes(t *testing.T) {
	var sv survival
	var g gittinsCurve
	sv.fit([]float64{100, 100, 100, 300}, nil)
	g.build(&sv)
	got, ok := g.index(0)
	if !ok || math.IsNaN(got) || math.IsInf(got, 0) || got <= 0 {
		t.Fatalf("G(0) = %v, %v", got, ok)
	}
	for i := 1; i < len(g.x); i++ {
		if !(g.x[i] > g.x[i-1]) || math.IsNaN(g.s[i]) || math.IsNaN(g.in[i]) {
			t.Fatalf("grid point %d: x %v after %v, S %v, ∫ %v", i, g.x[i], g.x[i-1], g.s[i], g.in[i])
		}
	}
}

// TestGittinsCurveZeroSizes: jobs that finished with no service (size 0)
// are left off the curve, which once looped for ever on its geometric grid
// from 0; with nothing but zeros the curve knows nothing.
func TestGittinsCurveZeroSizes(t *testing.T) {
	cases := []struct {
		name     string
		finished []float64
		wantOK   bool
	}{
		{"zeros only", []float64{0, 0}, false},
		{"a zero among sizes", []float64{0, 100, 400, 1600}, true},
		// One positive size makes one knot, as it does alone: no index.
		{"zeros and one size", []float64{0, 0, 0, 250}, false},
		{"one size alone", []float64{250}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sv survival
			var g gittinsCurve
			sv.fit(tc.finished, nil)
			g.build(&sv)
			got, ok := g.index(0)
			if ok != tc.wantOK || math.IsNaN(got) || math.IsInf(got, 0) || (ok && got <= 0) {
				t.Fatalf("G(0) = %v, %v; want ok %v and a finite positive index when ok", got, ok, tc.wantOK)
			}
			for i := 1; i < len(g.x); i++ {
				if !(g.x[i] > g.x[i-1]) {
					t.Fatalf("grid point %d: x %v after %v", i, g.x[i], g.x[i-1])
				}
			}
		})
	}
}

// fullIndex is gittinsCurve.index without the early stop: every grid point
// beyond a.
func fullIndex(g *gittinsCurve, a float64) (float64, bool) {
	if len(g.kx) == 0 || a >= g.kx[len(g.kx)-1] {
		return 0, false
	}
	sa := g.at(a)
	if sa <= 0 {
		return 0, false
	}
	i := sort.SearchFloat64s(g.x, a)
	ia := g.in[i] - (g.s[i]+sa)/2*(g.x[i]-a)
	best := 0.0
	for ; i < len(g.x); i++ {
		if d := g.in[i] - ia; d > 0 {
			best = max(best, (sa-g.s[i])/d)
		}
	}
	return best, best > 0
}

// TestGittinsIndexPruneExact: the early stop of index, and its skipped
// blocks, never change the index, bit for bit, on curves learned from random heavy-tailed sizes
// (log-normal and Pareto-like, with censored active jobs) at random ages
// and at every finished size.
func TestGittinsIndexPruneExact(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	var sv survival
	var g gittinsCurve
	checked, stopped, falling, skipped := 0, 0, 0, 0
	for trial := range 200 {
		var fin, live []float64
		for range 1 + r.IntN(400) {
			v := math.Exp(r.NormFloat64()*2 + 6)
			if trial%2 == 1 {
				v = 60 / math.Pow(1-r.Float64(), 1.3)
			}
			fin = append(fin, max(1, math.Round(v))) // build loops for ever on a size of 0
		}
		for range r.IntN(200) {
			live = append(live, r.Float64()*slices.Max(fin)*1.2)
		}
		sv.forget()
		sv.fit(fin, live)
		g.build(&sv)
		if g.falling {
			falling++
		}
		ages := append(slices.Clone(fin), 0)
		for range 50 {
			ages = append(ages, r.Float64()*slices.Max(fin))
		}
		for _, a := range ages {
			got, ok := g.index(a)
			want, wantOK := fullIndex(&g, a)
			if ok != wantOK || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d, a=%v: index %v, %v; the full scan gives %v, %v", trial, a, got, ok, want, wantOK)
			}
			checked++
			if ok && prunes(&g, a, want) {
				stopped++
			}
			if ok && skipsBlock(&g, a) {
				skipped++
			}
		}
	}
	if falling < 100 {
		t.Errorf("S never rose along the grid in %d of 200 curves, want at least half (the block skips are checked on those)", falling)
	}
	if skipped < checked/10 {
		t.Errorf("index skipped a block in %d of %d searches, want at least a tenth", skipped, checked)
	}
	if stopped < checked/4 {
		t.Errorf("the early stop cut %d of %d searches short, want at least a quarter", stopped, checked)
	}
}

// skipsBlock reports whether index(a) skips a block of the grid.
func skipsBlock(g *gittinsCurve, a float64) bool {
	sa := g.at(a)
	i := sort.SearchFloat64s(g.x, a)
	ia := g.in[i] - (g.s[i]+sa)/2*(g.x[i]-a)
	best := 0.0
	for ; i < len(g.x); i++ {
		d := g.in[i] - ia
		if d <= 0 {
			continue
		}
		if i%pruneEvery == 0 && best > 0 {
			if (sa-g.low)/d <= best {
				return false
			}
			if end := min(i+pruneEvery, len(g.x)) - 1; g.falling && (sa-g.s[end])/d <= best {
				return true
			}
		}
		best = max(best, (sa-g.s[i])/d)
	}
	return false
}

// prunes reports whether index(a), whose value is best, stops before the
// end of the grid.
func prunes(g *gittinsCurve, a, best float64) bool {
	sa := g.at(a)
	i := sort.SearchFloat64s(g.x, a)
	ia := g.in[i] - (g.s[i]+sa)/2*(g.x[i]-a)
	for ; i < len(g.x); i++ {
		if d := g.in[i] - ia; d > 0 && i%pruneEvery == 0 && (sa-g.low)/d <= best {
			return true
		}
	}
	return false
}

// BenchmarkGittinsIndex computes the index of 500 random ages on a curve
// learned from 2,000 log-normal sizes and 300 censored ones.
func BenchmarkGittinsIndex(b *testing.B) {
	r := rand.New(rand.NewPCG(29, 4))
	var fin, live, ages []float64
	for range 2000 {
		fin = append(fin, max(1, math.Round(math.Exp(r.NormFloat64()*2+6))))
	}
	for range 300 {
		live = append(live, r.Float64()*slices.Max(fin))
	}
	for range 500 {
		ages = append(ages, math.Exp(r.Float64()*10))
	}
	var sv survival
	var g gittinsCurve
	sv.fit(fin, live)
	g.build(&sv)
	sum := 0.0
	for b.Loop() {
		for _, a := range ages {
			v, _ := g.index(a)
			sum += v
		}
	}
	if sum == 0 {
		b.Fatal("no index")
	}
}
