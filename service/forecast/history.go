package forecast

import (
	"math"
	"slices"
	"time"
)

// History bounds.
const (
	// MaxRatios is how many length ratios History keeps per class.
	MaxRatios = 500
	// MaxUserRuns is how many run times it keeps per user, MaxRuns over
	// all users.
	MaxUserRuns = 50
	MaxRuns     = 500
	// MaxUsers bounds the users it remembers (the least recently seen
	// are forgotten).
	MaxUsers = 1000
	// priorWeight is how many finished jobs the prior spread counts as.
	priorWeight = 5
	// minSigma is the least spread of a learned class: no forecast is
	// certain.
	minSigma = 0.05
)

// Spread is the uncertainty of one class of lengths: the run time of a job
// is its estimated length times exp(N(Mu, Sigma²)).
type Spread struct {
	Mu, Sigma float64
	// Samples is the number of finished jobs behind it (0: the prior).
	Samples int
}

// Prior returns the spread assumed for a class before any job of it has
// finished: lengths from steps at a measured speed are good to about 20%,
// at the matrix's speed to about 30%, time limits and histories to about
// 60% (a time limit is an upper bound), and a default length to a factor
// of e.
func Prior(c Class) Spread {
	switch c {
	case ClassMeasured:
		return Spread{Sigma: 0.2}
	case ClassMatrix:
		return Spread{Sigma: 0.3}
	case ClassDefault:
		return Spread{Sigma: 1}
	}
	return Spread{Sigma: 0.6}
}

// History is what the forecast learns from finished jobs: per length class
// the log-ratios of actual run times to estimated lengths, and the run
// times of successful jobs per user and overall. Its zero value is empty
// and ready; it is not safe for concurrent use.
type History struct {
	Ratios map[Class][]float64 `json:"ratios,omitempty"`
	Users  map[string]UserRuns `json:"users,omitempty"`
	// Runs are the last run times (seconds) of successful jobs.
	Runs []float64 `json:"runs,omitempty"`
	// Seen counts the run times observed, to order the users by recency.
	Seen int64 `json:"seen,omitempty"`
}

// UserRuns are one user's last run times (seconds) and when they were
// last seen (History.Seen's count).
type UserRuns struct {
	Runs []float64 `json:"runs"`
	Seen int64     `json:"seen"`
}

// ObserveRatio records that a job whose length of class c was estimated at
// est ran for actual. Non-positive or non-finite values are ignored.
func (h *History) ObserveRatio(c Class, est, actual time.Duration) {
	if est <= 0 || actual <= 0 {
		return
	}
	if h.Ratios == nil {
		h.Ratios = map[Class][]float64{}
	}
	h.Ratios[c] = push(h.Ratios[c], math.Log(actual.Seconds()/est.Seconds()), MaxRatios)
}

// ObserveRun records the run time of a successful job of user ("" for
// none).
func (h *History) ObserveRun(user string, d time.Duration) {
	if d <= 0 {
		return
	}
	h.Seen++
	h.Runs = push(h.Runs, d.Seconds(), MaxRuns)
	if user == "" {
		return
	}
	if h.Users == nil {
		h.Users = map[string]UserRuns{}
	}
	u := h.Users[user]
	h.Users[user] = UserRuns{Runs: push(u.Runs, d.Seconds(), MaxUserRuns), Seen: h.Seen}
	if len(h.Users) > MaxUsers {
		h.forgetOldestUser()
	}
}

func (h *History) forgetOldestUser() {
	oldest, at := "", int64(math.MaxInt64)
	for name, u := range h.Users {
		if u.Seen < at || (u.Seen == at && name < oldest) {
			oldest, at = name, u.Seen
		}
	}
	delete(h.Users, oldest)
}

// UserMedian returns the median run time of user's recent successful jobs
// and their number (0, 0 without any).
func (h *History) UserMedian(user string) (time.Duration, int) {
	if user == "" {
		return 0, 0
	}
	r := h.Users[user].Runs
	return median(r), len(r)
}

// AllMedian returns the median run time of all recent successful jobs and
// their number.
func (h *History) AllMedian() (time.Duration, int) { return median(h.Runs), len(h.Runs) }

// Spread returns the uncertainty of class c: the mean and standard
// deviation of its log-ratios, shrunk towards Prior(c) as if the prior
// were priorWeight more samples, the deviation at least minSigma once
// learned.
func (h *History) Spread(c Class) Spread {
	p := Prior(c)
	r := h.Ratios[c]
	n := float64(len(r))
	if n == 0 {
		return p
	}
	mean := 0.0
	for _, x := range r {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range r {
		ss += (x - mean) * (x - mean)
	}
	w := float64(priorWeight)
	mu := (n*mean + w*p.Mu) / (n + w)
	sigma := math.Sqrt((ss + w*p.Sigma*p.Sigma) / (n + w))
	return Spread{Mu: mu, Sigma: max(sigma, minSigma), Samples: len(r)}
}

// Spreads returns the spread of every class.
func (h *History) Spreads() map[Class]Spread {
	out := make(map[Class]Spread, len(Classes()))
	for _, c := range Classes() {
		out[c] = h.Spread(c)
	}
	return out
}

// Clean drops what a History read from storage must not hold: unknown
// classes, non-finite values and lists beyond their bounds.
func (h *History) Clean() {
	for c, r := range h.Ratios {
		if !slices.Contains(Classes(), c) {
			delete(h.Ratios, c)
			continue
		}
		h.Ratios[c] = finite(r, MaxRatios, false)
	}
	h.Runs = finite(h.Runs, MaxRuns, true)
	for name, u := range h.Users {
		u.Runs = finite(u.Runs, MaxUserRuns, true)
		h.Users[name] = u
	}
	for len(h.Users) > MaxUsers {
		h.forgetOldestUser()
	}
}

// finite keeps the finite values of xs (positive ones only with pos), the
// last max of them.
func finite(xs []float64, limit int, pos bool) []float64 {
	out := xs[:0]
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && (!pos || x > 0) {
			out = append(out, x)
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

// push appends x, keeping the last limit values.
func push(xs []float64, x float64, limit int) []float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return xs
	}
	xs = append(xs, x)
	if len(xs) > limit {
		xs = slices.Delete(xs, 0, len(xs)-limit)
	}
	return xs
}

// median returns the median of seconds xs as a duration (0 for none).
func median(xs []float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return seconds(m)
}
