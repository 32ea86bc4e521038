package placer

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Hetero is seed 003's heterogeneity-aware placer: it takes free GPUs of the
// type on which the job runs fastest, then looks for a running job to swap
// GPUs with when the swap raises total (normalised) throughput.
//
// Throughput m_xk of job x on type k is its speed there per GPU, normalised
// by its speed on its fastest type, so that gains of different jobs (steps
// of different models) can be added: n_x·m_xk is the fraction of its best
// throughput that x reaches on k. The swap of job s (n_s GPUs, chosen type
// k) with running job i (n_i <= n_s GPUs of type j) gains
// n_i·(m_ik − m_ij) + n_s·(m_sj − m_sk) (seed 003, placement step 2). In the
// swap i moves onto n_i of the GPUs chosen for s, and s takes i's GPUs plus
// n_s − n_i free GPUs of type j (the seed leaves open where s's other GPUs
// come from when n_i < n_s). Both must be feasible there (memory, non-zero
// throughput). The largest positive gain wins; ties go to the job that
// arrived first. No positive gain: s gets the chosen free GPUs.
//
// Running jobs are indexed by (their type j, target type k, GPU count) in
// descending order of n_i·(m_ik − m_ij), so a search costs O(types² ×
// distinct GPU counts), not O(running jobs). The index is kept from round
// to round, the jobs that started, stopped, moved or were resized put in
// or taken out at the first placement of a round (refresh); it is built
// again in a new state, a bucket then sorted when a search first reaches
// it.
type Hetero struct {
	round int
	// pairs holds, per (from, to) type pair (from·types + to), the
	// index's buckets by ascending GPU count; nil before the first
	// refresh. A bucket stays, emptied, when no running job is in it.
	pairs [][]sized
	// jobs holds, per running job indexed, its best speed and its gains,
	// kept while its state, GPU count and type are those they were
	// computed for (the map is started again when it grows past twice the
	// running jobs plus 1,024: refresh).
	jobs map[*model.Job]*indexed
	// state is the state of the last refresh, and mark its count of
	// allocation changes then (model.State.MovedSince): the jobs that
	// started, stopped, moved or were resized since are those logged after
	// it.
	state *model.State
	mark  uint64
	last  jobView
}

// indexed is what Hetero keeps of a running job for its index.
type indexed struct {
	best  float64
	state *model.State
	n     int
	from  int
	to    engine.TypeSet // the types it could move to
	gains []float64      // per type of to: n_i·(m_ik − m_ij)
	in    bool           // its candidates are in the buckets (as from, n, to and gains say)
}

// sized is a bucket of the index and its GPU count.
type sized struct {
	gpus int
	list *swapList
}

// jobView caches the speeds on n GPUs of each type, and the best speed
// (bestSpeed), of the job last placed: the engine places a job several
// times in a row (its requested size, its minimum, prefixes of stop
// candidates). It is valid for the state and pool round it was computed in.
type jobView struct {
	state *model.State
	pool  *engine.Pool
	round int
	job   *model.Job
	n     int
	speed []float64
	best  float64
}

// swapList is one bucket of the index: its candidates by descending gain
// (once sorted: a bucket is sorted when first searched in its round), of
// which those before head were moved or preempted this round. Its storage
// is kept from round to round.
type swapList struct {
	list   []candidate
	head   int
	sorted bool
}

// candidate is a running job that could give up its GPUs of one type in a
// swap, with what the swap would gain.
type candidate struct {
	gain float64 // n_i·(m_ik − m_ij)
	job  *model.Job
}

// Name returns "hetero".
func (*Hetero) Name() string { return "hetero" }

