package lp

import (
	"errors"
	"fmt"
	"math"
)

// Problem is an allocation program (package documentation). Slices indexed
// by job and type are flat and job-major: entry j*Types+k.
type Problem struct {
	// Jobs and Types are n and K.
	Jobs, Types int
	// Use says which variables exist; x_jk stays 0 where Use is false (a
	// type the job cannot run on). nil means every variable exists.
	Use []bool
	// Value is the objective weight of x_jk (maximised); nil means 0.
	Value []float64
	// Fair, when positive, adds Fair·t to the objective, t being at most
	// every job's Σ_k Rate_jk·x_jk (max-min).
	Fair float64
	// Rate is each job's rate per unit of share on each type (Fair > 0).
	Rate []float64
	// Row bounds each job's total share; nil means 1 for every job.
	Row []float64
	// Size is each job's GPU count (positive) and Cap each type's GPUs (not
	// negative): Σ_j Size_j·x_jk ≤ Cap_k.
	Size []float64
	Cap  []float64
}

// Solution is an optimal allocation.
type Solution struct {
	// X holds x_jk, job-major, each in [0, Row_j], rows summing to at most
	// Row_j.
	X []float64
	// T is the max-min level t (0 without Fair).
	T float64
	// Objective is Σ Value·x + Fair·t at X and T.
	Objective float64
	// Iterations is the number of interior-point iterations.
	Iterations int
}

// ErrNotConverged is returned when the solver stops before reaching its
// tolerance (a badly scaled problem); the returned solution is then the last
// iterate, clipped to be feasible.
var ErrNotConverged = errors.New("lp: interior-point method did not converge")

// check validates p and returns its effective Row.
func (p *Problem) check() error {
	n, k := p.Jobs, p.Types
	if n < 0 || k < 1 || k > 64 {
		return fmt.Errorf("lp: %d jobs, %d types: want at least 0 jobs and 1 to 64 types", n, k)
	}
	for _, c := range []struct {
		name string
		v    []float64
		want int
		opt  bool
	}{
		{"Value", p.Value, n * k, true}, {"Rate", p.Rate, n * k, p.Fair <= 0}, {"Row", p.Row, n, true},
		{"Size", p.Size, n, false}, {"Cap", p.Cap, k, false},
	} {
		if c.v == nil && c.opt {
			continue
		}
		if len(c.v) != c.want {
			return fmt.Errorf("lp: %s has %d entries, want %d", c.name, len(c.v), c.want)
		}
		for i, x := range c.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("lp: %s[%d] is %v", c.name, i, x)
			}
		}
	}
	if p.Use != nil && len(p.Use) != n*k {
		return fmt.Errorf("lp: Use has %d entries, want %d", len(p.Use), n*k)
	}
	if math.IsNaN(p.Fair) || math.IsInf(p.Fair, 0) || p.Fair < 0 {
		return fmt.Errorf("lp: Fair is %v, want a finite number ≥ 0", p.Fair)
	}
	for j, s := range p.Size {
		if s <= 0 {
			return fmt.Errorf("lp: Size[%d] is %v, want a positive GPU count", j, s)
		}
	}
	for i, c := range p.Cap {
		if c < 0 {
			return fmt.Errorf("lp: Cap[%d] is %v, want ≥ 0", i, c)
		}
	}
	for j, r := range p.Row {
		if r < 0 {
			return fmt.Errorf("lp: Row[%d] is %v, want ≥ 0", j, r)
		}
	}
	if p.Rate != nil {
		for i, r := range p.Rate {
			if r < 0 {
				return fmt.Errorf("lp: Rate[%d] is %v, want ≥ 0", i, r)
			}
		}
	}
	return nil
}

// use reports whether x_i exists.
func (p *Problem) use(i int) bool { return p.Use == nil || p.Use[i] }

func (p *Problem) row(j int) float64 {
	if p.Row == nil {
		return 1
	}
	return p.Row[j]
}

func (p *Problem) value(i int) float64 {
	if p.Value == nil {
		return 0
	}
	return p.Value[i]
}

// Solve solves p with a fresh Solver.
func Solve(p *Problem) (Solution, error) {
	var s Solver
	return s.Solve(p)
}

// polish makes x exactly feasible after the interior-point method (which
// meets the constraints only to its tolerance): it clips every share to
// [0, Row_j], scales down rows that exceed Row_j and types that exceed
// Cap_k, and sets t to the smallest rate any job gets.
func polish(p *Problem, x []float64) float64 {
	n, k := p.Jobs, p.Types
	for j := range n {
		row, sum := p.row(j), 0.0
		for i := j * k; i < (j+1)*k; i++ {
			if !p.use(i) {
				x[i] = 0
			}
			x[i] = min(max(x[i], 0), row)
			sum += x[i]
		}
		if sum > row && sum > 0 {
			for i := j * k; i < (j+1)*k; i++ {
				x[i] *= row / sum
			}
		}
	}
	for t := range k {
		used := 0.0
		for j := range n {
			used += p.Size[j] * x[j*k+t]
		}
		if used > p.Cap[t] && used > 0 {
			f := p.Cap[t] / used
			for j := range n {
				x[j*k+t] *= f
			}
		}
	}
	if p.Fair <= 0 || n == 0 {
		return 0
	}
	level := math.Inf(1)
	for j := range n {
		r := 0.0
		for i := j * k; i < (j+1)*k; i++ {
			r += p.Rate[i] * x[i]
		}
		level = min(level, r)
	}
	return level
}

// objective returns Σ Value·x + Fair·t.
func objective(p *Problem, x []float64, t float64) float64 {
	v := p.Fair * t
	for i, xi := range x {
		v += p.value(i) * xi
	}
	return v
}
