package lp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// special returns a random value, one time in four one of the values
// where float arithmetic is least forgiving.
func special(rng *rand.Rand) float64 {
	vals := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff8000000000123), math.Float64frombits(0xfff0000000000042), 5e-324, math.MaxFloat64}
	if rng.IntN(4) == 0 {
		return vals[rng.IntN(len(vals))]
	}
	return rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
}

// TestMaxAbsIsFold compares maxAbs bit for bit with the builtin max's fold
// (the former maxAbs) on vectors with NaNs of several payloads and signs,
// both zeros, infinities and denormals.
func TestMaxAbsIsFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 9))
	nan := 0
	for range 20000 {
		v := make([]float64, rng.IntN(12))
		for i := range v {
			v[i] = special(rng)
		}
		got, want := maxAbs(v), maxAbsFold(v)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("maxAbs(%v) = %v (%#x), the fold %v (%#x)", v, got, math.Float64bits(got), want, math.Float64bits(want))
		}
		if want != want {
			nan++
		}
	}
	if got, want := maxAbs([]float64{math.Copysign(0, -1)}), 0.0; math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("maxAbs(−0) = %v, want +0", got)
	}
	if nan < 1000 {
		t.Errorf("only %d vectors with a NaN", nan)
	}
}

// TestPlainProductsAreGeneral compares mulA and mulAT without Fair (their
// plain forms) bit for bit with the general products they replace, kept
// here, on random programs and vectors with special values.
func TestPlainProductsAreGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 10))
	for range 300 {
		p := random(rng, 1+rng.IntN(30), 1+rng.IntN(5), false, true)
		var s Solver
		s.setup(p)
		v, y := make([]float64, s.nv), make([]float64, s.nr)
		for i := range v {
			v[i] = special(rng)
		}
		for i := range y {
			y[i] = special(rng)
		}
		got, want := make([]float64, s.nr), make([]float64, s.nr)
		s.mulA(got, v)
		generalMulA(&s, want, v)
		sameBits(t, "mulA", got, want)
		got, want = make([]float64, s.nv), make([]float64, s.nv)
		s.mulAT(got, y)
		generalMulAT(&s, want, y)
		sameBits(t, "mulAT", got, want)
	}
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: entry %d is %v (%#x), the general product's %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// generalMulA is mulA as it was for every program.
func generalMulA(s *Solver, out, v []float64) {
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

// generalMulAT is mulAT as it was for every program.
func generalMulAT(s *Solver, out, y []float64) {
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
