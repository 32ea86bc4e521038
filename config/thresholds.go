package config

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/power"
)

// ModelThresholds calibrates a node shape of the power model — the node's
// power, its GPU type's, an algorithm type's workload and the node's GPU
// count — as seed 002 calibrates a device: calibrate.Fit, with
// power.FitTolerance, on the model's calibration ramp (power.Ramp,
// power.RampSteps steps). It also returns the curve's stable level, the
// lowest energy per unit of work on the ramp (joules per GPU-second at full
// speed). The simulator derives its energy table from it, and the
// scheduler service its defaults before it has learned a node's
// thresholds from readings.
//
// A modelled curve without a stable region — strong contention makes it a
// V, falling to its lowest energy per unit of work and rising at once —
// gets th1 = th2 = the load of that lowest point: the node is in state 1
// up to its most efficient load and in state 3 beyond it, which is what
// the seed's three regions become when the middle one shrinks to a point.
func ModelThresholds(node power.NodePower, gpu power.GPUPower, w power.Workload, gpus int) (placer.LoadThresholds, float64, error) {
	ramp := power.Ramp(node, gpu, w, gpus, power.RampSteps)
	samples := make([]calibrate.Sample, len(ramp))
	for i, s := range ramp {
		samples[i] = calibrate.Sample{Load: s.Load, PowerW: s.PowerW, Throughput: s.Throughput}
	}
	best, level := lowestEnergyLoad(ramp)
	th, err := calibrate.Fit(samples, calibrate.Options{Tolerance: power.FitTolerance})
	if errors.Is(err, calibrate.ErrNoStableRegion) {
		return placer.LoadThresholds{Th1: best, Th2: best}, level, nil
	}
	if err != nil {
		return placer.LoadThresholds{}, 0, fmt.Errorf("calibrate: %w", err)
	}
	return placer.LoadThresholds{Th1: th.Th1, Th2: th.Th2}, level, nil
}

// lowestEnergyLoad returns the load of the ramp's sample with the lowest
// energy per unit of work (power ÷ throughput), the first among equals, and
// that energy; load 1 and energy 0 when no sample does work.
func lowestEnergyLoad(ramp []power.Sample) (load, energy float64) {
	best, load := math.Inf(1), 1.0
	for _, s := range ramp {
		if s.Throughput <= 0 {
			continue
		}
		if e := s.PowerW / s.Throughput; e < best {
			best, load = e, s.Load
		}
	}
	if math.IsInf(best, 1) {
		return load, 0
	}
	return load, best
}
