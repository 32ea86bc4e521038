package policy_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

// TestMoveCost is a hand-computed scenario of Alloc.MoveCost: two types of
// one GPU each, fast and slow (fast rated higher); x runs at 1 on fast and
// 0.99 on slow, y at 1 on both. Jobs of 100, 400 and 1600 s finish; then x
// runs on slow, y waits, both with nothing done. Kaplan–Meier over the
// finished sizes and x and y (censored at 0) gives S 2/3 from 100, 1/3
// from 400, 0 from 1600: E[S] = 100 + 300·2/3 + 1200·1/3 = 700 s, x's and
// y's expected remaining time. Both want fast (bestFits declines), and
// their Gittins weights are equal (w). Without a move cost the program
// puts x on fast and y on slow (w·1 + w·1 against x staying: w·0.99 +
// w·1). With a move cost c, x's value on fast is w·(1 − c/700): at c =
// 30 s 0.957·w, less than the 0.99·w it has where it runs, so x stays on
// slow and y takes fast; at c = 5 s 0.9929·w, and x still moves (the
// threshold is 7 s: 6.5 s moves it, 7.5 s does not). esrpt has no move
// cost.
func TestMoveCost(t *testing.T) {
	for _, tc := range []struct {
		obj  policy.Objective
		cost float64
		want []string
	}{
		{policy.Gittins, 0, []string{"x:fast", "y:slow"}},
		{policy.Gittins, 5, []string{"x:fast", "y:slow"}},
		{policy.Gittins, 6.5, []string{"x:fast", "y:slow"}},
		{policy.Gittins, 7.5, []string{"x:slow", "y:fast"}},
		{policy.Gittins, 30, []string{"x:slow", "y:fast"}},
		{policy.EstSRPT, 30, []string{"x:fast", "y:slow"}},
	} {
		s := hetState(t, []string{"fast", "slow"}, []float64{15.7, 10.6}, []int{1, 1},
			typed{"f1": {1, 1}, "f2": {1, 1}, "f3": {1, 1}, "x": {1, 0.99}, "y": {1, 1}}, "f1", "f2", "f3", "x", "y")
		a := &policy.Alloc{Objective: tc.obj, Round: 360 * model.Second, MoveCost: model.FromSeconds(tc.cost)}
		w := s.Waiting()
		for i, work := range []float64{100, 400, 1600} {
			w[i].Work = work
		}
		x := w[3]
		a.Order(s, 0, nil)
		for _, j := range slices.Clone(w[:3]) {
			if err := s.End(j, model.Finished); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(x, []model.GPU{{Node: 1, Index: 0}}); err != nil {
			t.Fatal(err)
		}
		x.Rate = 0.99 // LastStart and Resume 0: x is past its restart, not pinned
		got := chosen(s, a.Order(s, 1, nil))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v, move cost %v s: chosen %v, want %v", a.Name(), tc.cost, got, tc.want)
		}
	}
}
