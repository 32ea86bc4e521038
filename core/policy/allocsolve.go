package policy

import (
	"math"

	"github.com/gpusched/gpusched/core/lp"
	"github.com/gpusched/gpusched/core/model"
)

// compute recomputes X for the tracked jobs, after their speeds in s
// (not looked at again while every tracked job's are s's: speedsIn).
func (a *Alloc) compute(s *model.State, now model.Time) {
	if a.speedsIn != s {
		a.sharedStale = true // rebuilt once below, not job by job
		for i, j := range a.tracked {
			a.speeds(s, j, a.states[i])
		}
		a.rebuildShared()
		a.speedsIn = s
	}
	switch a.Objective {
	case FIFOAlloc:
		a.fifoAllocate(s)
	case FinishTime:
		a.finishTime(s, now)
	case EstSRPT, Gittins:
		a.estSRPT(s, now)
	default:
		a.solveClasses(s)
	}
}

// allocClass is a set of interchangeable jobs: same speeds, GPU count and
// priority. By symmetry the programs have an optimum that gives each the
// same shares (and the interior-point method finds it), so the program is
// solved over classes: the class's variable y_ck is the sum of its jobs'
// shares, bounded by its size.
type allocClass struct {
	jobs  []*model.Job
	speed []float64
	size  float64
	w     float64 // priority weight
}

// classes groups the tracked jobs that can run somewhere into classes, in
// order of first appearance.
func (a *Alloc) classes() []*allocClass {
	var out []*allocClass
	index := map[string]int{}
	var key []byte
	for _, j := range a.tracked {
		st := a.jobs[j]
		st.x = make([]float64, len(st.speed))
		runs := false
		key = key[:0]
		key = appendUint64(key, uint64(st.gpus))
		key = appendUint64(key, uint64(weight(j)))
		if a.Gavel && a.Objective == MaxThroughput {
			key = appendUint64(key, uint64(j.Seq)) // every job its own row: see solveClasses
		}
		for _, v := range st.speed {
			runs = runs || v > 0
			key = appendUint64(key, math.Float64bits(v))
		}
		if !runs {
			continue
		}
		i, ok := index[string(key)]
		if !ok {
			i = len(out)
			index[string(key)] = i
			out = append(out, &allocClass{speed: st.speed, size: float64(st.gpus), w: float64(weight(j))})
		}
		out[i].jobs = append(out[i].jobs, j)
	}
	return out
}

// weight is a job's priority weight (Gavel's priority_weight): its
// priority, at least 1.
func weight(j *model.Job) int { return max(j.Spec.Priority, 1) }

// solveClasses solves MaxMin or MaxThroughput over classes and sets X.
//
// MaxMin is Gavel's max_min_fairness_perf: maximise the smallest
// Σ_k T_jk·x_jk·Size_j / (w_j·P_j), T_jk being job j's speed on type k and
// P_j its speed on an equal share of the cluster (Σ_k T_jk·Cap_k / ΣCap,
// Gavel's proportional policy). MaxThroughput maximises Σ T_jk·x_jk, T
// normalised by the job's best speed (with Gavel set: raw, as Gavel sums
// steps per second).
//
// With Gavel set, MaxThroughput's program has many optima: jobs of the same
// model and GPU count are worth the same, and any split of the GPUs among
// them is optimal. Gavel's solver (HiGHS, a simplex) returns a vertex, which
// gives whole shares to some of them; the interior-point method would split
// evenly. So each job gets its own row and a tie-breaker of at most
// gavelTieBreak (relative) that favours later arrivals: measured against
// Gavel (docs/FIDELITY.md), that is the vertex HiGHS picks more often than
// not (favouring earlier arrivals, or none, is 9–18 % off on the heavy
// traces; this is within 5 %).
func (a *Alloc) solveClasses(s *model.State) {
	cls := a.classes()
	if len(cls) == 0 {
		return
	}
	k := len(s.Cluster.Types)
	p := a.problem(s, len(cls))
	total := 0.0
	for t := range k {
		total += p.Cap[t]
	}
	for c, cl := range cls {
		n := float64(len(cl.jobs))
		p.Row[c], p.Size[c] = n, cl.size
		prop, best := 0.0, 0.0
		for t, v := range cl.speed {
			prop += v * p.Cap[t] / total
			best = max(best, v)
		}
		for t, v := range cl.speed {
			i := c*k + t
			p.Use[i] = v > 0
			switch {
			case a.Objective == MaxMin:
				p.Rate[i] = v * cl.size / (cl.w * prop) / n
			case a.Gavel:
				p.Value[i] = v * (1 + gavelTieBreak*float64(c+1)/float64(len(cls)))
			default:
				p.Value[i] = v / best
			}
		}
	}
	a.setX(p, cls)
}

// gavelTieBreak is the largest relative value Gavel-mode MaxThroughput adds
// to break ties between equal jobs (solveClasses).
const gavelTieBreak = 1e-4

// problem returns an allocation program for n rows on s's cluster, with
// Rate (MaxMin) or Value allocated.
func (a *Alloc) problem(s *model.State, n int) *lp.Problem {
	k := len(s.Cluster.Types)
	p := &lp.Problem{Jobs: n, Types: k, Use: make([]bool, n*k), Row: make([]float64, n),
		Size: make([]float64, n), Cap: make([]float64, k)}
	for t := range k {
		p.Cap[t] = float64(s.Cluster.TypeGPUs(t))
	}
	if a.Objective == MaxThroughput {
		p.Value = make([]float64, n*k)
	} else {
		p.Fair, p.Rate = 1, make([]float64, n*k)
	}
	return p
}

// setX solves p (rows: classes) and gives every job of a class an equal
// part of the class's shares. A solve that stops short of its tolerance
// still returns a feasible allocation, which is used.
func (a *Alloc) setX(p *lp.Problem, cls []*allocClass) {
	sol, err := a.solver.Solve(p)
	if err != nil && len(sol.X) != p.Jobs*p.Types {
		return // invalid program (cannot happen with checked speeds): X stays 0
	}
	k := p.Types
	for c, cl := range cls {
		n := float64(len(cl.jobs))
		for _, j := range cl.jobs {
			x := a.jobs[j].x
			for t := range k {
				x[t] = sol.X[c*k+t] / n
			}
		}
	}
}

// appendUint64 appends v's eight bytes to b (a map key).
func appendUint64(b []byte, v uint64) []byte {
	for i := range 8 {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}
