package lp

import "math"

// Tolerances of the interior-point method, relative to the problem's scale.
const (
	tolerance = 1e-8
	// acceptable is the looser tolerance accepted when progress stops.
	acceptable = 1e-5
	// nearOptimal is where a step that worsens the iterate ends the method
	// (far from it, infeasible starts may worsen before they improve).
	nearOptimal = 1e-4
	maxIter     = 200
	// eta is the fraction of the way to the boundary a step may go.
	eta = 0.995
	// refineSteps bounds the iterative refinement of each linear solve.
	refineSteps = 8
	// refineBelow is the merit below which linear solves are refined (far
	// from the optimum the normal equations are well conditioned).
	refineBelow = 1e-3
	// correctors bounds Gondzio's centrality correctors per iteration.
	correctors = 1
)

// Solver solves allocation programs, keeping its buffers between calls. Its
// zero value is ready to use; one Solver must not be used by two goroutines
// at once.
//
// The program is put in standard form min c·v s.t. A·v = b, v ≥ 0, where v
// holds the shares x (n·K), the level t (with Fair), and one slack per row;
// rows are the n share rows R, the K capacity rows C and, with Fair, the n
// level rows E (t − Σ_k Rate_jk·x_jk + slack = 0). Vectors over variables
// and over rows are flat, at the offsets below.
type Solver struct {
	p          *Problem
	n, k, m    int  // jobs, types, level rows (n with Fair, else 0)
	fair       bool // the program has t and the E rows
	nv, nr     int  // variables, rows
	ot, os, or int  // offsets: t, slacks of R (then C, then E); rows C (E at or+k)

	val, rate, size, capa, row []float64 // scaled data
	fairC, rateScale           float64
	act                        []bool // variable exists

	v, w, y      []float64 // primal, reduced costs, duals
	dv, dw, dy   []float64 // a Newton direction
	rp, rd, rc   []float64 // primal and dual residuals, complementarity target
	d, q, rhs    []float64 // v/w; helpers of direction
	b, c         []float64 // right-hand side and costs
	pa, pb, pc   []float64 // per job: the 2×2 block [[a b] [b c]] of the normal equations
	det          []float64 // per job: the block's determinant
	zr, ze       []float64 // n·K: P⁻¹·Q, the blocks times the capacity columns
	qs           []float64 // n·K: Size_j·d_jk, the R rows' part of Q
	gr, ge       []float64 // per job: P⁻¹u (u: indicator of the E rows)
	kl           int       // size of the linking system: K, plus 1 with Fair
	link         []float64 // kl×kl: the linking system, then its LU factors
	piv          []int     // LU row swaps
	pr, pe, rhsC []float64 // solve scratch
	res, corr    []float64 // refinement scratch, over rows
	tmp          []float64 // refinement scratch, over variables
	bv, bw, by   []float64 // the best iterate so far
	refine       bool      // refine linear solves (near the optimum)
}

// Solve solves p. On ErrNotConverged the solution is the last iterate,
// made feasible.
func (s *Solver) Solve(p *Problem) (Solution, error) {
	if err := p.check(); err != nil {
		return Solution{}, err
	}
	s.setup(p)
	sol := Solution{X: make([]float64, p.Jobs*p.Types)}
	if p.Jobs == 0 {
		return sol, nil
	}
	s.start()
	converged := s.iterate(&sol.Iterations)
	copy(sol.X, s.v[:s.n*s.k])
	sol.T = polish(p, sol.X)
	sol.Objective = objective(p, sol.X, sol.T)
	if !converged {
		return sol, ErrNotConverged
	}
	return sol, nil
}

// iterate runs the method until the iterate is optimal to tolerance or
// progress stops. Near the optimum the normal equations become so
// ill-conditioned that a step may lose the accuracy already reached; the
// method then stops and returns to the best iterate, which is accepted when
// it is optimal to the looser tolerance acceptable.
func (s *Solver) iterate(iters *int) bool {
	best := math.Inf(1)
	for *iters < maxIter {
		merit := s.residuals()
		if merit <= tolerance {
			return true
		}
		s.refine = merit <= refineBelow
		if merit < best {
			best = merit
			s.save()
		} else if best <= nearOptimal && merit > 10*best {
			break
		}
		*iters++
		s.step()
	}
	s.restore()
	return best <= acceptable
}

