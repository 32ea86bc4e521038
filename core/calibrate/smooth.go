package calibrate

import (
	"fmt"
	"math"
	"slices"
)

// curve is the energy-per-work curve of one ramp, smoothed and
// differentiated at every sample load (seed 002, claim 5).
type curve struct {
	// x are the loads, strictly increasing; e the energy per unit of work.
	x, e []float64
	// s is the smoothed curve and d its derivative: the value and the slope
	// of the local line fitted around each load.
	s, d []float64
	// sxx is Σ(x−x̄)² over each local window: the slope's standard error at
	// sample i is noise × s[i] / √sxx[i].
	sxx []float64
	// noise is the estimated standard deviation of e around the curve,
	// relative to the curve.
	noise float64
}

// smooth fits a least-squares line to the samples within window/2 of every
// load (at least minWindowPoints of them) and keeps its value and slope there:
// a first-order Savitzky–Golay filter for uneven spacing.
func smooth(x, e []float64, window float64) (*curve, error) {
	n := len(x)
	c := &curve{x: x, e: e, s: make([]float64, n), d: make([]float64, n), sxx: make([]float64, n)}
	resid := make([]float64, n)
	lo, hi := 0, 0 // the window [lo, hi] of samples within window/2 of x[i]
	for i := range n {
		for x[lo] < x[i]-window/2 {
			lo++
		}
		for hi+1 < n && x[hi+1] <= x[i]+window/2 {
			hi++
		}
		a, b := widen(x, i, lo, hi)
		fit := fitLine(x[a:b+1], e[a:b+1], x[i])
		if !(fit.sxx > 0) || math.IsNaN(fit.slope) || math.IsInf(fit.slope, 0) || math.IsInf(fit.value, 0) {
			return nil, fmt.Errorf("%w: samples around load %v are too close together or their energy per unit of work too large to fit a slope", ErrBadSample, x[i])
		}
		c.s[i], c.d[i], c.sxx[i] = fit.value, fit.slope, fit.sxx
		// The residual of a sample in its own fit is shrunk by its leverage;
		// undo that so that the noise estimate is unbiased.
		resid[i] = math.Inf(1)
		if fit.value > 0 {
			resid[i] = math.Abs(e[i]-fit.value) / math.Sqrt(max(1-fit.leverage, 1e-9)) / fit.value
		}
	}
	slices.Sort(resid)
	c.noise = 1.4826 * median(resid) // a robust standard deviation: MAD × 1.4826
	return c, nil
}

// widen returns the window [lo, hi] around i grown, towards the nearer
// neighbour first, until it holds at least minWindowPoints samples.
func widen(x []float64, i, lo, hi int) (int, int) {
	n := len(x)
	for hi-lo+1 < min(minWindowPoints, n) {
		switch {
		case lo == 0:
			hi++
		case hi == n-1:
			lo--
		case x[i]-x[lo-1] <= x[hi+1]-x[i]:
			lo--
		default:
			hi++
		}
	}
	return lo, hi
}

// line is a least-squares line evaluated at one load.
type line struct {
	value, slope float64
	// sxx is Σ(x−x̄)² of the points; leverage that of the evaluation point.
	sxx, leverage float64
}

// fitLine fits a least-squares line to the points (x, y) and evaluates it at
// x0, which is one of the x. Sums are taken about the means for accuracy.
func fitLine(x, y []float64, x0 float64) line {
	n := float64(len(x))
	var mx, my float64
	for k := range x {
		mx += x[k]
		my += y[k]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for k := range x {
		dx := x[k] - mx
		sxx += dx * dx
		sxy += dx * (y[k] - my)
	}
	slope := sxy / sxx
	return line{
		value:    my + slope*(x0-mx),
		slope:    slope,
		sxx:      sxx,
		leverage: 1/n + (x0-mx)*(x0-mx)/sxx,
	}
}

// median returns the median of sorted, which is not empty.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
