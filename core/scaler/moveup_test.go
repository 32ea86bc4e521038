package scaler_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/scaler"
)

// fastBy runs every job f times as fast per GPU on type 0 as on type 1.
type fastBy float64

func (f fastBy) Speed(_ *model.Job, t, n int) float64 {
	return float64(n) * []float64{float64(f), 1}[t]
}

// TestMoveUp: with reclaim, a running job leaves a slow type for one at
// least engine.MinMoveUp (1.5) times as fast on which GPUs are lent to
// elastic growth and whose free and lent GPUs hold it, when no job waits
// (engine's moveUp). Node n0 of type "fast" and n1
// of type "slow", 4 GPUs each. E (elastic, 1..4) has grown to all of n0
// (3 GPUs lent); R (rigid, 1 GPU) runs on n1/0; nothing else runs.
//
// Fast twice as fast (2 ≥ 1.5): fast has 0 free + 3 lent ≥ 1, so E gives
// back one replica (its last GPU, n0/3: 4→3) and R moves to n0/3 (pack:
// the only free fast GPU). Neither scaler grows anything after: E is not
// at its maximum any more, but the only free GPUs are slow ones and E is
// on fast (fulfillment: no free fast GPU; threshold p=1: a = 4 − 2 = 2,
// M = 6, T = 2/6 < 0.8, budget (0.9 − 1/3)·6 = 3.4, but E's growth needs
// a free fast GPU). Fast 1.25 times as fast (< 1.5): nothing moves.
// Without reclaim (the seeds as written): nothing moves. With a job
// waiting (W, 4 GPUs: no type holds it even with every lent GPU free —
// fast would have 3, slow 3): nothing moves, E keeps its GPUs. With
// nothing lent (E on one GPU of n0: fast has 3 free GPUs, none lent), R
// stays — a move onto free room is an upgrade, the placer's business —
// and the scalers grow E onto the free fast GPUs (fulfillment: score 0 <
// 1, load limit 8; threshold p=1: a = 2, M = 6, T = 0 < 0.8, budget
// 0.9·6 = 5.4 pays three replicas): E 1→4.
func TestMoveUp(t *testing.T) {
	thr, ful := reclaimScalers(t, scaler.DefaultThresholdConfig())
	for _, tc := range []struct {
		name    string
		sc      engine.Scaler
		fast    fastBy
		waiting bool
		eRun    int      // E's size before the round
		moved   []string // R's new GPUs, nil: R stays
		eSize   int      // E's size after the round
	}{
		{"threshold, reclaim", thr(true), 2, false, 4, []string{"n0/3"}, 3},
		{"fulfillment, reclaim", ful(true), 2, false, 4, []string{"n0/3"}, 3},
		{"threshold, reclaim, 1.25× faster", thr(true), 1.25, false, 4, nil, 4},
		{"fulfillment, reclaim, 1.25× faster", ful(true), 1.25, false, 4, nil, 4},
		{"threshold, as written", thr(false), 2, false, 4, nil, 4},
		{"fulfillment, as written", ful(false), 2, false, 4, nil, 4},
		{"threshold, reclaim, W waits", thr(true), 2, true, 4, nil, 4},
		{"fulfillment, reclaim, W waits", ful(true), 2, true, 4, nil, 4},
		{"threshold, reclaim, nothing lent", thr(true), 2, false, 1, nil, 4},
		{"fulfillment, reclaim, nothing lent", ful(true), 2, false, 1, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := []*jb{el("E", 1, 4).running(tc.eRun, 0), rg("R", 1).running(1, 1)}
			if tc.waiting {
				jobs = append(jobs, rg("W", 4))
			}
			w := newWorld(t, []nd{{"fast", 4}, {"slow", 4}}, jobs...)
			w.s.Profile = tc.fast
			plan := reclaimRound(t, w, placer.Pack{}, tc.sc)
			if len(plan.Start) != 0 {
				t.Errorf("starts %v, want none", sizes(plan.Start))
			}
			if size := sizeAfter(w, plan, "E"); size != tc.eSize {
				t.Errorf("E on %d GPUs, want %d (resizes %v)", size, tc.eSize, sizes(plan.Resize))
			}
			var moved []string
			for _, m := range plan.Migrate {
				if m.Job.Spec.ID != "R" {
					t.Errorf("%s moves, want only R", m.Job.Spec.ID)
				}
				for _, g := range m.GPUs {
					moved = append(moved, w.s.Cluster.GPUName(g))
				}
			}
			if !slices.Equal(moved, tc.moved) {
				t.Errorf("R moves to %v, want %v", moved, tc.moved)
			}
			if moves := tc.moved != nil; moves != (plan.Wake == 0) {
				t.Errorf("wake at %v after a round with a move %v: want a round at once exactly after a move", plan.Wake, moves)
			}
		})
	}
}

// TestMoveUpElastic: an elastic job, whose GPUs the scaler manages, moves
// up onto free room even where nothing is lent. Node n0 of type "fast"
// (twice as fast per GPU) and n1 of type "slow", 4 GPUs each. E (elastic,
// 1..2) runs at its maximum on n1/0-1; the fast node is free, nothing is
// lent there. With reclaim, E moves at its size to n0/0-1 (pack's best
// fit) and keeps 2 GPUs; without, it stays.
func TestMoveUpElastic(t *testing.T) {
	thr, ful := reclaimScalers(t, scaler.DefaultThresholdConfig())
	for _, tc := range []struct {
		name  string
		sc    engine.Scaler
		moved []string // E's new GPUs, nil: E stays
	}{
		{"threshold, reclaim", thr(true), []string{"n0/0", "n0/1"}},
		{"fulfillment, reclaim", ful(true), []string{"n0/0", "n0/1"}},
		{"threshold, as written", thr(false), nil},
		{"fulfillment, as written", ful(false), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, []nd{{"fast", 4}, {"slow", 4}}, el("E", 1, 2).running(2, 1))
			w.s.Profile = fastBy(2)
			plan := reclaimRound(t, w, placer.Pack{}, tc.sc)
			if len(plan.Resize) != 0 || len(plan.Start) != 0 {
				t.Errorf("resizes %v, starts %v, want none", sizes(plan.Resize), sizes(plan.Start))
			}
			var moved []string
			for _, m := range plan.Migrate {
				for _, g := range m.GPUs {
					moved = append(moved, w.s.Cluster.GPUName(g))
				}
			}
			if !slices.Equal(moved, tc.moved) {
				t.Errorf("E moves to %v, want %v", moved, tc.moved)
			}
		})
	}
}
