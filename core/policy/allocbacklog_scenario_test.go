package policy_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

// TestPriorityBacklog: a fast and a slow type of one GPU each; jobs of 100,
// 400 and 1600 s finish, then x (nothing done; at full speed on fast, half
// on slow) and y (6400 s done; runs on fast only) compete under esrpt.
// Kaplan–Meier over the finished sizes and the two active jobs (censored
// at 0 and 6400) gives S 1, 3/4, 1/2, 1/4 after 100, 400, 1600, and
// the tail guess beyond 6400: E[rem_x] = 100 + 3/4·300 + 1/2·1200 +
// 1/4·4800 + 1/4·6400 = 3725 s, and y, at the largest observation, E[rem_y]
// = 6400 s. Weights E[rem]^−2: x 7.21e−8, y 2.44e−8. x on fast is worth
// 7.21e−8; x on slow and y on fast 0.5·7.21e−8 + 2.44e−8 = 6.04e−8: x takes
// fast and y waits. With a priority backlog of 8 the two jobs ask for 2
// GPUs of 2 (β = (2/2 − 1)/7 = 0): both weigh 1 per GPU, 0.5 + 1 > 1, and
// both run, x on slow. gittins is the same at β = 0 (whatever the index).
// The oracle (2000 s left for x, 6400 s for y: 2.5e−7 against 0.5·2.5e−7 +
// 2.44e−8) keeps its weights.
func TestPriorityBacklog(t *testing.T) {
	for _, tc := range []struct {
		obj     policy.Objective
		backlog float64
		oracle  bool
		want    []string
	}{
		{policy.EstSRPT, 0, false, []string{"x:fast"}},
		{policy.EstSRPT, 8, false, []string{"x:slow", "y:fast"}},
		{policy.Gittins, 8, false, []string{"x:slow", "y:fast"}},
		{policy.EstSRPT, 8, true, []string{"x:fast"}},
	} {
		s := fastSlow(t)
		a := &policy.Alloc{Objective: tc.obj, Oracle: tc.oracle, PriorityBacklog: tc.backlog, Round: 360 * model.Second}
		if got := chosenAfter(t, s, a, 100, 400, 1600); !slices.Equal(got, tc.want) {
			t.Errorf("objective %v backlog %v oracle %v: chosen %v, want %v", tc.obj, tc.backlog, tc.oracle, got, tc.want)
		}
	}
}

// fastSlow is the scenario of TestPriorityBacklog and TestSpeedExponent: a
// fast and a slow type of one GPU each; f1, f2, f3 (to finish first, with
// chosenAfter), x (2000 s of work, none done; full speed on fast, half on
// slow) and y (6400 s done of 12800; fast only), all waiting.
func fastSlow(t *testing.T) *model.State {
	t.Helper()
	both := []float64{1, 1}
	s := hetState(t, []string{"fast", "slow"}, []float64{2, 1}, []int{1, 1},
		typed{"f1": both, "f2": both, "f3": both, "x": {1, 0.5}, "y": {1, 0}}, "f1", "f2", "f3", "x", "y")
	w := s.Waiting()
	w[3].Work = 2000
	w[4].Done, w[4].Work = 6400, 12800
	return s
}

// TestGangProbeLight: one type of 2 GPUs; jobs of 100, 400 and 1600 s
// finish, then a 2-GPU gang (500 s done) and two 1-GPU jobs a and b (450
// s done each) compete under esrpt. Kaplan–Meier over the finished sizes
// and the three active jobs (censored at 450, 450, 500) gives P(S ≤ 100)
// = 1/6, P(S ≤ 400) = 1/3, P(S ≤ 1600) = 1, so E[rem] is 1100 s for the
// gang and 1150 s for a and b: weights 8.26e−7 and 7.56e−7. The active
// jobs ask for 4 GPUs of 2; with a priority backlog of 3, β = (2 − 1)/(3 −
// 1) = 0.5. The gang probe 0.3 alone ends at 400 s, before the gang's 500:
// the gang's value flattened is 2·(8.26e−7/2)^½ = 1.29e−3 against 2 ×
// (7.56e−7)^½ = 1.74e−3 for a and b, which run. With a light-load probe
// of 0.6 the quantile at β = 0.5 is 0.45, i.e. 1600 s: the gang is still
// probed, 2·(8.26e−7)^½ = 1.82e−3 > 1.74e−3, and it runs. Without a
// priority backlog (β = 1) the light-load probe changes nothing; the
// oracle has no probe (1500 s left for the gang, 950 s for a and b).
func TestGangProbeLight(t *testing.T) {
	for _, tc := range []struct {
		light, backlog float64
		oracle         bool
		want           []string
	}{
		{0, 3, false, []string{"a:gpu", "b:gpu"}},
		{0.6, 3, false, []string{"gang:gpu"}},
		{0.6, 0, false, []string{"a:gpu", "b:gpu"}},
		{0.6, 3, true, []string{"a:gpu", "b:gpu"}},
	} {
		s := gangAndTwo(t, 500, 2000)
		a := &policy.Alloc{Objective: policy.EstSRPT, Oracle: tc.oracle, GangProbe: 0.3, GangProbeLight: tc.light,
			PriorityBacklog: tc.backlog, Round: 360 * model.Second}
		if got := chosenAfter(t, s, a, 100, 400, 1600); !slices.Equal(got, tc.want) {
			t.Errorf("light %v backlog %v oracle %v: chosen %v, want %v", tc.light, tc.backlog, tc.oracle, got, tc.want)
		}
	}
}
