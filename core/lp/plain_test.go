package lp

import (
	"math"
	"math/rand/v2"
	"slices"
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
		s.mulAPlain(got, v)
		s.mulAGeneral(want, v)
		sameBits(t, "mulAPlain", got, want)
		got, want = make([]float64, s.nv), make([]float64, s.nv)
		s.mulATPlain(got, y)
		s.mulATGeneral(want, y)
		sameBits(t, "mulATPlain", got, want)
	}
}

// sameBits fails t at the first entry whose bits differ.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	sameBitsBut(t, what, got, want, false)
}

// sameBitsBut is sameBits; with nanPayloads, two NaNs count as the same
// whatever their payloads and signs (see TestThreeIsPlain).
func sameBitsBut(t *testing.T, what string, got, want []float64, nanPayloads bool) {
	t.Helper()
	for i := range want {
		if nanPayloads && got[i] != got[i] && want[i] != want[i] {
			continue
		}
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: entry %d of %d is %v (%#x), the general product's %v (%#x)", what, i, len(want), got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// TestThreeIsPlain compares the three-type forms (mulAThree, mulATThree,
// factorThree, solveThree) bit for bit with the plain loops they stand
// for, on random three-type programs whose vectors and d hold special
// values (both zeros, infinities, NaNs, denormals) one time in four, and
// zeros in d (shares whose terms the linking system skips).
//
// One thing is let differ: which payload a NaN result carries when both
// operands of an addition are NaNs. x86 keeps the first operand's, and Go
// leaves the order of a sum's operands in the machine code to the
// register allocator (an addition commutes), which writes c + p as p + c
// where c is kept in a register rather than in memory. Every number, and
// NaN where a NaN is, is the same; the payloads of two different NaNs
// meeting cannot arise from the programs' own arithmetic, whose NaNs all
// carry the one default payload.
func TestThreeIsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 11))
	numbers := 0
	for range 500 {
		p := random(rng, 1+rng.IntN(40), 3, false, true)
		var s Solver
		s.setup(p)
		finite := rng.IntN(2) == 0 // values of one scale, whose sums' order shows
		value := func() float64 {
			if finite {
				return rng.NormFloat64() * math.Exp(2*rng.NormFloat64())
			}
			return special(rng)
		}
		v, y := make([]float64, s.nv), make([]float64, s.nr)
		for i := range v {
			v[i] = value()
		}
		for i := range y {
			y[i] = value()
		}
		got, want := make([]float64, s.nr), make([]float64, s.nr)
		for i := range got {
			got[i] = special(rng) // mulAThree writes every entry
		}
		s.mulAThree(got, v)
		s.mulAPlain(want, v)
		sameBitsBut(t, "mulAThree", got, want, true)
		got, want = make([]float64, s.nv), make([]float64, s.nv)
		s.mulATThree(got, y)
		s.mulATPlain(want, y)
		sameBitsBut(t, "mulATThree", got, want, true)
		// Without finite, one NaN in d makes the whole linking system NaN.
		for i := range s.d {
			s.d[i] = math.Exp(2 * rng.NormFloat64())
			if !finite {
				s.d[i] = math.Abs(special(rng))
			}
			switch rng.IntN(6) {
			case 0:
				s.d[i] = 0
			case 1:
				s.d[i] = 1e300 // a basic share's huge d
			}
		}
		plain, three := s.factorsBy((*Solver).factorPlain, (*Solver).solvePlain, y),
			s.factorsBy((*Solver).factorThree, (*Solver).solveThree, y)
		for i := range plain {
			sameBitsBut(t, "factorThree and solveThree", three[i], plain[i], true)
			for _, x := range plain[i] {
				if x == x {
					numbers++
				}
			}
		}
	}
	if numbers < 20000 {
		t.Errorf("only %d entries of the factors and solutions are numbers", numbers)
	}
}

// factorsBy factors s's normal equations with factor, solves them for r
// with solve, and returns what the two wrote: the blocks, P⁻¹·Q, the
// linking system's factors and row swaps, and the solution.
func (s *Solver) factorsBy(factor func(*Solver), solve func(*Solver, []float64, []float64), r []float64) [][]float64 {
	for _, b := range [][]float64{s.qs, s.pa, s.zr, s.link, s.pr} {
		for i := range b {
			b[i] = math.NaN() // every entry is written before it is read
		}
	}
	factor(s)
	out := make([]float64, s.nr)
	solve(s, out, r)
	piv := make([]float64, len(s.piv))
	for i, p := range s.piv {
		piv[i] = float64(p)
	}
	return [][]float64{slices.Clone(s.qs), slices.Clone(s.pa), slices.Clone(s.zr), slices.Clone(s.link), piv,
		slices.Clone(s.pr), out}
}
