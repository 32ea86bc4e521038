package lp

import "math"

// The normal equations M·dy = r, M = A·D·Aᵀ, ordered [job rows R and E;
// capacity rows C], have the form
//
//	M = [ P + d_t·u·uᵀ   Q ]
//	    [ Qᵀ             S ]
//
// P is block diagonal with one 2×2 block per job (its R and E rows; 1×1
// without Fair), u the indicator of the E rows (t is in every one), Q the
// coupling of job rows with capacity rows and S diagonal:
// Q[R_j][C_k] = Size_j·d_jk, Q[E_j][C_k] = −Rate_jk·Size_j·d_jk.
//
// t is a dense column. Rather than fold d_t·u·uᵀ into P by Sherman–Morrison
// (which loses all accuracy once t is basic and d_t huge), the solver keeps
// z = d_t·uᵀ·dy_E as an extra unknown (uᵀ·dy_E − z/d_t = 0) and eliminates
// the job rows, leaving the (K+1)×(K+1) system
//
//	[ S − Qᵀ·P⁻¹·Q   −Qᵀ·P⁻¹·u          ] [dy_C]   [r_C − Qᵀ·P⁻¹·r_J]
//	[ −uᵀ·P⁻¹·Q      −uᵀ·P⁻¹·u − 1/d_t ] [z   ] = [−uᵀ·P⁻¹·r_J     ]
//
// solved by LU with partial pivoting; then dy_J = P⁻¹·(r_J − u·z − Q·dy_C).

// factor builds the blocks, P⁻¹·Q (zr, ze), P⁻¹·u (gr, ge) and the LU
// factors of the linking system from the current d.
func (s *Solver) factor() {
	if !s.fair {
		if s.k == 3 {
			s.factorThree()
			return
		}
		s.factorPlain()
		return
	}
	n, k := s.n, s.k
	d := s.d
	alpha := 0.0
	for j := range n {
		a, b, c := d[s.os+j], 0.0, 0.0
		for t := range k {
			dj := d[j*k+t]
			s.qs[j*k+t] = s.size[j] * dj
			a += dj
			if s.fair {
				r := s.rate[j*k+t]
				b -= r * dj
				c += r * r * dj
			}
		}
		if !s.fair {
			s.pa[j] = a
			continue
		}
		de := d[s.os+n+k+j]
		c += de
		det := s.blockDet(j, -1, d[s.os+j], de)
		s.pa[j], s.pb[j], s.pc[j], s.det[j] = a, b, c, det
		s.gr[j], s.ge[j] = -b/det, a/det
		alpha += a / det
	}
	s.buildLinking(alpha)
	luFactor(s.link, s.piv, s.kl)
}

// factorPlain is factor without Fair: P's blocks are 1×1, a = dR + Σ d.
func (s *Solver) factorPlain() {
	n, k := s.n, s.k
	d, size, pa := s.d, s.size[:n], s.pa[:n]
	for j, sz := range size {
		a := d[s.os+j]
		qs := s.qs[j*k : (j+1)*k]
		for t, dj := range d[j*k : (j+1)*k] {
			qs[t] = sz * dj
			a += dj
		}
		pa[j] = a
	}
	s.buildLinking(0)
	luFactor(s.link, s.piv, s.kl)
}

// The entries of P⁻¹·Q and of the Schur complement are formed below from
// sums in which no large terms cancel. When one share x_jk is basic its d_jk
// is huge, and the textbook forms (adjugate times Q, S − Qᵀ·P⁻¹·Q) subtract
// numbers of order d_jk to get a result of order 1, losing every digit;
// the forms used here drop those terms exactly.

// blockDet returns the determinant a·c − b² of job j's block, excluding
// share skip (−1: none), by the Cauchy–Binet formula
// Σ_{k<l} d_k·d_l·(r_k − r_l)² + dR·Σ r_k²·d_k + dE·Σ d_k + dR·dE, a sum of
// non-negative terms (dR, dE: the d of the job's R and E slacks).
func (s *Solver) blockDet(j, skip int, dR, dE float64) float64 {
	k := s.k
	d, r := s.d[j*k:(j+1)*k], s.rate[j*k:(j+1)*k]
	det, sd, srd := dR*dE, 0.0, 0.0
	for t := range k {
		if d[t] == 0 || t == skip {
			continue
		}
		for l := t + 1; l < k; l++ {
			if l == skip {
				continue
			}
			diff := r[t] - r[l]
			det += d[t] * d[l] * diff * diff
		}
		sd += d[t]
		srd += r[t] * r[t] * d[t]
	}
	return det + dR*srd + dE*sd
}

