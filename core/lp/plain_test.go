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
// plain forms) bit for bit with the general products (mulAGeneral,
// mulATGeneral, which every program used before the plain forms), on
// random programs and vectors with special values.
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
		s.mulAGeneral(want, v)
		sameBits(t, "mulA", got, want)
		got, want = make([]float64, s.nv), make([]float64, s.nv)
		s.mulAT(got, y)
		s.mulATGeneral(want, y)
		sameBits(t, "mulAT", got, want)
	}
}

// sameBits fails t at the first entry whose bits differ.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: entry %d is %v (%#x), the general product's %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}
