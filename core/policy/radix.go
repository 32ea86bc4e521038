package policy

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// radixScratch is what sortSRTF reuses from one sort to the next.
type radixScratch struct {
	tmp    []srtfKey
	counts [2 * radixDigits][1 << radixBits]int32
}

// sortSRTF sorts keys by left, then seq, with the scratch of sc; it
// returns the sorted keys, in keys' array or in sc's (which then takes
// keys' array for the next sort). Where every left is a non-negative number and every
// seq non-negative, it is a least-significant-digit radix sort on the
// bits of seq and then of left (a non-negative float64's bits order as
// its value does): a round of srtf sorts every active job, 12,000 at the
// scale of the benchmarks, and a comparison sort spent 7 % of the round
// there. Otherwise it falls back to a comparison sort. Both give the same
// order, seq being unique.
func (sc *radixScratch) sortSRTF(keys []srtfKey) []srtfKey {
	if !radixable(keys) {
		slices.SortFunc(keys, compareSRTF)
		return keys
	}
	if cap(sc.tmp) < len(keys) {
		sc.tmp = make([]srtfKey, len(keys))
	}
	tmp, counts := sc.tmp[:len(keys)], &sc.counts
	clear(counts[:])
	seqs := 0 // digits of seq that are not all zero
	for _, k := range keys {
		seqs = max(seqs, (bits.Len64(uint64(k.seq))+radixBits-1)/radixBits)
	}
	for _, k := range keys {
		lo, hi := uint64(k.seq), math.Float64bits(k.left)
		for d := range seqs {
			counts[d][(lo>>(d*radixBits))&radixMask]++
		}
		for d := range radixDigits {
			counts[radixDigits+d][(hi>>(d*radixBits))&radixMask]++
		}
	}
	src, dst := keys, tmp
	for d := range counts {
		if (d >= radixDigits || d < seqs) && radixPass(src, dst, &counts[d], d) {
			src, dst = dst, src
		}
	}
	sc.tmp = dst[:0]
	return src
}

// radixBits is the width of one digit; radixDigits digits cover 64 bits.
const (
	radixBits   = 11
	radixMask   = 1<<radixBits - 1
	radixDigits = (64 + radixBits - 1) / radixBits
)

// radixable reports whether the radix sort orders keys rightly: no
// negative left (nor -0), no NaN, no negative seq.
func radixable(keys []srtfKey) bool {
	for _, k := range keys {
		if math.Signbit(k.left) || math.IsNaN(k.left) || k.seq < 0 {
			return false
		}
	}
	return true
}

// radixPass moves src into dst stably by digit d (0 to radixDigits-1 of
// seq, then of left's bits) given that digit's counts, and reports
// whether it moved anything: a digit all keys share needs no pass.
func radixPass(src, dst []srtfKey, count *[1 << radixBits]int32, d int) bool {
	for _, c := range count {
		if int(c) == len(src) {
			return false
		}
	}
	at, sum := count, int32(0) // the counts become the next places
	for b, c := range count {
		at[b], sum = sum, sum+c
	}
	shift := uint(d%radixDigits) * radixBits
	for _, k := range src {
		v := uint64(k.seq)
		if d >= radixDigits {
			v = math.Float64bits(k.left)
		}
		b := (v >> shift) & radixMask
		dst[at[b]] = k
		at[b]++
	}
	return true
}

// compareSRTF orders keys by left, then seq.
func compareSRTF(a, b srtfKey) int {
	if c := cmp.Compare(a.left, b.left); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}
