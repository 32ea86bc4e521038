package policy

import (
	"cmp"
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
	obs  []observation
}

type observation struct {
	v     float64
	event bool
}

// minRemaining is the least expected remaining size: a minute.
const minRemaining = 60

// fit estimates S from finished sizes and active jobs' service.
func (s *survival) fit(finished, attained []float64) {
	s.obs = s.obs[:0]
	for _, f := range finished {
		s.obs = append(s.obs, observation{f, true})
	}
	for _, a := range attained {
		s.obs = append(s.obs, observation{a, false})
	}
	slices.SortFunc(s.obs, func(x, y observation) int {
		// at equal values events come first: a censored job of that size
		// was still at risk
		if c := cmp.Compare(x.v, y.v); c != 0 {
			return c
		}
		if x.event == y.event {
			return 0
		}
		if x.event {
			return -1
		}
		return 1
	})
	s.at, s.surv = append(s.at[:0], 0), append(s.surv[:0], 1)
	n, sv := len(s.obs), 1.0
	s.end = 0
	for i, o := range s.obs {
		s.end = max(s.end, o.v)
		if o.event {
			sv *= 1 - 1/float64(n-i)
			s.at, s.surv = append(s.at, o.v), append(s.surv, sv)
		}
	}
	m := len(s.at)
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