// save and restore keep the best iterate.
func (s *Solver) save() {
	s.bv, s.bw, s.by = append(s.bv[:0], s.v...), append(s.bw[:0], s.w...), append(s.by[:0], s.y...)
}

func (s *Solver) restore() { copy(s.v, s.bv); copy(s.w, s.bw); copy(s.y, s.by) }

// setup sizes the buffers and scales the data: sizes and capacities by the
// largest size, rates by the largest rate, costs by the largest cost.
func (s *Solver) setup(p *Problem) {
	s.p, s.n, s.k = p, p.Jobs, p.Types
	s.fair = p.Fair > 0
	s.m = 0
	nt := 0
	if s.fair {
		s.m, nt = s.n, 1
	}
	n, k := s.n, s.k
	s.ot, s.os = n*k, n*k+nt
	s.nv = s.os + n + k + s.m
	s.or = n
	s.nr = n + k + s.m
	grow := func(b *[]float64, size int) { *b = resize(*b, size) }
	for _, b := range []*[]float64{&s.v, &s.w, &s.dv, &s.dw, &s.rd, &s.rc, &s.d, &s.q, &s.c, &s.tmp} {
		grow(b, s.nv)
	}
	for _, b := range []*[]float64{&s.y, &s.dy, &s.rp, &s.rhs, &s.b, &s.res, &s.corr} {
		grow(b, s.nr)
	}
	for _, b := range []*[]float64{&s.val, &s.rate, &s.zr, &s.ze, &s.qs} {
		grow(b, n*k)
	}
	for _, b := range []*[]float64{&s.size, &s.row, &s.pa, &s.pb, &s.pc, &s.det, &s.gr, &s.ge, &s.pr, &s.pe} {
		grow(b, n)
	}
	grow(&s.capa, k)
	s.kl = k + nt
	grow(&s.rhsC, s.kl)
	grow(&s.link, s.kl*s.kl)
	if cap(s.piv) < s.kl {
		s.piv = make([]int, s.kl)
	}
	s.piv = s.piv[:s.kl]
	if cap(s.act) < s.nv {
		s.act = make([]bool, s.nv)
	}
	s.act = s.act[:s.nv]
	s.scale(p)
}

// scale fills the scaled data, the costs c, the right-hand side b and the
// activity mask.
func (s *Solver) scale(p *Problem) {
	n, k := s.n, s.k
	maxSize, maxRate := 0.0, 0.0
	for j := range n {
		maxSize = max(maxSize, p.Size[j])
	}
	if s.fair {
		for i := range n * k {
			if p.use(i) {
				maxRate = max(maxRate, p.Rate[i])
			}
		}
	}
	if maxRate == 0 {
		maxRate = 1
	}
	s.rateScale = maxRate
	maxCost := p.Fair * maxRate
	for i := range n * k {
		if p.use(i) {
			maxCost = max(maxCost, math.Abs(p.value(i)))
		}
	}
	if maxCost == 0 {
		maxCost = 1
	}
	for i := range n * k {
		s.val[i] = p.value(i) / maxCost
		s.rate[i] = 0
		if s.fair {
			s.rate[i] = p.Rate[i] / maxRate
		}
	}
	s.fairC = p.Fair * maxRate / maxCost
	for j := range n {
		s.size[j] = p.Size[j] / maxSize
		s.row[j] = p.row(j)
	}
	for t := range k {
		s.capa[t] = p.Cap[t] / maxSize
	}
	clear(s.c)
	clear(s.b)
	for i := range s.nv {
		s.act[i] = i >= n*k || p.use(i)
	}
	for i := range n * k {
		s.c[i] = -s.val[i]
	}
	if s.fair {
		s.c[s.ot] = -s.fairC
	}
	copy(s.b[:n], s.row)
	copy(s.b[s.or:s.or+k], s.capa)
}