// job computes job j's part of the factorisation: its columns of P⁻¹·Q
// (zr, ze) and its contribution to the linking system.
func (s *Solver) job(j int) {
	if !s.fair {
		s.jobPlain(j)
		return
	}
	n, k, kl := s.n, s.k, s.kl
	d, r := s.d[j*k:(j+1)*k], s.rate[j*k:(j+1)*k]
	dR, dE := s.d[s.os+j], s.d[s.os+n+k+j]
	det, sz := s.det[j], s.size[j]
	for t := range k {
		if d[t] == 0 {
			s.zr[j*k+t], s.ze[j*k+t] = 0, 0
			continue
		}
		// zr = (c·qR − b·qE)/det and ze = (a·qE − b·qR)/det with the
		// share's own term (zero) left out of the sums.
		fr, fe := dE, -r[t]*dR
		for l := range k {
			fr += r[l] * (r[l] - r[t]) * d[l]
			fe += (r[l] - r[t]) * d[l]
		}
		s.zr[j*k+t] = sz * d[t] * fr / det
		s.ze[j*k+t] = sz * d[t] * fe / det
		s.link[t*kl+k] -= s.ze[j*k+t]
		// Diagonal: Size²·d_t·det₋ₜ/det, det₋ₜ (without share t) being
		// det − d_t·N_t; when d_t·N_t is most of det that difference
		// cancels, and det₋ₜ is summed afresh.
		nt := dE + r[t]*r[t]*dR
		for l := range k {
			diff := r[l] - r[t]
			nt += diff * diff * d[l]
		}
		rest := det - d[t]*nt
		if d[t]*nt > 0.5*det {
			rest = s.blockDet(j, t, dR, dE)
		}
		s.link[t*kl+t] += sz * sz * d[t] * rest / det
		for l := t + 1; l < k; l++ {
			if d[l] == 0 {
				continue
			}
			f := dE + r[t]*r[l]*dR
			for m := range k {
				f += (r[m] - r[t]) * (r[m] - r[l]) * d[m]
			}
			s.link[t*kl+l] -= sz * sz * d[t] * d[l] * f / det
		}
	}
}

// jobPlain is job without Fair: P is 1×1 (a = Σ d + dR). (sz·sz·d_t,
// the product both link terms start with, is formed once per share.)
func (s *Solver) jobPlain(j int) {
	k, kl := s.k, s.kl
	d := s.d[j*k : (j+1)*k]
	zr := s.zr[j*k : (j+1)*k]
	link := s.link[:kl*kl]
	a, sz, dR := s.pa[j], s.size[j], s.d[s.os+j]
	for t, dt := range d {
		if dt == 0 {
			zr[t] = 0
			continue
		}
		zr[t] = sz * dt / a
		rest := dR // a − d_t, summed without d_t
		for l, dl := range d {
			if l != t {
				rest += dl
			}
		}
		f := sz * sz * dt
		link[t*kl+t] += f * rest / a
		for l := t + 1; l < k; l++ {
			link[t*kl+l] -= f * d[l] / a
		}
	}
}

// buildLinking sets link to the linking system (type comment above): the
// Schur complement S − Qᵀ·P⁻¹·Q and, with Fair, the row and column of z.
func (s *Solver) buildLinking(alpha float64) {
	n, k, kl := s.n, s.k, s.kl
	link := s.link
	clear(link)
	for t := range k {
		link[t*kl+t] = s.d[s.os+n+t]
	}
	for j := range n {
		s.job(j)
	}
	for t := range k {
		for l := t + 1; l < k; l++ {
			link[l*kl+t] = link[t*kl+l]
		}
	}
	if s.fair {
		for t := range k {
			link[k*kl+t] = link[t*kl+k]
		}
		link[k*kl+k] = -alpha - 1/s.d[s.ot]
	}
}

