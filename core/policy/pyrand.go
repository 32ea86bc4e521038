package policy

// pyRand is Python's random.Random (MT19937, Matsumoto & Nishimura 1998,
// seeded as CPython seeds it from an integer), so that the Gavel-compatible
// FIFO makes the same random choices as Gavel's own simulator with the same
// seed: Gavel's fifo draws a GPU type with rng.randrange (policies/fifo.py).
// Only what that needs is here: seeding from a non-negative integer and
// randrange(n).
type pyRand struct {
	mt  [624]uint32
	idx int
}

// newPyRand returns the generator random.Random(seed) would be.
func newPyRand(seed uint64) *pyRand {
	r := &pyRand{}
	key := []uint32{uint32(seed)}
	if hi := uint32(seed >> 32); hi != 0 {
		key = append(key, hi)
	}
	r.initByArray(key)
	return r
}

func (r *pyRand) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = 624
}

// initByArray is MT19937's init_by_array, which CPython uses for integer
// seeds (the integer's 32-bit words, least significant first).
func (r *pyRand) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(624, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRand) uint32() uint32 {
	if r.idx >= 624 {
		for k := range 624 {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%624]&0x7fffffff
			v := r.mt[(k+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// randrange returns random.randrange(n) for 1 ≤ n < 2³²: CPython's
// _randbelow_with_getrandbits draws getrandbits(n.bit_length()) until the
// draw is below n (so even n = 1 consumes draws).
func (r *pyRand) randrange(n int) int {
	k := 0
	for v := n; v > 0; v >>= 1 {
		k++
	}
	for {
		if v := int(r.uint32() >> (32 - uint(k))); v < n {
			return v
		}
	}
}
