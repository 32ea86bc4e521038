package policy

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/lp"
	"github.com/gpusched/gpusched/core/model"
)

// estSRPT sets X by EstSRPT or Gittins (see the Objectives): per job a
// weight of E[rem]^−Exponent, E[rem] being its expected remaining time at
// its best speed (true remaining with Oracle), or its Gittins index, and
// the program maximises the sum of weighted normalised throughputs. The weight makes the jobs expected to
// finish soonest go first, as SRPT would with known sizes; the program
// gives them the types where they run best relative to the others, and
// fills the rest of the cluster with the next ones. The gang probe
// (Alloc.GangProbe) and the priority backlog (Alloc.PriorityBacklog) then
// adjust the weights; with Alloc.MoveCost, Gittins scales a running job's
// values off its type by what a move would cost it (moveFactor).
func (a *Alloc) estSRPT(s *model.State, now model.Time) {
	k := len(s.Cluster.Types)
	n := len(a.tracked)
	if n == 0 {
		return
	}
	if a.Objective == Gittins && a.fitted == s {
		return // X is bestFits's of the last round, on the same jobs and speeds (fitted)
	}
	a.fitted = nil
	if a.Objective == Gittins && a.bestFits(s) {
		a.fitted = s
		return // bestFits reads no service: done is not needed
	}
	a.done, a.best = slices.Grow(a.done[:0], n)[:n], slices.Grow(a.best[:0], n)[:n]
	done, best := a.done, a.best
	for i, st := range a.states {
		best[i] = st.best
	}
	for i, j := range a.tracked {
		done[i] = 0
		if best[i] > 0 {
			done[i] = j.DoneAt(now) / best[i]
		}
	}
	if !a.Oracle {
		a.surv.fit(a.finished, done)
	}
	if a.Objective == Gittins {
		a.curve.build(&a.surv)
		clear(a.indexes)
	}
	exp := a.Exponent
	if exp <= 0 {
		exp = DefaultExponent
	}
	beta := a.priorityPower(s, best)
	a.beta = beta
	probe := a.probe(beta)
	p := a.sizedProgram(n, k)
	adv := a.advantageOn(beta)
	for t := range k {
		p.Cap[t] = float64(s.Cluster.TypeGPUs(t))
	}
	for i, j := range a.tracked {
		st := a.states[i]
		st.clearX(k)
		st.fitX = false
		st.index, st.probing = 0, false
		p.Size[i] = float64(st.gpus)
		if best[i] <= 0 {
			continue
		}
		w := a.value(j, st.gpus, done[i], best[i], now, exp, probe)
		st.index, st.probing = w, done[i] < probe
		w = flatten(w, st.gpus, beta)
		if adv {
			w *= math.Pow(advantage(st.speed), a.AdvantageEven)
		}
		st.weight = w
		off, cur := a.moveFactor(s, j, done[i])
		for t, v := range st.speed {
			p.Use[i*k+t] = v > 0
			p.Value[i*k+t] = w * a.relSpeed(v/best[i])
			if cur >= 0 && t != cur {
				p.Value[i*k+t] *= off
			}
		}
	}
	sol, err := a.solver.Solve(p)
	if err != nil && len(sol.X) != n*k {
		return
	}
	for i, st := range a.states {
		copy(st.x, sol.X[i*k:(i+1)*k])
	}
}

// value returns j's value per unit of speed in the program before the
// priority backlog flattens it: its Gittins index, or esrpt's expected
// remaining time (the true one for an oracle) to the power −exp; a gang
// in its probe (done below probe) counts once per GPU.
func (a *Alloc) value(j *model.Job, gpus int, done, best float64, now model.Time, exp, probe float64) float64 {
	var w float64
	if a.Objective == Gittins {
		w = a.gittinsOnce(done)
	} else {
		rem := j.Remaining(now) / best
		if !a.Oracle {
			rem = a.surv.remaining(done)
		}
		w = math.Pow(max(rem, minRemaining), -exp)
	}
	if gpus > 1 && done < probe {
		w *= float64(gpus)
	}
	return w
}

// sizedProgram returns a.program for n jobs on k types, its slices reused
// when large enough: Use and Value all false and 0 (what a new program
// has: a job that runs nowhere sets neither), Size and Cap to be written.
func (a *Alloc) sizedProgram(n, k int) *lp.Problem {
	p := &a.program
	p.Jobs, p.Types = n, k
	p.Use, p.Value = grown(p.Use, n*k), grown(p.Value, n*k)
	clear(p.Use)
	clear(p.Value)
	p.Size, p.Cap = grown(p.Size, n), grown(p.Cap, k)
	return p
}

// grown returns b with length n, in a new array (with room for a quarter
// more) when b's is too small; the values are whatever b held.
func grown[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n, n+n/4)
	}
	return b[:n]
}

