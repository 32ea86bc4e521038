package policy

import (
	"cmp"
	"slices"
)

// entrySorter sorts one type's pairs as slices.SortStableFunc(es,
// entryOrder) would, by counting when they have few distinct keys: in a
// round where X is bestFits's every pair with a share has the same
// priority, or +Inf for a gang taken first (gangFirst), and every pair
// without one the same weight, so the stable sort's O(n log² n) moves are
// mostly spent on two or three keys. Its buffers are kept from round to
// round. With more keys it sorts their keys and positions (keyed).
type entrySorter struct {
	buf   []allocEntry
	group []uint8
	keys  []sortKey
}

// sortKey is a pair's keys and its position among the pairs sorted.
type sortKey struct {
	prio, deficit, x float64
	at               int
}

// maxKeys is the most distinct keys entrySorter sorts by counting; with
// more it falls back to the stable sort.
const maxKeys = 8

// sort sorts es by entryOrder, descending keys, ties kept in their order.
func (z *entrySorter) sort(es []allocEntry) {
	if entriesSorted(es) {
		return
	}
	if !z.count(es) {
		z.keyed(es)
	}
}

// keyed is sort by sorting the pairs' keys with their positions, ties in
// the keys broken by position: a strict total order (entryOrder is a total
// preorder, cmp.Compare's, NaN below every number), so any sort gives the
// one order slices.SortStableFunc(es, entryOrder) gives, and pdqsort moves
// the small keys O(n log n) times where the stable sort moves the pairs
// O(n log² n) times. Then the pairs are laid out in that order.
func (z *entrySorter) keyed(es []allocEntry) {
	z.keys = z.keys[:0]
	for i := range es {
		e := &es[i]
		z.keys = append(z.keys, sortKey{e.prio, e.deficit, e.x, i})
	}
	slices.SortFunc(z.keys, keyOrder)
	z.buf = append(z.buf[:0], es...)
	for i, k := range z.keys {
		es[i] = z.buf[k.at]
	}
}

// keyOrder is entryOrder on p's and q's keys, then their positions.
func keyOrder(p, q sortKey) int {
	if c := cmp.Compare(q.prio, p.prio); c != 0 {
		return c
	}
	if c := cmp.Compare(q.deficit, p.deficit); c != 0 {
		return c
	}
	if c := cmp.Compare(q.x, p.x); c != 0 {
		return c
	}
	return p.at - q.at
}

// count is sort by counting: it reports false, leaving es as it was, when
// es has more than maxKeys keys that entryOrder tells apart. The groups of
// equal keys are an equivalence of entryOrder (a total preorder: NaN is
// below every number and equal to NaN in cmp.Compare), so the stable
// order, each group's pairs in their order, groups by their key, is the
// one slices.SortStableFunc gives.
func (z *entrySorter) count(es []allocEntry) bool {
	var keys [maxKeys]*allocEntry
	var at [maxKeys]int // per group: its count, then where its next pair goes
	g := 0
	z.group = slices.Grow(z.group[:0], len(es))[:len(es)]
	for i := range es {
		k := 0
		for k < g && !sameKey(&es[i], keys[k]) {
			k++
		}
		if k == g {
			if g == maxKeys {
				return false
			}
			keys[g] = &es[i]
			g++
		}
		at[k]++
		z.group[i] = uint8(k)
	}
	var rank [maxKeys]int // the groups in entryOrder
	for k := range g {
		rank[k] = k
	}
	for i := 1; i < g; i++ { // insertion sort of at most maxKeys distinct keys
		for m := i; m > 0 && entryOrder(*keys[rank[m]], *keys[rank[m-1]]) < 0; m-- {
			rank[m], rank[m-1] = rank[m-1], rank[m]
		}
	}
	pos := 0
	for _, k := range rank[:g] {
		pos, at[k] = pos+at[k], pos
	}
	z.buf = append(z.buf[:0], es...)
	for i := range z.buf {
		k := z.group[i]
		es[at[k]] = z.buf[i]
		at[k]++
	}
	return true
}

// sameKey reports whether entryOrder finds p and q equal: each key equal,
// or both NaN (cmp.Compare's equality).
func sameKey(p, q *allocEntry) bool {
	return sameFloat(p.prio, q.prio) && sameFloat(p.deficit, q.deficit) && sameFloat(p.x, q.x)
}

// sameFloat is cmp.Compare(x, y) == 0.
func sameFloat(x, y float64) bool { return x == y || (x != x && y != y) }