// Place implements engine.Placer.
func (h *Hetero) Place(s *model.State, p *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	if !room(s, p, n, types) {
		return engine.Placement{}
	}
	v := h.view(s, p, j, n)
	k := fastestOf(v.speed, p, n, types)
	if k < 0 {
		return engine.Placement{}
	}
	chosen := Fewest(p, n, 1<<uint(k))
	h.refresh(s, p)
	bestS := v.best
	var swap candidate
	from, bestGain := -1, 0.0
	nt := len(s.Cluster.Types)
	for t := range nt {
		if t == k || !types.Has(t) {
			continue
		}
		own := float64(n) * (norm(v.speed[t], bestS, n) - norm(v.speed[k], bestS, n))
		for _, b := range h.pairs[t*nt+k] {
			if b.gpus > n {
				break
			}
			c, ok := h.top(p, t, b.list, n-b.gpus)
			if !ok {
				continue
			}
			if g := c.gain + own; g > bestGain || (g == bestGain && from >= 0 && c.job.Seq < swap.job.Seq) {
				swap, from, bestGain = c, t, g
			}
		}
	}
	if from < 0 {
		return engine.Placement{GPUs: chosen}
	}
	if pl := swapPlacement(p, swap.job, chosen, n, from); p.FitsPlacement(j, pl) {
		return pl
	}
	return engine.Placement{GPUs: chosen} // the swap does not fit CPU, memory, …
}

// room reports whether some type in types has at least n free GPUs.
func room(s *model.State, p *engine.Pool, n int, types engine.TypeSet) bool {
	for t := range s.Cluster.Types {
		if types.Has(t) && p.Free(t) >= n {
			return true
		}
	}
	return false
}

// view returns the speeds of j on n GPUs (jobView), computed again unless
// they are those of the last call in this round.
func (h *Hetero) view(s *model.State, p *engine.Pool, j *model.Job, n int) *jobView {
	v := &h.last
	if v.job == j && v.n == n && v.state == s && v.pool == p && v.round == p.Round() {
		return v
	}
	v.state, v.pool, v.round, v.job, v.n = s, p, p.Round(), j, n
	v.speed = v.speed[:0]
	for t := range s.Cluster.Types {
		v.speed = append(v.speed, s.Profile.Speed(j, t, n))
	}
	v.best = 0 // bestSpeed: BestSpeed over the feasible types
	ts := engine.FeasibleSpeeds(s, j, n, v.speed)
	for t, sp := range v.speed {
		if ts.Has(t) && sp > v.best {
			v.best = sp
		}
	}
	return v
}

// fastestFree returns the feasible type with at least n free GPUs on which
// j runs fastest (lowest index among equals), or -1.
func fastestFree(s *model.State, p *engine.Pool, j *model.Job, n int, types engine.TypeSet) int {
	best, bt := 0.0, -1
	for t := range s.Cluster.Types {
		if !types.Has(t) || p.Free(t) < n {
			continue
		}
		if v := s.Profile.Speed(j, t, n); v > best {
			best, bt = v, t
		}
	}
	return bt
}

// fastestOf is fastestFree for a job whose speed on each type is known.
func fastestOf(speed []float64, p *engine.Pool, n int, types engine.TypeSet) int {
	best, bt := 0.0, -1
	for t, v := range speed {
		if !types.Has(t) || p.Free(t) < n {
			continue
		}
		if v > best {
			best, bt = v, t
		}
	}
	return bt
}

// swapPlacement builds the swap: i moves onto the first GPUs chosen for the
// new job, which takes i's GPUs plus free GPUs of type from.
func swapPlacement(p *engine.Pool, i *model.Job, chosen []model.GPU, n, from int) engine.Placement {
	extra := n - len(i.Alloc)
	gpus := append([]model.GPU(nil), i.Alloc...)
	if extra > 0 {
		gpus = append(gpus, Fewest(p, extra, 1<<uint(from))...)
	}
	moved := append([]model.GPU(nil), chosen[:len(i.Alloc)]...)
	return engine.Placement{GPUs: gpus, Moves: []engine.Assignment{{Job: i, GPUs: moved}}}
}

