package policy

import (
	"slices"
	"testing"
)

// TestGangYield is a hand-computed scenario of gangYield, on
// TestGangShare's: G (8 GPUs) with share 0.875 of v100, S (1 GPU) with
// share 1 there, a gang share of 0.8, so that G is taken first on v100 and
// S, deferred on k80 (no share there, one on the faster v100), runs there
// in the second pass. Unless S is still in its probe with a higher index
// than G's: then G is not taken first, the v100 pass goes by priority
// (before X is accounted, share × 1e9: S 1e9 before G 8.75e8), takes S,
// and G no longer fits in the 7 GPUs left; on k80 both are deferred, and
// the second pass puts G there. An equal or lower index, S past its probe,
// or a round whose X is bestFits's (no index computed) leaves G first.
func TestGangYield(t *testing.T) {
	for _, tc := range []struct {
		name           string
		gIndex, sIndex float64
		sProbing       bool
		fitted         bool
		want           []string
	}{
		{"S probing, higher index", 1, 2, true, false, []string{"S:v100", "G:k80"}},
		{"S probing, equal index", 2, 2, true, false, []string{"G:v100", "S:k80"}},
		{"S probing, lower index", 3, 2, true, false, []string{"G:v100", "S:k80"}},
		{"S past its probe, higher index", 1, 2, false, false, []string{"G:v100", "S:k80"}},
		{"bestFits round", 1, 2, true, true, []string{"G:v100", "S:k80"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chosenAfter(t, tc.fitted, func(id string, st *allocJob) {
				st.x = []float64{1, 0}
				st.index, st.probing = tc.sIndex, tc.sProbing
				if id == "G" {
					st.x = []float64{0.875, 0}
					st.index, st.probing = tc.gIndex, true
				}
			})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("chosen %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGangYieldOnlyProbingSharers checks gangYield's value directly: the
// highest index among the probing jobs with a share of the type, 0 for a
// type none of them shares, and 0 for esrpt and without a gang share.
func TestGangYieldOnlyProbingSharers(t *testing.T) {
	_, a := gangAndSingle(t, 0.8)
	a.states[0].x, a.states[0].index, a.states[0].probing = []float64{0.5, 0}, 5, true  // G
	a.states[1].x, a.states[1].index, a.states[1].probing = []float64{1e-7, 1}, 9, true // S: no share of v100 (below minShare)
	if y := a.gangYield(0); y != 5 {
		t.Errorf("v100: yield %v, want 5 (G's; S's share is round-off)", y)
	}
	if y := a.gangYield(1); y != 9 {
		t.Errorf("k80: yield %v, want 9 (S's)", y)
	}
	a.states[1].probing = false
	if y := a.gangYield(1); y != 0 {
		t.Errorf("k80, S past its probe: yield %v, want 0", y)
	}
	a.Objective = EstSRPT
	if y := a.gangYield(0); y != 0 {
		t.Errorf("esrpt: yield %v, want 0", y)
	}
	a.Objective, a.GangShare = Gittins, 0
	if y := a.gangYield(0); y != 0 {
		t.Errorf("no gang share: yield %v, want 0", y)
	}
}