// clearX sets st.x to k zeros, in place when it has k entries (no one
// else holds it; -0 is written over too).
func (st *allocJob) clearX(k int) {
	if len(st.x) != k {
		st.x = make([]float64, k)
		return
	}
	for t, x := range st.x {
		if math.Float64bits(x) != 0 {
			st.x[t] = 0
		}
	}
}

// probe returns the service below which a multi-GPU job is probed (see
// Alloc.GangProbe) when the priority backlog's power is beta: the
// probeQuantile of the learned sizes; 0 without a probe, with the oracle,
// or while the estimate does not reach it.
func (a *Alloc) probe(beta float64) float64 {
	if a.GangProbe <= 0 || a.Oracle {
		return 0
	}
	q, _ := a.surv.quantile(a.probeQuantile(beta))
	return q
}

// probeQuantile returns the gang probe's quantile at the priority
// backlog's power beta: the light quantile (probeLight: GangProbeLight, or
// GangProbeEven) at 0, GangProbe at 1, linear in between (GangProbe alone
// without a light quantile).
func (a *Alloc) probeQuantile(beta float64) float64 {
	light := a.probeLight()
	if light <= 0 {
		return a.GangProbe
	}
	return light + (a.GangProbe-light)*beta
}

// gittins returns the Gittins index of a job that has done a seconds at its
// best speed; where the learned curve knows nothing (no job finished yet,
// or a beyond every size seen) it falls back to 1/E[rem] (survival).
func (a *Alloc) gittins(done float64) float64 {
	if g, ok := a.curve.index(done); ok {
		return max(g, 1/a.surv.remaining(done))
	}
	return 1 / a.surv.remaining(done)
}

// gittinsOnce is gittins, computed once per service value until the curve
// is built again (jobs that have not run yet all share one).
func (a *Alloc) gittinsOnce(done float64) float64 {
	if g, ok := a.indexes[done]; ok {
		return g
	}
	g := a.gittins(done)
	if a.indexes == nil {
		a.indexes = map[float64]float64{}
	}
	a.indexes[done] = g
	return g
}

// relSpeed returns what a relative speed r (a job's speed on a type over
// its best) is worth in EstSRPT's and Gittins's program:
// r^SpeedExponent, r itself when SpeedExponent is 0 or 1.
func (a *Alloc) relSpeed(r float64) float64 {
	if a.SpeedExponent <= 0 || a.SpeedExponent == 1 || r <= 0 {
		return r
	}
	return math.Pow(r, a.SpeedExponent)
}

// bestFits sets X without the program when every tracked job can have the
// type on which it runs fastest (the first in a.order among equals) for
// the whole round: no type is asked for more GPUs than it has. Then each
// job reaching its best speed is the program's optimum whatever the
// weights, and neither the size distribution nor the weights are computed
// (they are left at 0). It reports whether it did; with Philly's trace on
// a large cluster nearly every round is such a round (docs/BENCHMARKS.md,
// issue 29).
//
// The GPUs asked for per best type are a.demand, kept as jobs come, go and
// change speeds (speeds): with no negative GPU count among them, some
// type's running sum over the jobs exceeds its GPUs exactly when its total
// does. A job whose row is bestFits's already (allocJob.fitX) is not
// written again.
func (a *Alloc) bestFits(s *model.State) bool {
	k := len(s.Cluster.Types)
	if a.negative > 0 {
		if !a.fitsSummed(s) {
			return false
		}
	} else {
		for t, n := range a.demand {
			if n > s.Cluster.TypeGPUs(t) {
				return false
			}
		}
	}
	for _, st := range a.states {
		if st.fitX {
			continue
		}
		if len(st.x) == k {
			for t, x := range st.x { // no one else holds it: X is rebuilt in place
				if math.Float64bits(x) != 0 { // -0 too, as clear would
					st.x[t] = 0 // (not clear: a call per job costs more than k tests)
				}
			}
		} else {
			st.x = make([]float64, k)
		}
		st.weight = 0
		if st.best > 0 {
			st.x[st.bestT] = 1
		}
		st.fitX = true
	}
	return true
}

// fitsSummed is bestFits's test summed job by job: no type is asked for
// more GPUs than it has at any point of the sum.
func (a *Alloc) fitsSummed(s *model.State) bool {
	clear(a.remain)
	for _, st := range a.states {
		if st.best <= 0 {
			continue
		}
		t := st.bestT
		if a.remain[t] += st.gpus; a.remain[t] > s.Cluster.TypeGPUs(t) {
			return false
		}
	}
	return true
}

// bestType returns the type of a.order on which st runs fastest, the first
// among equals.
func (a *Alloc) bestType(st *allocJob) int {
	bt := a.order[0]
	for _, t := range a.order {
		if st.speed[t] > st.speed[bt] {
			bt = t
		}
	}
	return bt
}
