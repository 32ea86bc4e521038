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
