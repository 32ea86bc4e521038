package power_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/core/power"
)

// fit calibrates the model's ramp as the simulator does: Ramp, converted to
// calibrate's samples, fitted with FitTolerance.
func fit(n power.NodePower, g power.GPUPower, w power.Workload, total int) (calibrate.Thresholds, error) {
	ramp := power.Ramp(n, g, w, total, power.RampSteps)
	samples := make([]calibrate.Sample, len(ramp))
	for i, s := range ramp {
		samples[i] = calibrate.Sample{Load: s.Load, PowerW: s.PowerW, Throughput: s.Throughput}
	}
	return calibrate.Fit(samples, calibrate.Options{Tolerance: power.FitTolerance})
}

// TestFitRecoversFlatRegion checks that calibrate.Fit, run on the model's
// ramps, finds thresholds th1, th2 at the ends of the model's flat region
// (within calibrate's accuracy, half its smoothing window) for every default
// GPU type, node sizes 4 and 8, and several algorithm types.
func TestFitRecoversFlatRegion(t *testing.T) {
	n := power.DefaultNode()
	families := []struct {
		name string
		w    power.Workload
	}{
		{"default", power.DefaultWorkload()},
		{"light", power.Workload{Util: 0.7, Sensitivity: 1}},
		{"host-bound", power.Workload{Util: 1, Sensitivity: 2}},
	}
	const tol = calibrate.DefaultWindow / 2
	for _, d := range power.Defaults() {
		for _, total := range []int{4, 8} {
			for _, f := range families {
				what := fmt.Sprintf("%s ×%d, %s", d.Name, total, f.name)
				want := flatRegion(t, what, n, d.GPUPower, f.w, total)
				th, err := fit(n, d.GPUPower, f.w, total)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				if math.Abs(th.Th1-want.lo) > tol || math.Abs(th.Th2-want.hi) > tol {
					t.Errorf("%s: thresholds %.3f, %.3f; the model is flat from %.3f to %.3f", what, th.Th1, th.Th2, want.lo, want.hi)
				}
			}
		}
	}
}

// TestFitDependsOnFamily checks that algorithm types get different tables:
// a family that draws less power per GPU leaves the base power a larger
// share, so its curve flattens later; one that feels contention more rises
// sooner.
func TestFitDependsOnFamily(t *testing.T) {
	n := power.DefaultNode()
	g, _ := power.Lookup("v100")
	base, err1 := fit(n, g, power.DefaultWorkload(), 8)
	light, err2 := fit(n, g, power.Workload{Util: 0.5, Sensitivity: 1}, 8)
	host, err3 := fit(n, g, power.Workload{Util: 1, Sensitivity: 2}, 8)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if !(light.Th1 > base.Th1+0.05) {
		t.Errorf("th1 of a light family %.3f, default %.3f: want it clearly higher", light.Th1, base.Th1)
	}
	if !(host.Th2 < base.Th2-0.02) {
		t.Errorf("th2 of a host-bound family %.3f, default %.3f: want it lower", host.Th2, base.Th2)
	}
	t.Logf("v100 ×8: default %.2f/%.2f, light %.2f/%.2f, host-bound %.2f/%.2f", base.Th1, base.Th2, light.Th1, light.Th2, host.Th1, host.Th2)
}

// TestDefaultToleranceFindsNoFlatRegion documents why FitTolerance exists:
// with calibrate's default tolerance the model's ramps have no stable
// region.
func TestDefaultToleranceFindsNoFlatRegion(t *testing.T) {
	for _, d := range power.Defaults() {
		for _, total := range []int{4, 8} {
			ramp := power.Ramp(power.DefaultNode(), d.GPUPower, power.DefaultWorkload(), total, power.RampSteps)
			samples := make([]calibrate.Sample, len(ramp))
			for i, s := range ramp {
				samples[i] = calibrate.Sample(s)
			}
			if th, err := calibrate.Fit(samples, calibrate.Options{}); !errors.Is(err, calibrate.ErrNoStableRegion) {
				t.Errorf("%s ×%d: default Fit gave %+v, %v; want ErrNoStableRegion", d.Name, total, th, err)
			}
		}
	}
}
