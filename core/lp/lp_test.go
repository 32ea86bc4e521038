package lp

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	glp "gonum.org/v1/gonum/optimize/convex/lp"
)

// reference solves p with gonum's simplex on the standard form with slacks
// and returns the optimal objective.
func reference(t *testing.T, p *Problem) float64 {
	t.Helper()
	n, k := p.Jobs, p.Types
	fair := p.Fair > 0
	nx := n * k
	nt := 0
	if fair {
		nt = 1
	}
	rows := n + k
	if fair {
		rows += n
	}
	cols := nx + nt + rows
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	c := make([]float64, cols)
	for i := range nx {
		c[i] = -p.value(i)
	}
	if fair {
		c[nx] = -p.Fair
	}
	for j := range n {
		for t := range k {
			i := j*k + t
			if !p.use(i) {
				continue
			}
			a.Set(j, i, 1)
			a.Set(n+t, i, p.Size[j])
			if fair {
				a.Set(n+k+j, i, -p.Rate[i])
			}
		}
		b[j] = p.row(j)
		if fair {
			a.Set(n+k+j, nx, 1)
		}
	}
	for t := range k {
		b[n+t] = p.Cap[t]
	}
	for r := range rows {
		a.Set(r, nx+nt+r, 1)
	}
	// Unused variables: an extra row x_i = 0 would break the slack basis;
	// a huge cost keeps them at 0 instead.
	for i := range nx {
		if !p.use(i) {
			c[i] = 1e6
			a.Set(i/k, i, 1)
		}
	}
	basic := make([]int, rows)
	for r := range rows {
		basic[r] = nx + nt + r
	}
	f, _, err := glp.Simplex(c, a, b, 1e-10, basic)
	if err != nil {
		t.Fatalf("reference simplex: %v", err)
	}
	return -f
}

// checkFeasible fails when sol breaks a constraint of p.
func checkFeasible(t *testing.T, p *Problem, sol Solution) {
	t.Helper()
	n, k := p.Jobs, p.Types
	const eps = 1e-9
	for j := range n {
		sum := 0.0
		rate := 0.0
		for tt := range k {
			x := sol.X[j*k+tt]
			if x < 0 || (!p.use(j*k+tt) && x != 0) {
				t.Fatalf("x[%d][%d] = %v", j, tt, x)
			}
			sum += x
			if p.Rate != nil {
				rate += p.Rate[j*k+tt] * x
			}
		}
		if sum > p.row(j)+eps {
			t.Fatalf("job %d: shares sum to %v > %v", j, sum, p.row(j))
		}
		if p.Fair > 0 && rate < sol.T-eps {
			t.Fatalf("job %d: rate %v below level %v", j, rate, sol.T)
		}
	}
	for tt := range k {
		used := 0.0
		for j := range n {
			used += p.Size[j] * sol.X[j*k+tt]
		}
		if used > p.Cap[tt]*(1+eps)+eps {
			t.Fatalf("type %d: %v GPUs used of %v", tt, used, p.Cap[tt])
		}
	}
}

// random builds a problem like the policies' (throughput ratios, sizes 1–8,
// a few forbidden types).
func random(rng *rand.Rand, n, k int, fair bool, value bool) *Problem {
	p := &Problem{Jobs: n, Types: k, Size: make([]float64, n), Cap: make([]float64, k), Use: make([]bool, n*k)}
	sizes := []float64{1, 1, 1, 2, 4, 8}
	for j := range n {
		p.Size[j] = sizes[rng.IntN(len(sizes))]
	}
	for t := range k {
		p.Cap[t] = float64(rng.IntN(3*n/k+2) + 1)
	}
	if fair {
		p.Fair = 1
		p.Rate = make([]float64, n*k)
	}
	if value {
		p.Value = make([]float64, n*k)
	}
	for i := range n * k {
		p.Use[i] = rng.Float64() < 0.85
		r := math.Exp(rng.NormFloat64())
		if p.Rate != nil {
			p.Rate[i] = r
		}
		if p.Value != nil {
			p.Value[i] = r * (1 + 10*rng.Float64())
		}
	}
	return p
}

func TestSolveMatchesSimplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n, k := 1+rng.IntN(30), 1+rng.IntN(5)
		mode := trial % 3
		p := random(rng, n, k, mode != 1, mode != 0)
		if mode == 2 {
			for i := range p.Value {
				p.Value[i] *= 1e-3 // tie-breaker beside the max-min level
			}
		}
		sol, err := Solve(p)
		if err != nil {
			t.Fatalf("trial %d (n=%d k=%d mode %d): %v", trial, n, k, mode, err)
		}
		checkFeasible(t, p, sol)
		want := reference(t, p)
		if math.Abs(sol.Objective-want) > 1e-5*(1+math.Abs(want)) {
			t.Fatalf("trial %d (n=%d k=%d mode %d): objective %.12g, simplex %.12g (%d iterations)",
				trial, n, k, mode, sol.Objective, want, sol.Iterations)
		}
	}
}

