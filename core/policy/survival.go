package policy

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// survival is a Kaplan–Meier estimate of the distribution of job sizes
// (seconds at a job's best speed), learned online from what a scheduler
// sees: the sizes of the jobs that finished (events) and the service of the
// jobs still active (censored: their size is at least that). Learning only
// from finished jobs would be biased towards short jobs, which finish
// first; the censored observations correct for it.
//
// remaining gives E[S − a | S > a], the expected remaining size of a job
// that has received a. Beyond the largest observation M (finished or still
// running) the estimate knows nothing; it assumes that a job that got there
// is expected to run as long again (∫_M^∞ S(x) dx = S(M)·M), and a job
// beyond M likewise (E[S − a | S > a] = a), the guess of
// least-attained-service schedulers. Before any job has finished S is 1 up
// to M: every job is expected to reach M and go on as long again.
// (Trusting the estimate only up to the last finished size instead did
// worse: docs/EXPERIMENTS.md.)
type survival struct {
	at   []float64 // event sizes, ascending, after a leading 0
	surv []float64 // S just after each event (1 at 0)
	tail []float64 // ∫_{at[i]}^∞ S(x) dx
	end  float64   // the largest observation
	// fin is the finished sizes seen so far, ascending: fit merges the
	// new ones in rather than sorting them all again every round.
	fin    []float64
	merged []float64 // addFinished's scratch, swapped with fin
	live   []float64 // fit's scratch: the active jobs' service, ascending
	// keep[r] is 1 − 1/r, the share of r jobs at risk that an event
	// leaves: fit's every factor, worked out once per r rather than
	// divided afresh every round (the same value).
	keep []float64
}

// minRemaining is the least expected remaining size: a minute.
const minRemaining = 60

// fit estimates S from finished sizes and active jobs' service. finished
// only grows between calls of a run (forget starts a new one).
//
// The observations are the finished sizes (events) and the service of the
// active jobs (censored), by size, events first at equal sizes: a censored
// job of that size was still at risk. At the k-th finished size, fin[k],
// the jobs at risk are those laid out from it on: n − k − c of the n
// observations, c the censored ones below fin[k].
func (s *survival) fit(finished, attained []float64) {
	s.addFinished(finished)
	s.live = append(s.live[:0], attained...)
	slices.Sort(s.live) // as SortFunc with cmp.Compare (the same pdqsort), faster
	s.end = s.largest()
	m := len(s.fin) + 1
	s.at, s.surv = slices.Grow(s.at[:0], m)[:m], slices.Grow(s.surv[:0], m)[:m]
	s.at[0], s.surv[0] = 0, 1
	copy(s.at[1:], s.fin)
	s.steps()
	s.tail = slices.Grow(s.tail[:0], m)[:m]
	last := s.surv[m-1]
	acc := last*(s.end-s.at[m-1]) + last*s.end // the last step, then the tail guess
	for i := m - 1; i >= 0; i-- {
		s.tail[i] = acc
		if i > 0 {
			acc += s.surv[i-1] * (s.at[i] - s.at[i-1])
		}
	}
}

// steps sets surv after each event from fin and live (fit). Without a
// NaN among them (cmp.Compare sorts NaN first), cmp.Compare(v, x) > 0 is
// v > x, which the loop tests without Compare's NaN tests.
func (s *survival) steps() {
	fin, live, surv := s.fin, s.live, s.surv[1:len(s.fin)+1]
	n, c, sv := len(fin)+len(live), 0, 1.0
	keep := s.keeps(n)
	if len(fin) > 0 && math.IsNaN(fin[0]) || len(live) > 0 && math.IsNaN(live[0]) {
		for k, v := range fin {
			for c < len(live) && cmp.Compare(v, live[c]) > 0 {
				c++
			}
			sv *= keep[n-k-c] // n−k−c ≥ len(fin)−k ≥ 1 jobs at risk
			surv[k] = sv
		}
		return
	}
	for k, v := range fin {
		for c < len(live) && v > live[c] {
			c++
		}
		sv *= keep[n-k-c]
		surv[k] = sv
	}
}

// keeps returns s.keep up to n jobs at risk, extended as needed.
func (s *survival) keeps(n int) []float64 {
	if len(s.keep) == 0 {
		s.keep = append(s.keep, math.Inf(-1)) // 1 − 1/0, never read
	}
	for r := len(s.keep); r <= n; r++ {
		s.keep = append(s.keep, 1-1/float64(r))
	}
	return s.keep
}

// largest returns the largest observation, at least 0: with both lists
// ascending, the last of each. cmp.Compare sorts NaN first; with a NaN
// the result is NaN, whose bits depend on the order max met the values
// in, so that case folds them all in the order of the observations (events
// first at equal sizes), as fit did when it laid them out in one list.
func (s *survival) largest() float64 {
	end := 0.0
	if len(s.fin) > 0 && math.IsNaN(s.fin[0]) || len(s.live) > 0 && math.IsNaN(s.live[0]) {
		i, k := 0, 0
		for i < len(s.fin) || k < len(s.live) {
			if k == len(s.live) || i < len(s.fin) && cmp.Compare(s.fin[i], s.live[k]) <= 0 {
				end, i = max(end, s.fin[i]), i+1
			} else {
				end, k = max(end, s.live[k]), k+1
			}
		}
		return end
	}
	for _, v := range [2][]float64{s.fin, s.live} {
		if len(v) > 0 {
			end = max(end, v[len(v)-1])
		}
	}
	return end
}

// addFinished merges the sizes of finished that fit has not seen into
// s.fin, keeping it ascending.
func (s *survival) addFinished(finished []float64) {
	if len(finished) < len(s.fin) {
		s.fin = s.fin[:0] // a new run
	}
	seen := len(s.fin)
	if seen == len(finished) {
		return
	}
	fresh := append(s.live[:0], finished[seen:]...) // live is free until fit fills it
	slices.SortFunc(fresh, cmp.Compare[float64])
	s.merged = mergeAscending(s.merged[:0], s.fin, fresh)
	s.fin, s.merged = s.merged, s.fin
	s.live = fresh[:0]
}

// mergeAscending appends to dst the values of a and b, both ascending, in
// ascending order.
func mergeAscending(dst, a, b []float64) []float64 {
	i, k := 0, 0
	for i < len(a) && k < len(b) {
		if cmp.Compare(a[i], b[k]) <= 0 {
			dst = append(dst, a[i])
			i++
		} else {
			dst = append(dst, b[k])
			k++
		}
	}
	return append(append(dst, a[i:]...), b[k:]...)
}

// forget drops the finished sizes seen (a new run).
func (s *survival) forget() { s.fin = s.fin[:0] }

// remaining returns E[S − a | S > a], at least minRemaining.
func (s *survival) remaining(a float64) float64 {
	i := sort.SearchFloat64s(s.at, a) - 1 // last event strictly below a
	if i < 0 {
		i = 0
	}
	sa := s.surv[i]
	if sa <= 0 || a >= s.end {
		return max(a, minRemaining)
	}
	var integ float64
	if i+1 < len(s.at) {
		integ = sa*(s.at[i+1]-a) + s.tail[i+1]
	} else {
		integ = sa*(s.end-a) + sa*s.end
	}
	return max(integ/sa, minRemaining)
}

// quantile returns the smallest finished size x with P(S ≤ x) ≥ p by the
// estimate, and false when the estimate does not reach p (too few jobs
// finished yet).
func (s *survival) quantile(p float64) (float64, bool) {
	for i := 1; i < len(s.surv); i++ {
		if 1-s.surv[i] >= p {
			return s.at[i], true
		}
	}
	return 0, false
}