// solveNormal sets out = M⁻¹·r with the factorisation of factor:
// p = P⁻¹·r_J, the linking system for r_C − Qᵀ·p and −uᵀ·p, then
// dy_J = p − P⁻¹·u·z − P⁻¹·Q·dy_C.
func (s *Solver) solveNormal(out, r []float64) {
	if !s.fair {
		if s.k == 3 {
			s.solveThree(out, r)
			return
		}
		s.solvePlain(out, r)
		return
	}
	n, k := s.n, s.k
	y2 := s.rhsC
	copy(y2, r[s.or:s.or+k])
	sumE := 0.0
	for j := range n {
		a, b, c, det := s.pa[j], s.pb[j], s.pc[j], s.det[j]
		rr, re := r[j], r[s.or+k+j]
		pr, pe := (c*rr-b*re)/det, (-b*rr+a*re)/det
		s.pr[j], s.pe[j] = pr, pe
		sumE += pe
		q, rate := s.qs[j*k:(j+1)*k], s.rate[j*k:(j+1)*k]
		for t, qr := range q {
			y2[t] -= qr * (pr - rate[t]*pe)
		}
	}
	y2[k] = -sumE
	luSolve(s.link, s.piv, y2, s.kl)
	z := y2[k]
	copy(out[s.or:s.or+k], y2[:k])
	for j := range n {
		yr, ye := s.pr[j]-s.gr[j]*z, s.pe[j]-s.ge[j]*z
		zr, ze := s.zr[j*k:(j+1)*k], s.ze[j*k:(j+1)*k]
		for t, y := range y2[:k] {
			yr -= zr[t] * y
			ye -= ze[t] * y
		}
		out[j] = yr
		out[s.or+k+j] = ye
	}
}

// solvePlain is solveNormal without Fair (P is diagonal, there is no z).
func (s *Solver) solvePlain(out, r []float64) {
	n, k := s.n, s.k
	y2 := s.rhsC[:k]
	copy(y2, r[s.or:s.or+k])
	pa, prs := s.pa[:n], s.pr[:n]
	for j, a := range pa {
		pr := r[j] / a
		prs[j] = pr
		for t, qr := range s.qs[j*k : (j+1)*k] {
			y2[t] -= qr * pr
		}
	}
	luSolve(s.link, s.piv, s.rhsC, s.kl)
	copy(out[s.or:s.or+k], y2)
	for j, yr := range prs {
		for t, zr := range s.zr[j*k : (j+1)*k] {
			yr -= zr * y2[t]
		}
		out[j] = yr
	}
}

// luFactor factors the n×n matrix a in place (L below the diagonal with a
// unit diagonal, U on and above it) with partial pivoting, recording the
// row swaps in piv. A zero pivot (a singular matrix, which rounding alone
// can make) is replaced by a tiny one.
func luFactor(a []float64, piv []int, n int) {
	scale := 0.0
	for _, x := range a[:n*n] {
		scale = max(scale, math.Abs(x))
	}
	tiny := 1e-300 + 1e-17*scale
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		piv[c] = p
		if p != c {
			for i := range n {
				a[c*n+i], a[p*n+i] = a[p*n+i], a[c*n+i]
			}
		}
		if math.Abs(a[c*n+c]) < tiny {
			a[c*n+c] = math.Copysign(tiny, a[c*n+c])
		}
		for r := c + 1; r < n; r++ {
			f := a[r*n+c] / a[c*n+c]
			a[r*n+c] = f
			if f == 0 {
				continue
			}
			for i := c + 1; i < n; i++ {
				a[r*n+i] -= f * a[c*n+i]
			}
		}
	}
}

// luSolve solves a·x = b in place with the factors of luFactor.
func luSolve(a []float64, piv []int, b []float64, n int) {
	for c := range n {
		if p := piv[c]; p != c {
			b[c], b[p] = b[p], b[c]
		}
	}
	for r := range n {
		for i := range r {
			b[r] -= a[r*n+i] * b[i]
		}
	}
	for r := n - 1; r >= 0; r-- {
		for i := r + 1; i < n; i++ {
			b[r] -= a[r*n+i] * b[i]
		}
		b[r] /= a[r*n+r]
	}
}