func TestSolveHandComputed(t *testing.T) {
	tests := []struct {
		name  string
		p     Problem
		wantX []float64
		wantT float64
	}{
		{
			// Two 1-GPU jobs, one fast GPU and one slow: max-min gives each
			// the same rate. Job a: 10 on fast, 1 on slow; job b: 2 and 1.
			// At the optimum every row and GPU is full: b gets xbf + xbs = 1
			// (rate 1 + xbf), a the rest of the fast GPU and of the slow one
			// (xaf = 1 − xbf, xas = xbf: rate 10 − 9·xbf). Equal rates:
			// xbf = 0.9, t = 1.9.
			name: "max-min over two types",
			p: Problem{Jobs: 2, Types: 2, Fair: 1, Rate: []float64{10, 1, 2, 1},
				Size: []float64{1, 1}, Cap: []float64{1, 1}},
			wantX: []float64{0.1, 0.9, 0.9, 0.1}, wantT: 1.9,
		},
		{
			// Max-sum: each GPU goes to the job that gains the most there.
			name: "max throughput",
			p: Problem{Jobs: 2, Types: 2, Value: []float64{10, 1, 2, 1.5},
				Size: []float64{1, 1}, Cap: []float64{1, 1}},
			wantX: []float64{1, 0, 0, 1},
		},
		{
			// A 2-GPU job on a 1-GPU type cannot run there: the type's
			// whole capacity gives it only half a share.
			name: "gang size",
			p: Problem{Jobs: 1, Types: 1, Fair: 1, Rate: []float64{4},
				Size: []float64{2}, Cap: []float64{1}},
			wantX: []float64{0.5}, wantT: 2,
		},
	}
	for _, tc := range tests {
		sol, err := Solve(&tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, w := range tc.wantX {
			if math.Abs(sol.X[i]-w) > 1e-5 {
				t.Errorf("%s: x = %v, want %v", tc.name, sol.X, tc.wantX)
				break
			}
		}
		if math.Abs(sol.T-tc.wantT) > 1e-5 {
			t.Errorf("%s: t = %v, want %v", tc.name, sol.T, tc.wantT)
		}
	}
}

func TestSolveDegenerate(t *testing.T) {
	// Many identical jobs and a job that can run nowhere (t = 0): the
	// optimum face is large; the solution must still be feasible and
	// optimal.
	n, k := 200, 3
	p := &Problem{Jobs: n, Types: k, Fair: 1, Rate: make([]float64, n*k), Size: make([]float64, n),
		Cap: []float64{8, 8, 8}, Use: make([]bool, n*k)}
	for j := range n {
		p.Size[j] = 1
		for tt := range k {
			p.Rate[j*k+tt] = float64(tt + 1)
			p.Use[j*k+tt] = j != 7
		}
	}
	sol, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	checkFeasible(t, p, sol)
	if sol.T > 1e-9 {
		t.Fatalf("a job with no usable type must pin the level to 0, got %v", sol.T)
	}
	for j := range n {
		p.Use[j*k] = true
		p.Use[j*k+1] = true
		p.Use[j*k+2] = true
	}
	sol, err = Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	checkFeasible(t, p, sol)
	// 200 identical jobs share 8+8+8 GPUs of rates 1, 2, 3: t = 48/200.
	if want := 48.0 / 200; math.Abs(sol.T-want) > 1e-7 {
		t.Fatalf("level %v, want %v", sol.T, want)
	}
}

func TestSolveErrors(t *testing.T) {
	ok := func() Problem {
		return Problem{Jobs: 1, Types: 1, Fair: 1, Rate: []float64{1}, Size: []float64{1}, Cap: []float64{1}}
	}
	tests := []struct {
		name string
		edit func(p *Problem)
		want string
	}{
		{"no types", func(p *Problem) { p.Types = 0 }, "types"},
		{"short rate", func(p *Problem) { p.Rate = nil }, "Rate has 0 entries"},
		{"nan", func(p *Problem) { p.Rate[0] = math.NaN() }, "Rate[0] is NaN"},
		{"zero size", func(p *Problem) { p.Size[0] = 0 }, "Size[0]"},
		{"negative cap", func(p *Problem) { p.Cap[0] = -1 }, "Cap[0]"},
		{"negative fair", func(p *Problem) { p.Fair = -1 }, "Fair"},
		{"use length", func(p *Problem) { p.Use = []bool{true, true} }, "Use has 2"},
		{"negative rate", func(p *Problem) { p.Rate[0] = -2 }, "Rate[0] is -2"},
	}
	for _, tc := range tests {
		p := ok()
		tc.edit(&p)
		if _, err := Solve(&p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	var s Solver
	if sol, err := s.Solve(&Problem{Types: 2, Size: []float64{}, Cap: []float64{1, 1}}); err != nil || len(sol.X) != 0 {
		t.Fatalf("no jobs: %v %v", sol, err)
	}
}

func TestSolverReuse(t *testing.T) {
	// A Solver reused across problems of different shapes gives the same
	// answers as fresh ones.
	rng := rand.New(rand.NewPCG(3, 4))
	var s Solver
	for range 20 {
		p := random(rng, 1+rng.IntN(50), 1+rng.IntN(8), rng.IntN(2) == 0, true)
		a, errA := s.Solve(p)
		b, errB := Solve(p)
		if errA != nil || errB != nil || a.Objective != b.Objective {
			t.Fatalf("reused %v (%v), fresh %v (%v)", a.Objective, errA, b.Objective, errB)
		}
	}
}
