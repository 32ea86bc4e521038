package policy

import (
	"slices"
	"testing"
)

// TestWholeGangFirst is a hand-computed scenario of wholeGangFirst, on
// TestGangShare's: G needs all 8 GPUs of v100, with share gx there below
// the gang share 0.8; S (1 GPU) has share 1 there. Without the rule the
// v100 pass goes by priority (share × 1e9 before X is accounted: S first),
// G no longer fits and runs on k80 in the second pass (TestGangShare's
// "share below it"). With gx at least 1/2 and G's index per GPU (its index
// over 8) at least S's, G leads v100 and is taken first, and S, deferred on
// k80, runs there. A lower index per GPU, a share below 1/2, no index, or
// a round whose X is bestFits's (no index computed) leave the order as it
// was.
func TestWholeGangFirst(t *testing.T) {
	for _, tc := range []struct {
		name           string
		gx             float64
		gIndex, sIndex float64
		fitted         bool
		want           []string
	}{
		{"leads: 16/8 = 2 per GPU, S 1", 0.75, 16, 1, false, []string{"G:v100", "S:k80"}},
		{"leads at equal index per GPU: 16/8 = 2", 0.75, 16, 2, false, []string{"G:v100", "S:k80"}},
		{"leads at share 1/2", 0.5, 16, 1, false, []string{"G:v100", "S:k80"}},
		{"lower per GPU: 8/8 = 1, S 2", 0.75, 8, 2, false, []string{"S:v100", "G:k80"}},
		{"higher per job, lower per GPU: 9/8, S 2", 0.75, 9, 2, false, []string{"S:v100", "G:k80"}},
		{"share below 1/2", 0.45, 16, 1, false, []string{"S:v100", "G:k80"}},
		{"no index computed", 0.75, 0, 0, false, []string{"S:v100", "G:k80"}},
		{"bestFits round", 0.75, 16, 1, true, []string{"S:v100", "G:k80"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chosenAfter(t, tc.fitted, func(id string, st *allocJob) {
				st.x, st.index = []float64{1, 0}, tc.sIndex
				if id == "G" {
					st.x, st.index = []float64{tc.gx, 0}, tc.gIndex
				}
			})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("chosen %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWholeGangFirstOnlyWholeTypeGangs checks wholeGangFirst's conditions
// one at a time, from a gang that leads v100 with share 0.75: a gang of
// fewer GPUs than the type has, a single-GPU job, a share at or above the
// gang share (the gang share's own rule, gangFirst), an index below the
// yield, esrpt, and no gang share each make it false.
func TestWholeGangFirstOnlyWholeTypeGangs(t *testing.T) {
	_, a := gangAndSingle(t, 0.8)
	g := a.states[0] // G, 8 GPUs
	g.x, g.index = []float64{0.75, 0}, 16
	a.states[1].x, a.states[1].index = []float64{0.25, 0}, 1
	lead := a.gangLead(0)
	if lead != 2 {
		t.Fatalf("gangLead(v100) = %v, want 2 (G's 16 over 8 GPUs; S's 1)", lead)
	}
	if !a.wholeGangFirst(g, 0, 0.75, 0, lead) {
		t.Fatal("G, share 0.75, leading v100: not taken first")
	}
	for _, tc := range []struct {
		name  string
		gpus  int
		x     float64
		yield float64
		obj   Objective
		share float64
	}{
		{"4 of the type's 8 GPUs", 4, 0.75, 0, Gittins, 0.8},
		{"a single-GPU job", 1, 0.75, 0, Gittins, 0.8},
		{"share at the gang share", 8, 0.8, 0, Gittins, 0.8},
		{"index below the yield", 8, 0.75, 17, Gittins, 0.8},
		{"esrpt", 8, 0.75, 0, EstSRPT, 0.8},
		{"no gang share", 8, 0.75, 0, Gittins, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g.gpus, a.Objective, a.GangShare = tc.gpus, tc.obj, tc.share
			if a.wholeGangFirst(g, 0, tc.x, tc.yield, 0) {
				t.Fatal("taken first")
			}
		})
	}
}
