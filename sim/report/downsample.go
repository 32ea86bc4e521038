package report

import (
	"gonum.org/v1/plot/plotter"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/metrics"
)

// downsample turns samples (change points in time order, each holding until
// the next) into at most limit step points, x in seconds. Up to limit
// samples are returned as they are. Beyond that, the span from the first to
// the last sample is cut into limit−1 equal-width buckets (edges on whole
// milliseconds), each given the time-weighted mean of value over the bucket,
// and a final point at the last sample closes the last step.
func downsample(samples []metrics.Sample, limit int, value func(metrics.Sample) float64) plotter.XYs {
	n := len(samples)
	if n <= limit {
		xys := make(plotter.XYs, n)
		for i, s := range samples {
			xys[i] = plotter.XY{X: s.T.Seconds(), Y: value(s)}
		}
		return xys
	}
	last := samples[n-1]
	first := samples[0].T
	span := int64(last.T - first)
	buckets := int64(max(limit-1, 1))
	if span == 0 {
		return plotter.XYs{{X: last.T.Seconds(), Y: value(last)}}
	}
	// edge returns the offset from first of the start of bucket k.
	edge := func(k int64) int64 { return span * k / buckets }
	sums := make([]float64, buckets)
	for i := range n - 1 {
		a, b := int64(samples[i].T-first), int64(samples[i+1].T-first)
		v := value(samples[i])
		// Invariant: edge(k) <= a < b <= edge(buckets), so k < buckets.
		for k := a * buckets / span; a < b; k++ {
			end := min(b, edge(k+1))
			sums[k] += v * float64(end-a)
			a = end
		}
	}
	xys := make(plotter.XYs, 0, buckets+1)
	for k := range buckets {
		lo, hi := edge(k), edge(k+1)
		if hi > lo {
			x := (first + model.Time(lo)).Seconds()
			xys = append(xys, plotter.XY{X: x, Y: sums[k] / float64(hi-lo)})
		}
	}
	return append(xys, plotter.XY{X: last.T.Seconds(), Y: value(last)})
}
