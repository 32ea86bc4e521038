package report

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/metrics"
)

// Points of the HTML report's charts.
const (
	// htmlBuckets is the number of time buckets of the time series.
	htmlBuckets = 1000
	// cdfPoints is the number of points of a JCT CDF.
	htmlCDFPoints = 400
)

// bucketMeans cuts [t0, t1] into n equal buckets and returns each
// bucket's time-weighted mean of value over samples (change points, each
// holding until the next; the last until end), NaN where the run has no
// sample (before its first, after end).
func bucketMeans(samples []metrics.Sample, end, t0, t1 model.Time, n int, value func(metrics.Sample) float64) []float64 {
	out := make([]float64, n)
	span := float64(t1 - t0)
	sums := make([]float64, n)
	cover := make([]float64, n)
	for i, s := range samples {
		a, b := s.T, end
		if i+1 < len(samples) {
			b = samples[i+1].T
		}
		a, b = max(a, t0), min(b, t1)
		if b <= a || span <= 0 {
			continue
		}
		v := value(s)
		for k := int(float64(a-t0) / span * float64(n)); k < n; k++ {
			lo := t0 + model.Time(span*float64(k)/float64(n))
			hi := t0 + model.Time(span*float64(k+1)/float64(n))
			if lo >= b {
				break
			}
			d := float64(min(b, hi) - max(a, lo))
			if d > 0 {
				sums[k] += v * d
				cover[k] += d
			}
		}
	}
	for k := range out {
		out[k] = math.NaN()
		if cover[k] > 0 {
			out[k] = sums[k] / cover[k]
		}
	}
	return out
}

// jcts returns the sorted JCTs (seconds) of the completed jobs.
func jcts(recs []metrics.JobRecord) []float64 {
	var out []float64
	for i := range recs {
		if recs[i].Completed() {
			out = append(out, recs[i].JCT().Seconds())
		}
	}
	slices.Sort(out)
	return out
}

// cdfGrid returns n x values spanning every run's JCTs: logarithmic when
// they are all positive and span more than two decades, else linear.
func cdfGrid(all [][]float64, n int) ([]float64, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, js := range all {
		if len(js) > 0 {
			lo, hi = min(lo, js[0]), max(hi, js[len(js)-1])
		}
	}
	if math.IsInf(lo, 1) {
		return nil, false
	}
	logX := lo > 0 && hi > lo*pow10(logDecades)
	xs := make([]float64, n)
	for i := range xs {
		f := float64(i) / float64(n-1)
		if logX {
			xs[i] = math.Exp(math.Log(lo) + f*(math.Log(hi)-math.Log(lo)))
		} else {
			xs[i] = lo + f*(hi-lo)
		}
	}
	return xs, logX
}

// cdfAt returns the fraction of sorted not above each x.
func cdfAt(sorted, xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		k, _ := slices.BinarySearch(sorted, math.Nextafter(x, math.Inf(1)))
		if len(sorted) > 0 {
			out[i] = float64(k) / float64(len(sorted))
		}
	}
	return out
}
