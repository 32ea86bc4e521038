package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortSRTF checks the radix sort against the comparison sort on
// random keys: ties in left (broken by seq), zeros, infinities, tiny and
// huge values, large seqs, and the inputs that must fall back (negative
// left, -0, negative seq).
func TestSortSRTF(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lefts := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.Inf(1)
		case 2:
			return float64(rng.IntN(5)) // ties
		case 3:
			return math.SmallestNonzeroFloat64 * float64(rng.IntN(3)+1)
		case 4:
			return rng.Float64() * 1e300
		default:
			return rng.Float64() * 1e6
		}
	}
	for c := range 300 {
		n := rng.IntN(3000)
		keys := make([]srtfKey, n)
		for i, s := range rng.Perm(n) {
			seq := s
			if c%3 == 0 {
				seq = s<<40 + rng.IntN(1<<20) // large seqs, still unique
			}
			keys[i] = srtfKey{left: lefts(), seq: seq}
		}
		switch c % 10 {
		case 7:
			if n > 0 {
				keys[rng.IntN(n)].left = -1
			}
		case 8:
			if n > 0 {
				keys[rng.IntN(n)].left = math.Copysign(0, -1)
			}
		case 9:
			if n > 0 {
				keys[rng.IntN(n)].seq = -5
			}
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, compareSRTF)
		got := new(radixScratch).sortSRTF(keys)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (%d keys): the radix order differs from the comparison order", c, n)
		}
	}
}

// TestRadixable names the inputs the radix sort leaves to the comparison
// sort.
func TestRadixable(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  srtfKey
		want bool
	}{
		{"zero", srtfKey{left: 0, seq: 1}, true},
		{"infinity", srtfKey{left: math.Inf(1), seq: 1}, true},
		{"negative zero", srtfKey{left: math.Copysign(0, -1), seq: 1}, false},
		{"negative", srtfKey{left: -3, seq: 1}, false},
		{"NaN", srtfKey{left: math.NaN(), seq: 1}, false},
		{"negative seq", srtfKey{left: 2, seq: -1}, false},
	} {
		if got := radixable([]srtfKey{tc.key}); got != tc.want {
			t.Errorf("%s: radixable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
