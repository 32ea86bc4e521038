package calibrate

import (
	"fmt"
	"math"
)

// Region classes of a sample (seed 002, claim 5): where the derivative of the
// smoothed curve lies.
const (
	falling = -1 // clearly negative
	stable  = 0  // near zero
	rising  = 1  // clearly positive
)

// thresholds splits the curve into its falling, stable and rising regions
// and returns the loads where they meet (seed 002, claims 4–5).
func (c *curve) thresholds(opts Options) (Thresholds, error) {
	ref := c.s[argmin(c.s)] // the stable level of energy per unit of work
	if !(ref > 0) {
		return Thresholds{}, fmt.Errorf("%w: the lowest energy per unit of work is %.3g, not positive: are the power readings zero?", ErrNoStableRegion, ref)
	}
	n := len(c.x)
	tau := make([]float64, n)
	class := make([]int, n)
	for i := range n {
		tau[i] = max(opts.Tolerance*ref, opts.NoiseZ*c.noise*c.s[i]/math.Sqrt(c.sxx[i]))
		class[i] = classify(c.d[i], tau[i])
	}
	a, z := split(class)
	switch {
	case a == n:
		return Thresholds{}, fmt.Errorf("%w: energy per unit of work falls over the whole ramp: extend it to higher loads", ErrNoStableRegion)
	case z == 0:
		return Thresholds{}, fmt.Errorf("%w: energy per unit of work rises over the whole ramp: extend it to lower loads", ErrNoStableRegion)
	}
	th := Thresholds{Th1: c.x[0], Th2: c.x[n-1]}
	if a > 0 { // falling meets stable where d crosses −τ
		th.Th1 = crossing(c.x[a-1], c.x[a], c.d[a-1]+tau[a-1], c.d[a]+tau[a])
	}
	if z < n { // stable meets rising where d crosses +τ
		th.Th2 = crossing(c.x[z-1], c.x[z], tau[z-1]-c.d[z-1], tau[z]-c.d[z])
	}
	if a == z || th.Th2-th.Th1 < opts.Window {
		return Thresholds{}, fmt.Errorf("%w: energy per unit of work is flat only between loads %.3f and %.3f, narrower than the smoothing window %v", ErrNoStableRegion, min(th.Th1, th.Th2), max(th.Th1, th.Th2), opts.Window)
	}
	return th, nil
}

// split fits the seed's shape, falling then stable then rising, to the
// samples' classes: it returns a and z such that [0, a) is the falling
// region, [a, z) the stable one and [z, n) the rising one, with the fewest
// samples whose class disagrees with their region. A short run of samples
// that noise pushed over the threshold thus does not end a region.
func split(class []int) (a, z int) {
	n := len(class)
	// notF[k], notS[k], notR[k]: samples before k not falling, stable, rising.
	notF, notS, notR := make([]int, n+1), make([]int, n+1), make([]int, n+1)
	for i, c := range class {
		notF[i+1] = notF[i] + b2i(c != falling)
		notS[i+1] = notS[i] + b2i(c != stable)
		notR[i+1] = notR[i] + b2i(c != rising)
	}
	// cost(a, z) = notF[a] + notS[z] − notS[a] + notR[n] − notR[z], a ≤ z.
	bestA, best := 0, n+1
	for k := 0; k <= n; k++ {
		if notF[k]-notS[k] < notF[bestA]-notS[bestA] {
			bestA = k
		}
		if cost := notF[bestA] - notS[bestA] + notS[k] - notR[k] + notR[n]; cost < best {
			a, z, best = bestA, k, cost
		}
	}
	return a, z
}

// classify returns the region class of a sample with slope d under the
// threshold tau.
func classify(d, tau float64) int {
	switch {
	case d < -tau:
		return falling
	case d > tau:
		return rising
	}
	return stable
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// crossing returns the load between x0 and x1 where a quantity that is g0 at
// x0 and g1 at x1, of opposite signs (g1 may be 0), crosses zero, by linear
// interpolation.
func crossing(x0, x1, g0, g1 float64) float64 {
	if g1 == g0 {
		return x1
	}
	t := g0 / (g0 - g1)
	return min(max(x0+t*(x1-x0), x0), x1)
}

// argmin returns the index of the smallest of v, which is not empty.
func argmin(v []float64) int {
	m := 0
	for i, x := range v {
		if x < v[m] {
			m = i
		}
	}
	return m
}