// top returns the best still-movable candidate of bucket l of the index,
// provided that type from has extra more free GPUs for the new job.
func (h *Hetero) top(p *engine.Pool, from int, l *swapList, extra int) (candidate, bool) {
	if p.Free(from) < extra {
		return candidate{}, false
	}
	if !l.sorted {
		slices.SortFunc(l.list, byGain)
		l.sorted = true
	}
	for l.head < len(l.list) && !p.Settled(l.list[l.head].job) {
		l.head++ // moved or preempted this round: gone for good
	}
	if l.head == len(l.list) {
		return candidate{}, false
	}
	return l.list[l.head], true
}

// refresh brings the index up to date with s's running jobs at the first
// placement of a round: from the last refresh's, by the jobs whose
// allocation changed since (update, from s's log), or from scratch
// (rebuild) at the first, when the map of jobs is started again, when s no
// longer knows what changed, or in a new state (a shell builds one every
// round or when a profile changes, and every job's gains are then
// computed again). Either way, each bucket holds exactly the running jobs
// of its type pair and GPU count and, once sorted, is in byGain's order, a
// strict one (ties by Seq): the same bucket in the same order
// (TestHeteroIndexIncremental).
func (h *Hetero) refresh(s *model.State, p *engine.Pool) {
	if h.pairs != nil && h.round == p.Round() {
		return
	}
	h.round = p.Round()
	nt := len(s.Cluster.Types)
	moved, known := s.MovedSince(h.mark)
	full := !known || h.pairs == nil || len(h.pairs) != nt*nt || h.state != s
	if h.jobs == nil || len(h.jobs) > 2*len(s.Running())+1024 {
		h.jobs = map[*model.Job]*indexed{}
		full = true
	}
	h.state, h.mark = s, s.MovedMark()
	if full {
		h.rebuild(s)
	} else {
		h.update(s, moved)
	}
}

// rebuild fills the index again with every running job of s; its buckets
// are sorted when first searched (top).
func (h *Hetero) rebuild(s *model.State) {
	nt := len(s.Cluster.Types)
	if len(h.pairs) != nt*nt {
		h.pairs = make([][]sized, nt*nt)
	}
	for _, bs := range h.pairs {
		for _, b := range bs {
			clear(b.list.list)
			b.list.list, b.list.head, b.list.sorted = b.list.list[:0], 0, false
		}
	}
	for _, x := range h.jobs {
		x.in = false
	}
	for _, i := range s.Running() {
		x := h.indexOf(s, i, nil)
		x.in = true
		for to := range nt {
			if x.to.Has(to) {
				l := h.bucket(x.from*nt+to, x.n)
				l.list = append(l.list, candidate{x.gains[to], i})
			}
		}
	}
}

// update brings the index from the last refresh's running jobs to s's,
// given the jobs whose allocation changed since (moved; every other job
// runs, or does not, as it did then): one that runs now and started,
// moved or was resized is put in (taken out first from where it was); one
// that no longer runs is taken out, and forgotten once it has ended.
// Every bucket starts the round with none of its jobs passed over (head
// 0).
func (h *Hetero) update(s *model.State, moved []*model.Job) {
	for _, bs := range h.pairs {
		for _, b := range bs {
			b.list.head = 0
		}
	}
	for _, i := range moved {
		x := h.jobs[i]
		if i.State != model.Running {
			if x != nil && x.in {
				h.unlist(s, x, i)
			}
			if x != nil && i.State != model.Waiting {
				delete(h.jobs, i) // ended: it will not run again
			}
			continue
		}
		from, ni := s.TypeOn(i), len(i.Alloc)
		if x == nil || !x.in || x.state != s || x.n != ni || x.from != from {
			if x != nil && x.in {
				h.unlist(s, x, i)
			}
			x = h.indexOf(s, i, x)
			h.list(s, x, i)
		}
	}
}

