package engine

import "github.com/gpusched/gpusched/core/model"

// Reclaimer is implemented by Donor scalers that take lent GPUs back at
// once (Volcano's reclaim): GPUs that elastic jobs hold above their
// minimums are lent, and a waiting job goes to the GPU type it would get
// if they were free — on that type's free GPUs when it has enough, else
// on GPUs the lending jobs give back (Donor.Donate, on that type only) in
// the same round — unless the placer puts it on a faster type on the free
// GPUs as they are. So elastic growth never pushes an arriving job onto
// another, slower, GPU type or makes it wait. Reclaims reports whether the
// scaler does so (a scaler may make it a setting).
type Reclaimer interface {
	Donor
	Reclaims() bool
}

// reclaim places waiting job j, whose feasible types are ts, on the GPU
// type t it would take if every lent GPU were free: on the free GPUs of t
// when it has enough of them (even where the placer, seeing the lent GPUs
// busy, would prefer another type), else shrinking the lending jobs of t
// for it. It leaves j to the usual placement when nothing is lent or when
// that puts j on a type where it runs faster than on t (slowerThanNow). It
// reports whether it placed j; false leaves the round unchanged.
func (e *Engine) reclaim(s *model.State, j *model.Job, ts TypeSet, plan *Plan) bool {
	rc, ok := e.scaler.(Reclaimer)
	if !ok || !rc.Reclaims() {
		return false
	}
	r := e.resizer
	sizes, _ := e.sizes(j)
	n := sizes[0]
	fit := fitTypes(s, j, ts, n)
	t := r.lentType(func() Placement { return e.placeWith(s, j, n, fit) }, ts)
	if t < 0 || e.slowerThanNow(s, j, n, fit, t) {
		return false
	}
	only := TypeSet(1) << uint(t)
	if e.pool.Free(t) >= n {
		return e.tryPlace(s, j, ts&only, plan)
	}
	r.begin()
	for rc.Donate(s, e.now, r, j, only) {
		if e.tryPlace(s, j, ts&only, plan) {
			r.commit()
			return true
		}
	}
	r.rollback()
	return false
}

// slowerThanNow reports whether j, on n GPUs, runs slower on type t than
// on the type the placer gives it on the free GPUs as they are (types in
// fit). The placer is asked only when a faster type has n free GPUs.
func (e *Engine) slowerThanNow(s *model.State, j *model.Job, n int, fit TypeSet, t int) bool {
	v := s.Profile.Speed(j, t, n)
	faster := false
	for u := range s.Cluster.Types {
		faster = faster || (fit.Has(u) && e.pool.Free(u) >= n && s.Profile.Speed(j, u, n) > v)
	}
	if !faster {
		return false
	}
	now := e.placeWith(s, j, n, fit)
	return now.GPUs != nil && s.Profile.Speed(j, e.cluster.TypeOf(now.GPUs[0]), n) > v
}

// lentType returns the GPU type of the placement place makes once every
// lent GPU of a type in ts is free (every candidate shrunk to its
// minimum), or -1 when no GPU of those types is lent or place finds
// nothing. The resizer and the pool are left as they were.
func (r *Resizer) lentType(place func() Placement, ts TypeSet) int {
	lent := false
	for t, k := range r.surplus {
		lent = lent || (ts.Has(t) && k > 0)
	}
	if !lent {
		return -1
	}
	r.begin()
	for _, j := range r.Jobs() {
		if ts.Has(r.Type(j)) {
			for k := r.Size(j) - j.Spec.MinGPUs; k > 0 && !r.Shrink(j, k); k -= j.Spec.Replica() {
			}
		}
	}
	pl := place()
	r.rollback()
	if pl.GPUs == nil {
		return -1
	}
	return r.pool.c.TypeOf(pl.GPUs[0])
}
