package policy

import (
	"math"
	"slices"
	"sort"
)

// GittinsKnotEvents is how many finished jobs apart the knots of the
// smoothed size distribution lie (gittinsCurve), chosen by experiment
// (docs/EXPERIMENTS.md, issue 21): 1 (no smoothing) does worse, 5 to 40
// about the same.
const GittinsKnotEvents = 10

// gittinsStep is the ratio between two consecutive points of the grid on
// which the Gittins index is searched (2 %).
const gittinsStep = 1.02

// gittinsCurve is the size distribution learned by survival, smoothed for
// the Gittins index: S is kept at knots every GittinsKnotEvents events of
// the Kaplan–Meier estimate (the first event, every GittinsKnotEvents-th
// one after it, and the last) and interpolated linearly in log-size
// between them — the density between two knots is that of a log-uniform
// law, the shape of heavy-tailed job sizes. The step function itself gives
// a noisy index (a job just below a cluster of sizes looks about to
// finish). The curve is tabulated on a geometric grid (gittinsStep) with
// S and its running integral, so that an index costs one pass over the
// grid.
type gittinsCurve struct {
	kx, ks []float64 // knots: sizes (strictly ascending) and S there
	x, s   []float64 // grid: sizes from 0, S there
	in     []float64 // ∫_0^x S
	low    float64   // the least S of the grid
	// falling: S never rises from a grid point to the next (as a
	// survival function, up to rounding); index then skips blocks.
	falling bool
}

// build tabulates the smoothed curve of sv (after sv.fit).
func (g *gittinsCurve) build(sv *survival) {
	g.kx, g.ks = g.kx[:0], g.ks[:0]
	g.x, g.s, g.in = g.x[:0], g.s[:0], g.in[:0]
	m := len(sv.at) // sv.at[0] is 0, then the events
	if m < 2 {
		return
	}
	add := func(x, s float64) {
		if x <= 0 {
			// A job that finished with no service (a zero size) has no
			// place on a log-size curve or a geometric grid from 0.
			return
		}
		if n := len(g.kx); n > 0 && x <= g.kx[n-1] {
			g.ks[n-1] = s // equal sizes: one knot, the later S
			return
		}
		g.kx, g.ks = append(g.kx, x), append(g.ks, s)
	}
	first := 1 // the first event of a positive size (zeros lead sv.at)
	for first < m-1 && sv.at[first] <= 0 {
		first++
	}
	add(sv.at[first], 1)
	for e := GittinsKnotEvents; e < m; e += GittinsKnotEvents {
		add(sv.at[e], sv.surv[e])
	}
	add(sv.at[m-1], sv.surv[m-1])
	if len(g.kx) == 0 {
		return // every job finished had size 0: the curve knows nothing
	}
	g.x, g.s, g.in = append(g.x, 0), append(g.s, 1), append(g.in, 0)
	for i := range g.kx {
		if i == 0 {
			g.push(g.kx[0], 1)
			continue
		}
		for x := g.x[len(g.x)-1] * gittinsStep; x < g.kx[i]; x *= gittinsStep {
			g.push(x, g.at(x))
		}
		g.push(g.kx[i], g.ks[i])
	}
	g.low = slices.Min(g.s)
	g.falling = true
	for i := 1; i < len(g.s); i++ {
		g.falling = g.falling && g.s[i] <= g.s[i-1]
	}
}

// push appends a grid point, integrating S from the previous one by the
// trapezoid rule.
func (g *gittinsCurve) push(x, s float64) {
	n := len(g.x)
	g.in = append(g.in, g.in[n-1]+(g.s[n-1]+s)/2*(x-g.x[n-1]))
	g.x, g.s = append(g.x, x), append(g.s, s)
}

// at returns the smoothed S at x (1 before the first knot, the last knot's
// S beyond the last).
func (g *gittinsCurve) at(x float64) float64 {
	if x <= g.kx[0] {
		return 1
	}
	i := sort.SearchFloat64s(g.kx, x)
	if i >= len(g.kx) {
		return g.ks[len(g.ks)-1]
	}
	f := math.Log(x/g.kx[i-1]) / math.Log(g.kx[i]/g.kx[i-1])
	return g.ks[i-1] + f*(g.ks[i]-g.ks[i-1])
}

// index returns the Gittins index of a job that has received a, in
// completions per second of service: the largest, over the grid points x
// beyond a, of P(S ≤ x | S > a) / E[min(S, x) − a | S > a] =
// (S(a) − S(x)) / ∫_a^x S. ok is false where the curve knows nothing: no
// job finished yet, a at or beyond the last knot, or no chance left.
//
// The search stops early, without changing the result: every pruneEvery
// points it bounds what the points beyond can give, (S(a) − low) / ∫_a^x S
// (the integral only grows, S never falls below low, and the rounded
// quotients are monotone alike), and stops once that is no more than the
// best so far. Where S never rises along the grid (falling) it likewise
// skips the block of pruneEvery points it is at when (S(a) − S(y)) /
// ∫_a^x S, y the block's last point, is no more than the best so far:
// no point of the block gives more.
func (g *gittinsCurve) index(a float64) (float64, bool) {
	n := len(g.x)
	if len(g.kx) == 0 || a >= g.kx[len(g.kx)-1] {
		return 0, false
	}
	sa := g.at(a)
	if sa <= 0 {
		return 0, false
	}
	i := sort.SearchFloat64s(g.x, a) // first grid point ≥ a
	ia := g.in[i] - (g.s[i]+sa)/2*(g.x[i]-a)
	in, s := g.in[:n], g.s[:n]
	best := 0.0
	for ; i < len(in); i++ {
		if d := in[i] - ia; d > 0 {
			if i%pruneEvery == 0 && best > 0 {
				if (sa-g.low)/d <= best {
					break
				}
				if end := min(i+pruneEvery, n) - 1; g.falling && (sa-s[end])/d <= best {
					i = end
					continue
				}
			}
			// best = max(best, v) as the builtin folds it, by plain
			// comparisons: a NaN v is taken, a NaN best kept, and best is
			// never −0 (it starts at +0 and takes only a larger v or a
			// NaN), so a tie needs no sign test.
			if v := (sa - s[i]) / d; v != v || (best == best && v > best) {
				best = v
			}
		}
	}
	return best, best > 0
}

// pruneEvery is how many grid points apart index bounds the rest.
const pruneEvery = 16