func resize(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// start sets Mehrotra's initial iterate: the least-norm solutions of
// A·v = b and of Aᵀ·y + w = c (least-norm w), shifted to be positive and
// then shifted again so that no product v_i·w_i is far below the average.
func (s *Solver) start() {
	for i := range s.nv {
		s.d[i] = 0
		if s.act[i] {
			s.d[i] = 1
		}
	}
	s.factor()
	s.solveNormal(s.y, s.b) // (A·Aᵀ)⁻¹·b
	s.mulAT(s.v, s.y)
	s.mulA(s.rhs, s.c)
	s.solveNormal(s.y, s.rhs) // (A·Aᵀ)⁻¹·A·c
	s.mulAT(s.w, s.y)
	minV, minW := math.Inf(1), math.Inf(1)
	for i := range s.nv {
		if !s.act[i] {
			s.v[i], s.w[i] = 0, 0
			continue
		}
		s.w[i] = s.c[i] - s.w[i]
		minV, minW = min(minV, s.v[i]), min(minW, s.w[i])
	}
	shiftV, shiftW := max(-1.5*minV, 0), max(-1.5*minW, 0)
	vw, sv, sw := 0.0, 0.0, 0.0
	for i := range s.nv {
		if s.act[i] {
			s.v[i] += shiftV
			s.w[i] += shiftW
			vw += s.v[i] * s.w[i]
			sv += s.v[i]
			sw += s.w[i]
		}
	}
	shiftV, shiftW = 0.5*vw/max(sw, 1e-12), 0.5*vw/max(sv, 1e-12)
	for i := range s.nv {
		if s.act[i] {
			s.v[i] = max(s.v[i]+shiftV, 1e-8)
			s.w[i] = max(s.w[i]+shiftW, 1e-8)
		}
	}
}

// residuals computes rp = b − A·v and rd = c − Aᵀ·y − w and returns the
// largest of the relative primal and dual infeasibilities and duality gap.
func (s *Solver) residuals() float64 {
	s.mulA(s.rp, s.v)
	for i := range s.nr {
		s.rp[i] = s.b[i] - s.rp[i]
	}
	s.mulAT(s.rd, s.y)
	pobj, dobj := 0.0, 0.0
	for i := range s.nv {
		if !s.act[i] {
			s.rd[i] = 0
			continue
		}
		s.rd[i] = s.c[i] - s.rd[i] - s.w[i]
		pobj += s.c[i] * s.v[i]
	}
	for i := range s.nr {
		dobj += s.b[i] * s.y[i]
	}
	pinf := maxAbs(s.rp) / (1 + maxAbs(s.b))
	dinf := maxAbs(s.rd) / (1 + maxAbs(s.c))
	gap := math.Abs(pobj-dobj) / (1 + math.Abs(pobj))
	return max(pinf, dinf, gap)
}

// step takes one predictor–corrector step.
func (s *Solver) step() {
	mu, cnt := 0.0, 0
	for i := range s.nv {
		if s.act[i] {
			s.d[i] = s.v[i] / s.w[i]
			mu += s.v[i] * s.w[i]
			cnt++
		} else {
			s.d[i] = 0
		}
	}
	mu /= float64(cnt)
	s.factor()
	for i := range s.nv {
		s.rc[i] = -s.v[i] * s.w[i]
	}
	s.direction()
	ap, ad := s.stepLengths(1)
	muAff := 0.0
	for i := range s.nv {
		if s.act[i] {
			muAff += (s.v[i] + ap*s.dv[i]) * (s.w[i] + ad*s.dw[i])
		}
	}
	muAff /= float64(cnt)
	sigma := math.Pow(muAff/mu, 3)
	for i := range s.nv {
		s.rc[i] = sigma*mu - s.v[i]*s.w[i] - s.dv[i]*s.dw[i]
	}
	s.direction()
	ap, ad = s.stepLengths(1)
	ap, ad = eta*ap, eta*ad // never all the way: the boundary stays strictly ahead
	for i := range s.nv {
		if s.act[i] {
			s.v[i] += ap * s.dv[i]
			s.w[i] += ad * s.dw[i]
		}
	}
	for i := range s.nr {
		s.y[i] += ad * s.dy[i]
	}
}

// direction solves the Newton system for the complementarity target rc:
// A·D·Aᵀ·dy = rp − A·q with q = rc/w − d·rd, then dv = D·Aᵀ·dy + q and
// dw = (rc − w·dv)/v.
func (s *Solver) direction() {
	for i := range s.nv {
		if s.act[i] {
			s.q[i] = s.rc[i]/s.w[i] - s.d[i]*s.rd[i]
		} else {
			s.q[i] = 0
		}
	}
	s.mulA(s.rhs, s.q)
	for i := range s.nr {
		s.rhs[i] = s.rp[i] - s.rhs[i]
	}
	s.solveRefined(s.dy, s.rhs)
	s.mulAT(s.dv, s.dy)
	for i := range s.nv {
		if !s.act[i] {
			s.dv[i], s.dw[i] = 0, 0
			continue
		}
		s.dv[i] = s.d[i]*s.dv[i] + s.q[i]
	}
	for i := range s.nv {
		if s.act[i] {
			s.dw[i] = (s.rc[i] - s.w[i]*s.dv[i]) / s.v[i]
		}
	}
}

// solveRefined solves the normal equations M·out = r and improves the
// answer by iterative refinement: the residual r − M·out is computed
// exactly from A and D (not from the factors) and solved for a correction,
// while that makes the residual smaller.
func (s *Solver) solveRefined(out, r []float64) {
	s.solveNormal(out, r)
	if !s.refine {
		return
	}
	res, corr, tmp := s.res, s.corr, s.tmp
	best := math.Inf(1)
	for range refineSteps {
		s.mulAT(tmp, out)
		for i := range s.nv {
			tmp[i] *= s.d[i]
		}
		s.mulA(res, tmp)
		for i := range s.nr {
			res[i] = r[i] - res[i]
		}
		e := maxAbs(res)
		if e >= best || e <= 1e-15*(1+maxAbs(r)) {
			return
		}
		best = e
		s.solveNormal(corr, res)
		for i := range s.nr {
			out[i] += corr[i]
		}
	}
}

// stepLengths returns the primal and dual step lengths: the largest up to 1
// that keep v and w positive, times frac.
func (s *Solver) stepLengths(frac float64) (float64, float64) {
	ap, ad := 1.0, 1.0
	for i := range s.nv {
		if !s.act[i] {
			continue
		}
		if dv := s.dv[i]; dv < 0 && frac*s.v[i] < -ap*dv {
			ap = -frac * s.v[i] / dv
		}
		if dw := s.dw[i]; dw < 0 && frac*s.w[i] < -ad*dw {
			ad = -frac * s.w[i] / dw
		}
	}
	return ap, ad
}

// mulA sets out = A·v (over rows).
func (s *Solver) mulA(out, v []float64) {
	n, k := s.n, s.k
	clear(out)
	for j := range n {
		r, e := 0.0, 0.0
		for t := range k {
			x := v[j*k+t]
			r += x
			out[s.or+t] += s.size[j] * x
			e -= s.rate[j*k+t] * x
		}
		out[j] = r + v[s.os+j]
		if s.fair {
			out[s.or+k+j] = v[s.ot] + e + v[s.os+n+k+j]
		}
	}
	for t := range k {
		out[s.or+t] += v[s.os+n+t]
	}
}

// mulAT sets out = Aᵀ·y (over variables).
func (s *Solver) mulAT(out, y []float64) {
	n, k := s.n, s.k
	sumE := 0.0
	for j := range n {
		yr, ye := y[j], 0.0
		if s.fair {
			ye = y[s.or+k+j]
			sumE += ye
		}
		for t := range k {
			out[j*k+t] = yr + s.size[j]*y[s.or+t] - s.rate[j*k+t]*ye
		}
	}
	if s.fair {
		out[s.ot] = sumE
	}
	copy(out[s.os:], y)
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
