package scaler_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/scaler"
)

// TestReclaim: lent GPUs come back at once (engine.Reclaimer). Node n0 of
// type "fast" (declared first: spread prefers it at equal speed) and n1 of
// type "slow", 4 GPUs each. E (elastic, 1..4) has grown to all of n0: 3
// GPUs are lent. W (rigid, 2 GPUs) arrives.
//
// With reclaim, W goes where it would go if the lent GPUs were free — n0,
// the fast type — and E gives back two replicas in the same round: E 4→2,
// W starts on n0. Without (the seeds as written), W fits on n1 and starts
// there; fulfillment leaves E at 4; threshold's first pass shrinks E by
// its own rule: a = 6 − 3 = 3, M = (8 − 3)·0.3 = 1.5, T = 3/1.5 = 2 > 0.9,
// EM = 3 − 0.6·1.5 = 2.1 pays two replicas: E 4→2.
func TestReclaim(t *testing.T) {
	thr, ful := reclaimScalers(t, scaler.SeedThresholdConfig())
	for _, tc := range []struct {
		name  string
		sc    engine.Scaler
		eSize int    // E's size after the round
		wNode string // where W starts
	}{
		{"threshold, reclaim", thr(true), 2, "n0"},
		{"threshold, as written", thr(false), 2, "n1"},
		{"fulfillment, reclaim", ful(true), 2, "n0"},
		{"fulfillment, as written", ful(false), 4, "n1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, []nd{{"fast", 4}, {"slow", 4}}, el("E", 1, 4).running(4, 0), rg("W", 2))
			plan := reclaimRound(t, w, placer.Spread{}, tc.sc)
			if size := sizeAfter(w, plan, "E"); size != tc.eSize {
				t.Errorf("E on %d GPUs, want %d (resizes %v)", size, tc.eSize, sizes(plan.Resize))
			}
			gpus := startedOn(t, w, plan, "W")
			if len(gpus) != 2 {
				t.Fatalf("W on %v, want 2 GPUs", gpus)
			}
			for _, g := range gpus {
				if node, _, _ := strings.Cut(g, "/"); node != tc.wNode {
					t.Errorf("W on %s, want %s", g, tc.wNode)
				}
			}
		})
	}
}

// TestReclaimKeepsType: with reclaim, a waiting job takes the GPU type it
// would get if the lent GPUs were free even when that type has enough free
// GPUs now, scattered, and the placer seeing the lent GPUs busy prefers
// another type. Nodes n0 and n1 of type "fast" (4 GPUs each, declared
// first) and n2 of type "slow" (3 GPUs). E (elastic, 1..4) runs on n0/0-2
// (2 GPUs lent), R (rigid) on n1/0-2; W (rigid, 2 GPUs) arrives; pack.
//
// With the lent GPUs free (E at 1), n0 has 3 free and n2 3: one node each,
// one GPU left each, so pack takes the first type, fast. Fast has 2 free
// GPUs now (n0/3, n1/3), so nobody gives: W starts on them, on two nodes.
// As the placer sees the pool now (and as before this rule, and without
// reclaim), fast needs two nodes and slow one: W goes to n2/0-1, and the
// two free fast GPUs let E grow to 4 (fulfillment: E's score 2/3 < 1;
// threshold p=1: a = 8 − 2 = 6, M = 11 − 6 = 5, T = 2/5 < 0.8, budget
// (0.9 − 0.4)·5 = 2.5; one replica brings E to its maximum). With reclaim
// no fast GPU is left free for E to grow on.
func TestReclaimKeepsType(t *testing.T) {
	thr, ful := reclaimScalers(t, scaler.DefaultThresholdConfig())
	for _, tc := range []struct {
		name  string
		sc    engine.Scaler
		eSize int      // E's size after the round
		wGPUs []string // where W starts
	}{
		{"threshold, reclaim", thr(true), 3, []string{"n0/3", "n1/3"}},
		{"threshold, no reclaim", thr(false), 4, []string{"n2/0", "n2/1"}},
		{"fulfillment, reclaim", ful(true), 3, []string{"n0/3", "n1/3"}},
		{"fulfillment, as written", ful(false), 4, []string{"n2/0", "n2/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, []nd{{"fast", 4}, {"fast", 4}, {"slow", 3}},
				el("E", 1, 4).running(3, 0), rg("R", 3).running(3, 1), rg("W", 2))
			plan := reclaimRound(t, w, placer.Pack{}, tc.sc)
			if size := sizeAfter(w, plan, "E"); size != tc.eSize {
				t.Errorf("E on %d GPUs, want %d (resizes %v)", size, tc.eSize, sizes(plan.Resize))
			}
			if got := startedOn(t, w, plan, "W"); !slices.Equal(got, tc.wGPUs) {
				t.Errorf("W on %v, want %v", got, tc.wGPUs)
			}
		})
	}
}

