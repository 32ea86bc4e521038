package forecast

import (
	"math"
	"slices"
	"time"
)

// Accuracy bounds.
const (
	// MaxPredictions is how many predictions Accuracy keeps per waiting
	// job: the first and the latest ones, thinned in between.
	MaxPredictions = 16
	// MaxOutcomes is how many outcomes it keeps (the latest).
	MaxOutcomes = 2000
)

// Prediction is one forecast of a waiting job's start, as served.
type Prediction struct {
	// At is when the forecast was made.
	At time.Time `json:"at"`
	// Start is the predicted start; P10 and P90 bound its range.
	Start time.Time `json:"start"`
	P10   time.Time `json:"p10"`
	P90   time.Time `json:"p90"`
}

// Outcome is a prediction compared with the job's actual start.
type Outcome struct {
	Job string `json:"job"`
	Prediction
	Actual time.Time `json:"actual"`
}

// Lead is how far ahead the prediction was made.
func (o *Outcome) Lead() time.Duration { return o.Actual.Sub(o.At) }

// Error is actual − predicted start: positive when the job started later
// than predicted.
func (o *Outcome) Error() time.Duration { return o.Actual.Sub(o.Start) }

// InRange reports whether the actual start lies within [P10, P90].
func (o *Outcome) InRange() bool { return !o.Actual.Before(o.P10) && !o.Actual.After(o.P90) }

// Good reports whether the error is within 10% of the lead or 5 s.
func (o *Outcome) Good() bool {
	e := o.Error().Abs()
	return e <= 5*time.Second || e <= o.Lead().Abs()/10
}

// Accuracy keeps the predictions of waiting jobs and, once they start,
// their outcomes. Its zero value is ready; it is not safe for concurrent
// use.
type Accuracy struct {
	// Pending are the predictions of jobs that have not started yet.
	Pending map[string][]Prediction `json:"pending,omitempty"`
	// Outcomes are the latest MaxOutcomes compared predictions.
	Outcomes []Outcome `json:"outcomes,omitempty"`
}

// Predict records a prediction for job; a prediction identical to the
// job's latest (the same forecast served again) is not recorded twice.
func (a *Accuracy) Predict(job string, p Prediction) {
	if a.Pending == nil {
		a.Pending = map[string][]Prediction{}
	}
	ps := a.Pending[job]
	if n := len(ps); n > 0 && ps[n-1].Start.Equal(p.Start) && ps[n-1].P10.Equal(p.P10) && ps[n-1].P90.Equal(p.P90) {
		return
	}
	if len(ps) >= MaxPredictions {
		ps = thin(ps)
	}
	a.Pending[job] = append(ps, p)
}

// thin halves the middle of a full list: the first prediction and every
// other one after it are kept, so that predictions of every lead time
// remain.
func thin(ps []Prediction) []Prediction {
	out := ps[:1]
	for i := 2; i < len(ps); i += 2 {
		out = append(out, ps[i])
	}
	return out
}

// Started turns job's pending predictions into outcomes against its
// actual start.
func (a *Accuracy) Started(job string, actual time.Time) {
	for _, p := range a.Pending[job] {
		a.Outcomes = append(a.Outcomes, Outcome{Job: job, Prediction: p, Actual: actual})
	}
	delete(a.Pending, job)
	if n := len(a.Outcomes); n > MaxOutcomes {
		a.Outcomes = slices.Delete(a.Outcomes, 0, n-MaxOutcomes)
	}
}

// Forget drops the pending predictions of a job that ended without
// starting (cancelled in the queue).
func (a *Accuracy) Forget(job string) { delete(a.Pending, job) }

// Clean drops what an Accuracy read from storage must not hold.
func (a *Accuracy) Clean() {
	for job, ps := range a.Pending {
		if len(ps) > MaxPredictions {
			a.Pending[job] = ps[len(ps)-MaxPredictions:]
		}
	}
	if n := len(a.Outcomes); n > MaxOutcomes {
		a.Outcomes = a.Outcomes[n-MaxOutcomes:]
	}
}

// Stats summarizes outcomes.
type Stats struct {
	// Jobs and Predictions count the started jobs and their predictions.
	Jobs, Predictions int
	// MeanAbsError, MedianAbsError and P90AbsError are over all
	// predictions; Bias is the mean error (positive: jobs start later
	// than predicted).
	MeanAbsError, MedianAbsError, P90AbsError, Bias time.Duration
	// InRange is the share of actual starts within [P10, P90]; Good the
	// share within 10% of the lead or 5 s.
	InRange, Good float64
}

// Bucket is the stats of the predictions made within a range of lead
// times [Min, Max) (Max 0: no bound).
type Bucket struct {
	Min, Max time.Duration
	Stats
}

// Summarize returns the stats of all outcomes and by lead time (under a
// minute, up to ten minutes, up to an hour, longer).
func (a *Accuracy) Summarize() (Stats, []Bucket) {
	edges := []time.Duration{0, time.Minute, 10 * time.Minute, time.Hour, 0}
	buckets := make([]Bucket, len(edges)-1)
	for i := range buckets {
		lo, hi := edges[i], edges[i+1]
		buckets[i] = Bucket{Min: lo, Max: hi, Stats: stats(a.Outcomes, func(o *Outcome) bool {
			l := o.Lead()
			return l >= lo && (hi == 0 || l < hi) || (lo == 0 && l < 0)
		})}
	}
	return stats(a.Outcomes, func(*Outcome) bool { return true }), buckets
}

// stats summarizes the outcomes that keep selects.
func stats(all []Outcome, keep func(*Outcome) bool) Stats {
	var s Stats
	var abs []float64
	jobs := map[string]bool{}
	var sum, bias float64
	inRange, good := 0, 0
	for i := range all {
		o := &all[i]
		if !keep(o) {
			continue
		}
		jobs[o.Job] = true
		e := o.Error().Seconds()
		abs = append(abs, math.Abs(e))
		sum += math.Abs(e)
		bias += e
		if o.InRange() {
			inRange++
		}
		if o.Good() {
			good++
		}
	}
	s.Jobs, s.Predictions = len(jobs), len(abs)
	if len(abs) == 0 {
		return s
	}
	n := float64(len(abs))
	slices.Sort(abs)
	s.MeanAbsError, s.Bias = seconds(sum/n), time.Duration(bias/n*float64(time.Second))
	s.MedianAbsError = seconds(abs[max(int(math.Ceil(0.5*n))-1, 0)])
	s.P90AbsError = seconds(abs[max(int(math.Ceil(0.9*n))-1, 0)])
	s.InRange, s.Good = float64(inRange)/n, float64(good)/n
	return s
}
