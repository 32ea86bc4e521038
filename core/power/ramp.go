package power

// Sample is one reading of a synthetic calibration ramp: a node's load and,
// at that load, its power draw and the work it does per second. It has the
// fields of calibrate.Sample, which the shell converts it to (power is part
// of the pure core and does not import calibrate).
type Sample struct {
	// Load is the node's load, busy GPUs ÷ node GPUs, in [0, 1].
	Load float64
	// PowerW is the node's draw in watts.
	PowerW float64
	// Throughput is the work done per second, in GPU-seconds at full speed
	// per second: load·total·speed.
	Throughput float64
}

// Ramp synthesizes the calibration ramp of seed 002 (claim 5) from the
// power model: steps+1 samples at loads 0, 1/steps, ..., 1 of a node of
// total GPUs running jobs of w. The load rises continuously, as the seed's
// test task raises it, so a sample may have a fractional number of busy
// GPUs. The sample at load 0 is an idle reading (throughput 0). Ramp returns
// nil when total or steps is below 1.
func Ramp(node NodePower, gpu GPUPower, w Workload, total, steps int) []Sample {
	if total < 1 || steps < 1 {
		return nil
	}
	out := make([]Sample, 0, steps+1)
	for k := range steps + 1 {
		load := float64(k) / float64(steps)
		busy := load * float64(total)
		out = append(out, Sample{
			Load:       load,
			PowerW:     watts(node, gpu, busy, float64(total), w.Util),
			Throughput: busy * w.Speed(node, load),
		})
	}
	return out
}