// typeSpeed runs every job twice as fast per GPU on type 0 as on type 1.
type typeSpeed struct{}

func (typeSpeed) Speed(_ *model.Job, t, n int) float64 { return float64(n) * []float64{2, 1}[t] }

// TestReclaimNoSlowerType: reclaim never gives a waiting job a slower type
// than the placer gives it on the free GPUs now. Node n0 of type "fast"
// (4 GPUs, twice as fast per GPU) and n1 of type "slow" (3 GPUs). R (rigid,
// 1 GPU) runs on n0/0, E (elastic, 1..3) on all of n1 (2 GPUs lent); W
// (rigid, 2 GPUs) arrives; pack.
//
// With the lent GPUs free (E at 1), slow has n1/1-2 free (one node, none
// left over) and fast n0/1-3 (one node, one left over): pack's best fit is
// slow, where E would give back two replicas. On the free GPUs now, pack
// puts W on n0/1-2, twice as fast: reclaim steps aside, W starts there and
// E keeps its 3 GPUs (no slow GPU is free for it to lose or gain), as
// without reclaim.
func TestReclaimNoSlowerType(t *testing.T) {
	thr, ful := reclaimScalers(t, scaler.DefaultThresholdConfig())
	for _, tc := range []struct {
		name string
		sc   engine.Scaler
	}{
		{"threshold, reclaim", thr(true)},
		{"threshold, no reclaim", thr(false)},
		{"fulfillment, reclaim", ful(true)},
		{"fulfillment, as written", ful(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, []nd{{"fast", 4}, {"slow", 3}},
				rg("R", 1).running(1, 0), el("E", 1, 3).running(3, 1), rg("W", 2))
			w.s.Profile = typeSpeed{}
			plan := reclaimRound(t, w, placer.Pack{}, tc.sc)
			if r := sizes(plan.Resize); len(r) != 0 {
				t.Errorf("resizes %v, want none (E keeps 3 GPUs)", r)
			}
			if got, want := startedOn(t, w, plan, "W"), []string{"n0/1", "n0/2"}; !slices.Equal(got, want) {
				t.Errorf("W on %v, want %v", got, want)
			}
		})
	}
}

// reclaimRound schedules one round of w's state under a strict fifo, pl
// and sc, and checks the plan (checkPlan).
func reclaimRound(t *testing.T, w *world, pl engine.Placer, sc engine.Scaler) engine.Plan {
	t.Helper()
	e, err := engine.New(policy.FIFO{}, pl, sc)
	if err != nil {
		t.Fatal(err)
	}
	plan := e.Schedule(w.s, 0)
	checkPlan(t, w.s, plan)
	return plan
}

// sizeAfter returns job id's GPU count after plan: its resize's, else
// its allocation's.
func sizeAfter(w *world, plan engine.Plan, id string) int {
	if n := sizes(plan.Resize)[id]; n != 0 {
		return n
	}
	return len(w.jobs[id].Alloc)
}

// startedOn returns the names of the GPUs plan starts job id on; it fails
// the test unless plan starts that job and no other.
func startedOn(t *testing.T, w *world, plan engine.Plan, id string) []string {
	t.Helper()
	if len(plan.Start) != 1 || plan.Start[0].Job.Spec.ID != id {
		t.Fatalf("starts %v, want %s", sizes(plan.Start), id)
	}
	var got []string
	for _, g := range plan.Start[0].GPUs {
		got = append(got, w.s.Cluster.GPUName(g))
	}
	return got
}

// reclaimScalers returns constructors of the two scalers with reclaim on
// or off: threshold with cfg, fulfillment with a maximum load of 1.
func reclaimScalers(t *testing.T, cfg scaler.ThresholdConfig) (thr, ful func(reclaim bool) engine.Scaler) {
	t.Helper()
	thr = func(reclaim bool) engine.Scaler {
		c := cfg
		c.Reclaim = reclaim
		s, err := scaler.NewThreshold(c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ful = func(reclaim bool) engine.Scaler {
		s, err := scaler.NewFulfillment(1, reclaim)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return thr, ful
}
