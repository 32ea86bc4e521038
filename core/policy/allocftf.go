package policy

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/lp"
	"github.com/gpusched/gpusched/core/model"
)

// ftfState is what finish-time fairness keeps per job between
// computations (Gavel's policies/finish_time_fairness.py).
type ftfState struct {
	isoTime float64 // time the work done so far would have taken in isolation
	prevRem float64 // remaining work at the last computation, -1 before
	prevIso float64 // isolated throughput then
}

// finishTime sets X by finish-time fairness (Gavel's
// finish_time_fairness_perf): minimise the largest
// ρ_j = (elapsed_j + rem_j / Σ_k T_jk·x_jk) / (iso_j + rem_j / I_j),
// elapsed_j being the time since j's submission, rem_j its remaining work,
// I_j its speed on an isolated 1/n share of every type (Gavel's isolated
// policy) and iso_j the time the work it has done would have taken there.
// For a fixed ρ the constraints are linear (Σ_k T_jk·x_jk ≥ need_j(ρ)),
// feasible iff the max-min level of T/need reaches 1: ρ is found by
// bisection over max-min programs.
//
// rem_j is the true remaining work with Oracle; otherwise an estimate
// (remainingEstimate).
func (a *Alloc) finishTime(s *model.State, now model.Time) {
	c := s.Cluster
	k := len(c.Types)
	var jobs []*model.Job
	for _, j := range a.tracked {
		st := a.jobs[j]
		st.x = make([]float64, k)
		for _, v := range st.speed {
			if v > 0 {
				jobs = append(jobs, j)
				break
			}
		}
	}
	n := len(jobs)
	if n == 0 {
		return
	}
	if !a.Oracle {
		done := make([]float64, n)
		for i, j := range jobs {
			done[i] = j.DoneAt(now) / slices.Max(a.jobs[j].speed)
		}
		a.surv.fit(a.finished, done)
	}
	since, expect, rem := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, j := range jobs {
		st := a.jobs[j]
		r := a.remaining(s, j, now)
		iso := isolated(st.speed, float64(st.gpus), c, n)
		f := &st.ftf
		if f.prevRem >= 0 && f.prevIso > 0 {
			f.isoTime += max(f.prevRem-r, 0) / f.prevIso
		}
		f.prevRem, f.prevIso = r, iso
		since[i] = (now - j.Spec.Submit).Seconds()
		expect[i] = f.isoTime + r/iso
		rem[i] = r
	}
	p := &lp.Problem{Jobs: n, Types: k, Fair: 1, Use: make([]bool, n*k), Rate: make([]float64, n*k),
		Size: make([]float64, n), Cap: make([]float64, k)}
	for t := range k {
		p.Cap[t] = float64(c.TypeGPUs(t))
	}
	for i, j := range jobs {
		p.Size[i] = float64(a.size(j))
		for t, v := range a.jobs[j].speed {
			p.Use[i*k+t] = v > 0
		}
	}
	x := a.ftfBisect(p, jobs, since, expect, rem)
	for i, j := range jobs {
		copy(a.jobs[j].x, x[i*k:(i+1)*k])
	}
}

// ftfBisect finds the smallest ρ whose needs are feasible and returns its
// allocation. need_j(ρ) = rem_j / (ρ·expect_j − since_j).
func (a *Alloc) ftfBisect(p *lp.Problem, jobs []*model.Job, since, expect, rem []float64) []float64 {
	k := p.Types
	lo := 0.0
	for i := range jobs {
		lo = max(lo, since[i]/expect[i])
	}
	level := func(rho float64) (float64, []float64) {
		for i, j := range jobs {
			need := rem[i] / (rho*expect[i] - since[i])
			for t, v := range a.jobs[j].speed {
				p.Rate[i*k+t] = v / need
			}
		}
		sol, err := a.solver.Solve(p)
		if err != nil && len(sol.X) != p.Jobs*p.Types {
			return 0, nil
		}
		return sol.T, sol.X
	}
	hi := lo + 1
	lv, best := level(hi)
	for lv < 1 && hi-lo < 1e9 {
		hi = lo + 4*(hi-lo)
		lv, best = level(hi)
	}
	if best == nil {
		return make([]float64, p.Jobs*k)
	}
	for range 40 {
		if hi-lo <= 1e-4*max(1, hi) {
			break
		}
		mid := (lo + hi) / 2
		if lv, x := level(mid); x != nil && lv >= 1 {
			hi, best = mid, x
		} else {
			lo = mid
		}
	}
	return best
}

// isolated is Gavel's isolated throughput: the job's speed on a 1/n share
// of each type's GPUs (divided by its GPU count, the shares scaled down to
// sum to at most 1).
func isolated(speed []float64, size float64, c *model.Cluster, n int) float64 {
	sum, thr := 0.0, 0.0
	for t := range speed {
		sum += float64(c.TypeGPUs(t)) / float64(n) / size
	}
	scale := 1 / max(sum, 1)
	for t, v := range speed {
		thr += v * float64(c.TypeGPUs(t)) / float64(n) / size * scale
	}
	return thr
}

// remaining is a job's remaining work for finish-time fairness: the truth
// with Oracle, else remainingEstimate.
func (a *Alloc) remaining(s *model.State, j *model.Job, now model.Time) float64 {
	if a.Oracle {
		return j.Remaining(now)
	}
	return a.remainingEstimate(j, now)
}

// remainingEstimate estimates a job's remaining work without reading its
// length: the expected remaining size E[S − d | S > d] of the size
// distribution learned so far (survival), d being the work j has done, both
// in seconds at j's best speed, converted back to j's work units.
func (a *Alloc) remainingEstimate(j *model.Job, now model.Time) float64 {
	best := slices.Max(a.jobs[j].speed)
	if best <= 0 {
		return math.Inf(1)
	}
	return a.surv.remaining(j.DoneAt(now)/best) * best
}
