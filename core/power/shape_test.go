package power_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpusched/gpusched/core/power"
)

// region is where a curve falls, is flat and rises: [0, lo) falling, [lo, hi]
// flat, (hi, 1] rising.
type region struct{ lo, hi float64 }

// flatRegion classifies the energy-per-work curve of the model on a fine
// grid of loads in [0.05, 1] by its slope, as calibrate.Fit does with
// FitTolerance on noiseless samples: falling where the slope is below
// −FitTolerance × the curve's minimum, rising where it is above +that, flat
// otherwise. It fails unless the classes come in the order falling, flat,
// rising, each present.
func flatRegion(t *testing.T, what string, n power.NodePower, g power.GPUPower, w power.Workload, total int) region {
	t.Helper()
	const lo, step = 0.05, 0.0005
	e := func(l float64) float64 { return power.EnergyPerWork(n, g, w, total, l) }
	ref := math.Inf(1)
	for l := lo; l <= 1; l += step {
		ref = min(ref, e(l))
	}
	tau := power.FitTolerance * ref
	r, class := region{-1, -1}, -1 // class: -1 falling, 0 flat, 1 rising
	for l := lo; l <= 1+1e-9; l += step {
		d := (e(min(l+step/2, 1)) - e(l-step/2)) / (min(l+step/2, 1) - (l - step/2))
		c := 0
		if d < -tau {
			c = -1
		} else if d > tau {
			c = 1
		}
		if c < class {
			t.Fatalf("%s: energy per unit of work goes from class %d back to %d at load %.3f", what, class, c, l)
		}
		if c == 0 && class == -1 {
			r.lo = l
		}
		if c == 1 && class == 0 {
			r.hi = l
		}
		class = c
	}
	if r.lo < 0 || r.hi < 0 {
		t.Fatalf("%s: not falling, flat and rising: region %+v", what, r)
	}
	return r
}

// TestCurveShape checks the curve of seed 002 for every default GPU type on
// nodes of 4 and 8 GPUs: energy per unit of work falls at low load, is flat
// in the middle and rises near full load.
func TestCurveShape(t *testing.T) {
	n, w := power.DefaultNode(), power.DefaultWorkload()
	for _, d := range power.Defaults() {
		for _, total := range []int{4, 8} {
			what := fmt.Sprintf("%s ×%d", d.Name, total)
			r := flatRegion(t, what, n, d.GPUPower, w, total)
			e := func(l float64) float64 { return power.EnergyPerWork(n, d.GPUPower, w, total, l) }
			switch {
			case r.lo > 0.7 || r.hi-r.lo < 0.1:
				t.Errorf("%s: flat region [%.3f, %.3f] is narrow", what, r.lo, r.hi)
			case r.hi < n.Contention.Knee || r.hi > 0.95:
				t.Errorf("%s: rising region starts at %.3f, not between the knee and 0.95", what, r.hi)
			case e(0.1) < 1.5*e(r.lo):
				t.Errorf("%s: energy per unit of work at load 0.1 (%.0f J) is not clearly above the flat level (%.0f J)", what, e(0.1), e(r.lo))
			case e(1) < 1.15*e(n.Contention.Knee):
				t.Errorf("%s: energy per unit of work at full load (%.0f J) is not clearly above the knee's (%.0f J)", what, e(1), e(n.Contention.Knee))
			}
			t.Logf("%s: falling to %.3f, flat to %.3f; e(0.1) %.0f, e(knee) %.0f, e(1) %.0f J", what, r.lo, r.hi, e(0.1), e(n.Contention.Knee), e(1))
		}
	}
}