// list puts running job i's candidates (x) into their buckets, in order.
func (h *Hetero) list(s *model.State, x *indexed, i *model.Job) {
	nt := len(s.Cluster.Types)
	for to := range nt {
		if !x.to.Has(to) {
			continue
		}
		l := h.sortedBucket(x.from*nt+to, x.n)
		c := candidate{x.gains[to], i}
		at, _ := slices.BinarySearchFunc(l.list, c, byGain)
		l.list = slices.Insert(l.list, at, c)
	}
	x.in = true
}

// unlist takes job i's candidates (x, as they were listed) out of their
// buckets.
func (h *Hetero) unlist(s *model.State, x *indexed, i *model.Job) {
	nt := len(s.Cluster.Types)
	for to := range nt {
		if !x.to.Has(to) {
			continue
		}
		l := h.sortedBucket(x.from*nt+to, x.n)
		at, _ := slices.BinarySearchFunc(l.list, candidate{x.gains[to], i}, byGain)
		if at >= len(l.list) || l.list[at].job != i {
			at = slices.IndexFunc(l.list, func(c candidate) bool { return c.job == i })
		}
		if at >= 0 {
			l.list = slices.Delete(l.list, at, at+1)
		}
	}
	x.in = false
}

// sortedBucket is bucket, sorted.
func (h *Hetero) sortedBucket(pi, gpus int) *swapList {
	l := h.bucket(pi, gpus)
	if !l.sorted {
		slices.SortFunc(l.list, byGain)
		l.sorted = true
	}
	return l
}

// indexOf returns what the index keeps of running job i (x, when known
// already: its entry of h.jobs), its gains computed again unless i's
// state, GPU count and type are those of the last time (the state fixes
// its speeds: see model.State).
func (h *Hetero) indexOf(s *model.State, i *model.Job, x *indexed) *indexed {
	from, ni := s.TypeOn(i), len(i.Alloc)
	if x == nil {
		x = h.jobs[i]
	}
	if x == nil {
		x = &indexed{}
		h.jobs[i] = x
	} else if x.state == s && x.n == ni && x.from == from {
		return x
	}
	x.state, x.n, x.from = s, ni, from
	x.best = bestSpeed(s, i, ni)
	nt := len(s.Cluster.Types)
	if len(x.gains) != nt {
		x.gains = make([]float64, nt)
	}
	for t := range nt {
		x.gains[t] = s.Profile.Speed(i, t, ni)
	}
	x.to = engine.FeasibleSpeeds(s, i, ni, x.gains)
	here := norm(x.gains[from], x.best, ni)
	for to := range nt {
		if to == from || !x.to.Has(to) {
			x.to &^= 1 << uint(to)
			x.gains[to] = 0
			continue
		}
		x.gains[to] = float64(ni) * (norm(x.gains[to], x.best, ni) - here)
	}
	return x
}

// byGain orders candidates by descending gain, ties by ascending Seq.
func byGain(a, b candidate) int {
	if c := cmp.Compare(b.gain, a.gain); c != 0 {
		return c
	}
	return a.job.Seq - b.job.Seq
}

// bucket returns the bucket of type pair pi (from·types + to) for jobs of
// gpus GPUs, adding it, in order of GPU count, when there is none.
func (h *Hetero) bucket(pi, gpus int) *swapList {
	bs := h.pairs[pi]
	i := 0
	for i < len(bs) && bs[i].gpus < gpus {
		i++
	}
	if i < len(bs) && bs[i].gpus == gpus {
		return bs[i].list
	}
	l := &swapList{}
	h.pairs[pi] = slices.Insert(bs, i, sized{gpus, l})
	return l
}

// norm is the per-GPU throughput of a job of speed v on n GPUs of a type,
// normalised by its throughput on its fastest type (speed best): m_xk.
func norm(v, best float64, n int) float64 {
	if best <= 0 {
		return 0
	}
	return v / best / float64(n)
}

func bestSpeed(s *model.State, j *model.Job, n int) float64 {
	v, _ := engine.BestSpeed(s, j, n, engine.Feasible(s, j, n))
	return v
}
