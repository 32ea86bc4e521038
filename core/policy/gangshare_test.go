package policy

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestGangShare is a hand-computed scenario of Alloc.GangShare. Two types
// of one 8-GPU node each, v100 (rated fastest) and k80; a gang G of 8 GPUs
// and a single-GPU job S, both twice as fast on v100 as on k80. X gives S
// its whole time on v100 (share 1) and G a share gx there, none on k80.
// Before X is accounted the priorities are the shares (× 1e9), so the v100
// pass takes S first, and G, 8 GPUs, no longer fits in the 7 left. On k80
// neither has a share and both have one on the faster v100: each is
// deferred to the second pass, which puts G there (8 free). So without the
// gang share: S on v100, G on k80, at half its speed. With a gang share of
// at most gx, G is taken first on v100, and S, deferred on k80, runs there
// in the second pass: the eight GPUs of the gang at full speed for one
// GPU at half. A share below the gang share, or no gang share, leaves the
// order as it was.
func TestGangShare(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gangShare float64
		gx        float64
		want      []string
	}{
		{"no gang share", 0, 0.875, []string{"S:v100", "G:k80"}},
		{"share at the gang share", 0.8, 0.8, []string{"G:v100", "S:k80"}},
		{"share above it", 0.8, 0.875, []string{"G:v100", "S:k80"}},
		{"share below it", 0.8, 0.75, []string{"S:v100", "G:k80"}},
		{"gang share 1, share 0.875", 1, 0.875, []string{"S:v100", "G:k80"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, a := gangAndSingle(t, tc.gangShare)
			for i, j := range a.tracked {
				st := a.states[i]
				st.x = []float64{1, 0}
				if j.Spec.ID == "G" {
					st.x = []float64{tc.gx, 0}
				}
			}
			if got := chosenOn(s, a); !slices.Equal(got, tc.want) {
				t.Fatalf("chosen %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGangShareOnlyGittins checks that the gang share moves no other
// objective's pairs: esrpt with a gang share keeps S on v100.
func TestGangShareOnlyGittins(t *testing.T) {
	s, a := gangAndSingle(t, 0.8)
	a.Objective = EstSRPT
	for i, j := range a.tracked {
		a.states[i].x = []float64{1, 0}
		if j.Spec.ID == "G" {
			a.states[i].x = []float64{0.875, 0}
		}
	}
	sel, types := a.choose(s, 0)
	if len(sel) == 0 || sel[0].Spec.ID != "S" || !types[0].Has(0) {
		t.Fatalf("esrpt: first chosen %v on %v, want S on v100", sel, types)
	}
}

// gangAndSingle returns the scenario of TestGangShare, accounted but
// without X: G (8 GPUs) and S (1 GPU), waiting, on v100 and k80 of 8 GPUs
// each, both at speed 2 on v100 and 1 on k80.
func gangAndSingle(t *testing.T, gangShare float64) (*model.State, *Alloc) {
	t.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	ns := []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speedTable{"G": {2, 1}, "S": {2, 1}})
	s.Submit(model.NewJob(model.JobSpec{ID: "G", GPUs: 8, MinGPUs: 8, MaxGPUs: 8}, 0, -1, 1000))
	s.Submit(model.NewJob(model.JobSpec{ID: "S", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 1, -1, 1000))
	a := &Alloc{Objective: Gittins, Round: 360 * model.Second, GangShare: gangShare}
	a.forCluster(c)
	a.account(s, 0, false)
	for i, j := range a.tracked {
		a.speeds(s, j, a.states[i])
	}
	if len(a.tracked) != 2 {
		t.Fatalf("tracked %d jobs, want 2", len(a.tracked))
	}
	return s, a
}

// chosenOn runs one choose of a and names each chosen job with its type,
// "ID:type", in the order choose gives them.
func chosenOn(s *model.State, a *Alloc) []string {
	sel, types := a.choose(s, 0)
	var got []string
	for i, j := range sel {
		for k := range s.Cluster.Types {
			if types[i].Has(k) {
				got = append(got, j.Spec.ID+":"+s.Cluster.Types[k].Name)
			}
		}
	}
	return got
}

// chosenAfter returns chosenOn for gangAndSingle's world (gang share 0.8)
// once set has given every tracked job its state, G's and S's by their ID,
// and, when fitted, with X taken as bestFits's (no index computed).
func chosenAfter(t *testing.T, fitted bool, set func(id string, st *allocJob)) []string {
	t.Helper()
	s, a := gangAndSingle(t, 0.8)
	for i, j := range a.tracked {
		set(j.Spec.ID, a.states[i])
	}
	if fitted {
		a.fitted = s
	}
	return chosenOn(s, a)
}
