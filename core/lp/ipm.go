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
	bMax, cMax   float64   // maxAbs(b), maxAbs(c): residuals' scales, fixed by scale
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
	s.bMax, s.cMax = maxAbs(s.b), maxAbs(s.c)
}

// resize returns b with length n, reusing its array when it is large
// enough. A new array has room for a quarter more: the programs of a
// replay grow a job or two at a time, and each growth would otherwise
// allocate every buffer afresh. Every buffer is written before it is read
// (as when a smaller program reuses a larger one's), so what a reused
// array held does not matter.
func resize(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n, n+n/4)
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
	rp, b, y := s.rp[:s.nr], s.b[:s.nr], s.y[:s.nr]
	var mp, md uint64 // maxAbs's folds of rp and rd, kept as they are written
	for i := range rp {
		rp[i] = b[i] - rp[i]
		mp = max(mp, math.Float64bits(rp[i])&^(1<<63))
	}
	s.mulAT(s.rd, s.y)
	pobj, dobj := 0.0, 0.0
	act := s.act[:s.nv]
	rd, c, w, v := s.rd[:len(act)], s.c[:len(act)], s.w[:len(act)], s.v[:len(act)]
	for i, on := range act {
		if !on {
			rd[i] = 0 // +0: no change to md
			continue
		}
		rd[i] = c[i] - rd[i] - w[i]
		md = max(md, math.Float64bits(rd[i])&^(1<<63))
		pobj += c[i] * v[i]
	}
	for i := range b {
		dobj += b[i] * y[i]
	}
	pinf := absMax(mp, s.rp) / (1 + s.bMax)
	dinf := absMax(md, s.rd) / (1 + s.cMax)
	gap := math.Abs(pobj-dobj) / (1 + math.Abs(pobj))
	return max(pinf, dinf, gap)
}

// step takes one predictor–corrector step. (Its loops, and those of the
// functions it calls, read the vectors through local slices of one
// length, so that the compiler keeps them in registers and drops the
// bounds checks; each element is computed by the same operations as
// ever.)
func (s *Solver) step() {
	act := s.act[:s.nv]
	v, w, d, rc := s.v[:len(act)], s.w[:len(act)], s.d[:len(act)], s.rc[:len(act)]
	mu, cnt := 0.0, 0
	for i, on := range act {
		if on {
			d[i] = v[i] / w[i]
			mu += v[i] * w[i]
			cnt++
		} else {
			d[i] = 0
		}
		rc[i] = -v[i] * w[i] // factor below reads only d
	}
	mu /= float64(cnt)
	s.factor()
	ap, ad := s.direction()
	dv, dw := s.dv[:len(act)], s.dw[:len(act)]
	muAff := 0.0
	for i, on := range act {
		if on {
			muAff += (v[i] + ap*dv[i]) * (w[i] + ad*dw[i])
		}
	}
	muAff /= float64(cnt)
	sigma := math.Pow(muAff/mu, 3)
	for i := range rc {
		rc[i] = sigma*mu - v[i]*w[i] - dv[i]*dw[i]
	}
	ap, ad = s.direction()
	ap, ad = eta*ap, eta*ad // never all the way: the boundary stays strictly ahead
	for i, on := range act {
		if on {
			v[i] += ap * dv[i]
			w[i] += ad * dw[i]
		}
	}
	y, dy := s.y[:s.nr], s.dy[:s.nr]
	for i := range y {
		y[i] += ad * dy[i]
	}
}

