package scaler_test

import (
	"testing"

	"github.com/gpusched/gpusched/core/engine"
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
	thr := func(reclaim bool) engine.Scaler {
		cfg := scaler.SeedThresholdConfig()
		cfg.Reclaim = reclaim
		s, err := scaler.NewThreshold(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ful := func(reclaim bool) engine.Scaler {
		s, err := scaler.NewFulfillment(1, reclaim)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
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
			e, err := engine.New(policy.FIFO{}, placer.Spread{}, tc.sc)
			if err != nil {
				t.Fatal(err)
			}
			plan := e.Schedule(w.s, 0)
			checkPlan(t, w.s, plan)
			size := len(w.jobs["E"].Alloc)
			if r := sizes(plan.Resize); r["E"] != 0 {
				size = r["E"]
			}
			if size != tc.eSize {
				t.Errorf("E on %d GPUs, want %d (resizes %v)", size, tc.eSize, sizes(plan.Resize))
			}
			if len(plan.Start) != 1 || plan.Start[0].Job.Spec.ID != "W" || len(plan.Start[0].GPUs) != 2 {
				t.Fatalf("starts %v, want W on 2 GPUs", sizes(plan.Start))
			}
			for _, g := range plan.Start[0].GPUs {
				if got := w.s.Cluster.Nodes[g.Node].Name; got != tc.wNode {
					t.Errorf("W on %s, want %s", got, tc.wNode)
				}
			}
		})
	}
}
