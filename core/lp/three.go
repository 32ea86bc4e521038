package lp

// The forms below are the plain (no Fair) loops for programs on exactly
// three types, the shape of every three-type cluster's allocation program
// (docs/BENCHMARKS.md, issue 29). Each keeps what the general loops
// accumulate in memory across jobs (the capacity rows' sums, the linking
// system) in local variables, and reads a job's three entries at once.
// Every value is computed by the same operations, in the same order, as
// in the loops they stand for (mulAPlain, mulATPlain, factorPlain with
// jobPlain, solvePlain), so the results are the same bits; a test holds
// them to it (TestThreeIsPlain).

// mulAThree is mulAPlain for three types (out need not be cleared).
func (s *Solver) mulAThree(out, v []float64) {
	n := s.n
	size, x := s.size[:n], v[:3*n]
	rows, slack := out[:n], v[s.os:s.os+n+3]
	c0, c1, c2 := 0.0, 0.0, 0.0 // a cleared out's capacity rows
	for j, sz := range size {
		x0, x1, x2 := x[3*j], x[3*j+1], x[3*j+2]
		r := 0.0
		r += x0
		c0 += sz * x0
		r += x1
		c1 += sz * x1
		r += x2
		c2 += sz * x2
		rows[j] = r + slack[j]
	}
	capOut := out[s.or : s.or+3]
	capOut[0] = c0 + slack[n]
	capOut[1] = c1 + slack[n+1]
	capOut[2] = c2 + slack[n+2]
}

// mulATThree is mulATPlain for three types.
func (s *Solver) mulATThree(out, y []float64) {
	n := s.n
	yc := y[s.or : s.or+3]
	c0, c1, c2 := yc[0], yc[1], yc[2]
	size, o := s.size[:n], out[:3*n]
	for j, sz := range size {
		yr := y[j]
		o[3*j] = yr + sz*c0
		o[3*j+1] = yr + sz*c1
		o[3*j+2] = yr + sz*c2
	}
	copy(out[s.os:], y)
}

// factorThree is factorPlain for three types: the blocks, P⁻¹·Q and the
// linking system (buildLinking with jobPlain) in one pass over the jobs,
// then its LU factors.
func (s *Solver) factorThree() {
	n := s.n
	d, dR, dC := s.d[:3*n], s.d[s.os:s.os+n], s.d[s.os+n:s.os+n+3]
	size, pa, qs, zr := s.size[:n], s.pa[:n], s.qs[:3*n], s.zr[:3*n]
	l00, l11, l22 := dC[0], dC[1], dC[2] // link's diagonal starts at S
	l01, l02, l12 := 0.0, 0.0, 0.0       // and the rest at a cleared 0
	for j, sz := range size {
		d0, d1, d2 := d[3*j], d[3*j+1], d[3*j+2]
		r := dR[j]
		a := r
		qs[3*j] = sz * d0
		a += d0
		qs[3*j+1] = sz * d1
		a += d1
		qs[3*j+2] = sz * d2
		a += d2
		pa[j] = a
		zr[3*j], zr[3*j+1], zr[3*j+2] = 0, 0, 0
		if d0 != 0 {
			zr[3*j] = sz * d0 / a
			rest := r
			rest += d1
			rest += d2
			f := sz * sz * d0
			l00 += f * rest / a
			l01 -= f * d1 / a
			l02 -= f * d2 / a
		}
		if d1 != 0 {
			zr[3*j+1] = sz * d1 / a
			rest := r
			rest += d0
			rest += d2
			f := sz * sz * d1
			l11 += f * rest / a
			l12 -= f * d2 / a
		}
		if d2 != 0 {
			zr[3*j+2] = sz * d2 / a
			rest := r
			rest += d0
			rest += d1
			f := sz * sz * d2
			l22 += f * rest / a
		}
	}
	link := s.link[:9]
	link[0], link[1], link[2] = l00, l01, l02
	link[3], link[4], link[5] = l01, l11, l12
	link[6], link[7], link[8] = l02, l12, l22
	luFactor(s.link, s.piv, s.kl)
}

// solveThree is solvePlain for three types.
func (s *Solver) solveThree(out, r []float64) {
	n := s.n
	rc := r[s.or : s.or+3]
	y0, y1, y2 := rc[0], rc[1], rc[2]
	pa, prs, qs, rj := s.pa[:n], s.pr[:n], s.qs[:3*n], r[:n]
	for j, a := range pa {
		pr := rj[j] / a
		prs[j] = pr
		y0 -= qs[3*j] * pr
		y1 -= qs[3*j+1] * pr
		y2 -= qs[3*j+2] * pr
	}
	yc := s.rhsC[:3]
	yc[0], yc[1], yc[2] = y0, y1, y2
	luSolve(s.link, s.piv, s.rhsC, s.kl)
	y0, y1, y2 = yc[0], yc[1], yc[2]
	copy(out[s.or:s.or+3], yc)
	zr, o := s.zr[:3*n], out[:n]
	for j, yr := range prs {
		yr -= zr[3*j] * y0
		yr -= zr[3*j+1] * y1
		yr -= zr[3*j+2] * y2
		o[j] = yr
	}
}
