package policy

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestGangOwed is a hand-computed scenario of Alloc.GangOwed on
// TestGangShare's world without a gang share: v100 and k80 of 8 GPUs each,
// the 8-GPU gang G with share 0.5 of v100 and the single-GPU job S with
// share 1 there, both waiting since the previous round at 0. In a round at
// now, G is owed 0.5·now seconds (it ran none of them), S now seconds.
// With a threshold of 1,800 s G is owing from now = 3,600 s: it is taken
// first on v100 and S runs on k80 in the second pass; at 3,598 s (owed
// 1,799 s) the order is the priority's, S on v100 and G on k80. S, owing
// too, is not a gang and is never taken first for it. The backlog power
// must be at least 0.7, the rule is Gittins's, and off without a
// threshold; G's index below a probing sharer's (the yield) keeps it off.
func TestGangOwed(t *testing.T) {
	hour := 3600 * model.Second
	for _, tc := range []struct {
		name      string
		owed      model.Time
		now       model.Time
		beta      float64
		objective Objective
		yield     bool
		want      []string
	}{
		{"owed 1800 s", 1800 * model.Second, hour, 1, Gittins, false, []string{"G:v100", "S:k80"}},
		{"owed 1799 s", 1800 * model.Second, 3598 * model.Second, 1, Gittins, false, []string{"S:v100", "G:k80"}},
		{"backlog power 0.7", 1800 * model.Second, hour, 0.7, Gittins, false, []string{"G:v100", "S:k80"}},
		{"backlog power 0.69", 1800 * model.Second, hour, 0.69, Gittins, false, []string{"S:v100", "G:k80"}},
		{"no threshold", 0, hour, 1, Gittins, false, []string{"S:v100", "G:k80"}},
		{"esrpt", 1800 * model.Second, hour, 1, EstSRPT, false, []string{"S:v100", "G:k80"}},
		{"yields to a probing S", 1800 * model.Second, hour, 1, Gittins, true, []string{"S:v100", "G:k80"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, a := gangAndSingle(t, 0)
			a.Objective, a.GangOwed, a.last = tc.objective, tc.owed, 0
			for i, j := range a.tracked {
				st := a.states[i]
				st.x, st.index = []float64{1, 0}, 1
				if j.Spec.ID == "G" {
					st.x = []float64{0.5, 0}
				}
			}
			a.accrueOwed(s, tc.now)
			a.beta = tc.beta
			if tc.yield {
				a.GangShare = 0.8 // the yield is the gang share's
				for i, j := range a.tracked {
					if j.Spec.ID == "S" {
						a.states[i].index, a.states[i].probing = 2, true
					}
				}
			}
			if got := chosenOn(s, a); !slices.Equal(got, tc.want) {
				t.Fatalf("chosen %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGangOwedAccrues checks accrueOwed's sums by hand: a job is owed its
// shares' sum times the time since the previous round less the time it
// ran there, never below 0, owing from the threshold until it is back to 0.
func TestGangOwedAccrues(t *testing.T) {
	s, a := gangAndSingle(t, 0)
	a.GangOwed, a.last = 1000*model.Second, 0
	var g *allocJob
	for i, j := range a.tracked {
		a.states[i].x = []float64{0.25, 0.5}
		if j.Spec.ID == "G" {
			g = a.states[i]
		}
	}
	a.accrueOwed(s, 1200*model.Second) // 0.75 × 1200 s, none run
	if g.owed != 900 || g.owing {
		t.Fatalf("after 1200 s: owed %v owing %v, want 900 false", g.owed, g.owing)
	}
	a.last = 1200 * model.Second
	a.accrueOwed(s, 1400*model.Second) // + 0.75 × 200 s
	if g.owed != 1050 || !g.owing {
		t.Fatalf("after 1400 s: owed %v owing %v, want 1050 true", g.owed, g.owing)
	}
	// G ran on v100 from 1400 s to 3400 s: + 0.75 × 2000 − 2000 = −500 s.
	g.job.Periods = append(g.job.Periods, model.Period{Start: 1400 * model.Second, End: 3400 * model.Second, Type: 0, GPUs: 8})
	a.last = 1400 * model.Second
	a.accrueOwed(s, 3400*model.Second)
	if g.owed != 550 || !g.owing {
		t.Fatalf("after 3400 s: owed %v owing %v, want 550 true (owing until 0)", g.owed, g.owing)
	}
	g.job.Periods = append(g.job.Periods, model.Period{Start: 3400 * model.Second, End: 7400 * model.Second, Type: 0, GPUs: 8})
	a.last = 3400 * model.Second
	a.accrueOwed(s, 7400*model.Second) // 550 + 3000 − 4000 < 0: 0
	if g.owed != 0 || g.owing {
		t.Fatalf("after 7400 s: owed %v owing %v, want 0 false", g.owed, g.owing)
	}
}