// direction solves the Newton system for the complementarity target rc:
// A·D·Aᵀ·dy = rp − A·q with q = rc/w − d·rd, then dv = D·Aᵀ·dy + q and
// dw = (rc − w·dv)/v. It returns the primal and dual step lengths along
// it: the largest up to 1 that keep v and w positive, worked out in the
// same pass (as a pass of their own over dv and dw once did).
func (s *Solver) direction() (float64, float64) {
	act := s.act[:s.nv]
	q, rc, w, d, rd := s.q[:len(act)], s.rc[:len(act)], s.w[:len(act)], s.d[:len(act)], s.rd[:len(act)]
	for i, on := range act {
		if on {
			q[i] = rc[i]/w[i] - d[i]*rd[i]
		} else {
			q[i] = 0
		}
	}
	s.mulA(s.rhs, s.q)
	rhs, rp := s.rhs[:s.nr], s.rp[:s.nr]
	for i := range rhs {
		rhs[i] = rp[i] - rhs[i]
	}
	s.solveRefined(s.dy, s.rhs)
	s.mulAT(s.dv, s.dy)
	dv, dw, v := s.dv[:len(act)], s.dw[:len(act)], s.v[:len(act)]
	ap, ad := 1.0, 1.0
	for i, on := range act {
		if !on {
			dv[i], dw[i] = 0, 0
			continue
		}
		dvi := d[i]*dv[i] + q[i]
		dwi := (rc[i] - w[i]*dvi) / v[i]
		dv[i], dw[i] = dvi, dwi
		// The step lengths, as a pass of their own would update them
		// (the same tests, entry by entry in order; an inactive entry,
		// 0, never shortens a step).
		if dvi < 0 && v[i] < -ap*dvi {
			ap = -v[i] / dvi
		}
		if dwi < 0 && w[i] < -ad*dwi {
			ad = -w[i] / dwi
		}
	}
	return ap, ad
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
	best, rMax := math.Inf(1), -1.0 // rMax: maxAbs(r) once needed (r does not change)
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
		if e >= best {
			return
		}
		if rMax < 0 {
			rMax = maxAbs(r)
		}
		if e <= 1e-15*(1+rMax) {
			return
		}
		best = e
		s.solveNormal(corr, res)
		for i := range s.nr {
			out[i] += corr[i]
		}
	}
}

// mulA sets out = A·v (over rows).
func (s *Solver) mulA(out, v []float64) {
	switch {
	case s.fair:
		s.mulAGeneral(out, v)
	case s.k == 3:
		s.mulAThree(out, v)
	default:
		clear(out)
		s.mulAPlain(out, v)
	}
}

// mulAGeneral is mulA for any program, with or without Fair (mulAPlain is
// its faster form without; a test holds the two to the same bits).
func (s *Solver) mulAGeneral(out, v []float64) {
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

// mulAPlain is mulA without Fair, from a cleared out: the same sums
// without the E rows' (whose rates are all 0 and whose sums are not kept).
func (s *Solver) mulAPlain(out, v []float64) {
	n, k := s.n, s.k
	capOut, size := out[s.or:s.or+k], s.size[:n]
	for j, sz := range size {
		r := 0.0
		for t, x := range v[j*k : (j+1)*k] {
			r += x
			capOut[t] += sz * x
		}
		out[j] = r + v[s.os+j]
	}
	for t := range capOut {
		capOut[t] += v[s.os+n+t]
	}
}

// mulAT sets out = Aᵀ·y (over variables).
func (s *Solver) mulAT(out, y []float64) {
	switch {
	case s.fair:
		s.mulATGeneral(out, y)
	case s.k == 3:
		s.mulATThree(out, y)
	default:
		s.mulATPlain(out, y)
	}
}

// mulATGeneral is mulAT for any program, with or without Fair
// (mulATPlain is its faster form without).
func (s *Solver) mulATGeneral(out, y []float64) {
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

// mulATPlain is mulAT without Fair: each share's entry is its R row's dual
// plus its size times its C row's, the E rows' term (a rate of 0 times a
// dual of 0, +0, subtracted: no change to any value) left out.
func (s *Solver) mulATPlain(out, y []float64) {
	n, k := s.n, s.k
	yc, size := y[s.or:s.or+k], s.size[:n]
	for j, sz := range size {
		yr := y[j]
		o := out[j*k : (j+1)*k]
		for t, c := range yc[:len(o)] {
			o[t] = yr + sz*c
		}
	}
	copy(out[s.os:], y)
}

// maxAbs returns max(0, |v_0|, |v_1|, …) as the builtin max folds them.
// Without a NaN that is the largest |v_i| (or +0). It is found here as the
// largest of the values' bits without the sign, which order non-negative
// floats as their values do (branch-free, where the builtin's NaN and
// signed-zero handling is not); any NaN's bits are above +Inf's, and then
// the builtin's fold (maxAbsFold) decides which NaN.
func maxAbs(v []float64) float64 {
	var m uint64
	for _, x := range v {
		m = max(m, math.Float64bits(x)&^(1<<63))
	}
	return absMax(m, v)
}

// absMax is maxAbs(v) from m, the largest of v's values' bits without the
// sign (worked out by a loop that writes v, as residuals's do).
func absMax(m uint64, v []float64) float64 {
	if m > math.Float64bits(math.Inf(1)) {
		return maxAbsFold(v)
	}
	return math.Float64frombits(m)
}

// maxAbsFold is maxAbs by the builtin max.
func maxAbsFold(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
