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
// Running jobs are indexed once per round by (their type j, target type k,
// GPU count) in descending order of n_i·(m_ik − m_ij), so a search costs
// O(types² × distinct GPU counts), not O(running jobs).
type Hetero struct {
	round int
	index map[swapKey][]candidate
	best  map[*model.Job]float64
}

type swapKey struct{ from, to, gpus int }

type candidate struct {
	gain float64 // n_i·(m_ik − m_ij)
	job  *model.Job
}

// Name returns "hetero".
func (*Hetero) Name() string { return "hetero" }

// Place implements engine.Placer.
func (h *Hetero) Place(s *model.State, p *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	k := fastestFree(s, p, j, n, types)
	if k < 0 {
		return engine.Placement{}
	}
	chosen := Fewest(p, n, 1<<uint(k))
	h.refresh(s, p)
	bestS := bestSpeed(s, j, n)
	var swap candidate
	from, bestGain := -1, 0.0
	for t := range s.Cluster.Types {
		if t == k || !types.Has(t) {
			continue
		}
		own := float64(n) * (m(s, j, t, n, bestS) - m(s, j, k, n, bestS))
		for size := 1; size <= n; size++ {
			c, ok := h.top(p, swapKey{t, k, size}, n-size)
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
	return swapPlacement(p, swap.job, chosen, n, from)
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

// top returns the best still-movable candidate of a bucket, provided that
// type key.from has extra more free GPUs for the new job.
func (h *Hetero) top(p *engine.Pool, key swapKey, extra int) (candidate, bool) {
	if p.Free(key.from) < extra {
		return candidate{}, false
	}
	list := h.index[key]
	for len(list) > 0 && !p.Settled(list[0].job) {
		list = list[1:] // moved or preempted this round: gone for good
	}
	h.index[key] = list
	if len(list) == 0 {
		return candidate{}, false
	}
	return list[0], true
}

// refresh rebuilds the index of running jobs at the first placement of a
// round.
func (h *Hetero) refresh(s *model.State, p *engine.Pool) {
	if h.index != nil && h.round == p.Round() {
		return
	}
	h.round = p.Round()
	h.index = map[swapKey][]candidate{}
	if h.best == nil || len(h.best) > 2*len(s.Running())+1024 {
		h.best = map[*model.Job]float64{}
	}
	for _, i := range s.Running() {
		from, ni := s.Cluster.TypeOf(i.Alloc[0]), len(i.Alloc)
		best, ok := h.best[i]
		if !ok {
			best = bestSpeed(s, i, ni)
			h.best[i] = best
		}
		feasible := engine.Feasible(s, i, ni)
		here := m(s, i, from, ni, best)
		for to := range s.Cluster.Types {
			if to == from || !feasible.Has(to) {
				continue
			}
			key := swapKey{from, to, ni}
			h.index[key] = append(h.index[key], candidate{float64(ni) * (m(s, i, to, ni, best) - here), i})
		}
	}
	for _, list := range h.index {
		slices.SortFunc(list, func(a, b candidate) int {
			if c := cmp.Compare(b.gain, a.gain); c != 0 {
				return c
			}
			return a.job.Seq - b.job.Seq
		})
	}
}

// m is the per-GPU throughput of x on type t with n GPUs, normalised by its
// throughput on its fastest type.
func m(s *model.State, x *model.Job, t, n int, best float64) float64 {
	if best <= 0 {
		return 0
	}
	return s.Profile.Speed(x, t, n) / best / float64(n)
}

func bestSpeed(s *model.State, j *model.Job, n int) float64 {
	v, _ := engine.BestSpeed(s, j, n, engine.Feasible(s, j, n))
	return v
}
