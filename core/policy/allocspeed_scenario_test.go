package policy_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

// TestSpeedExponent: TestPriorityBacklog's scenario without the backlog
// (esrpt weights x 1/3725² = 7.207e−8, y 1/6400² = 2.441e−8; x runs at
// half speed on slow, y only on fast). x alone on fast is worth 7.207e−8;
// x on slow and y on fast 0.5^γ·7.207e−8 + 2.441e−8, more than x alone
// when 0.5^γ > 0.6613, i.e. γ < 0.597. γ = 1 (and 0, which means 1): 6.04e−8,
// x takes fast and y waits; γ = 0.7: 0.616·7.207e−8 + 2.441e−8 = 6.88e−8,
// the same; γ = 0.5: 0.707·7.207e−8 + 2.441e−8 = 7.54e−8, both run, x on
// slow. The oracle (x 1/2000² = 2.5e−7: 0.707·2.5e−7 + 2.441e−8 = 2.01e−7)
// keeps x on fast at γ = 0.5.
func TestSpeedExponent(t *testing.T) {
	for _, tc := range []struct {
		exp    float64
		oracle bool
		want   []string
	}{
		{0, false, []string{"x:fast"}},
		{1, false, []string{"x:fast"}},
		{0.7, false, []string{"x:fast"}},
		{0.5, false, []string{"x:slow", "y:fast"}},
		{0.5, true, []string{"x:fast"}},
	} {
		s := fastSlow(t)
		a := &policy.Alloc{Objective: policy.EstSRPT, Oracle: tc.oracle, SpeedExponent: tc.exp, Round: 360 * model.Second}
		if got := chosenAfter(t, s, a, 100, 400, 1600); !slices.Equal(got, tc.want) {
			t.Errorf("speed exponent %v oracle %v: chosen %v, want %v", tc.exp, tc.oracle, got, tc.want)
		}
	}
}

// TestGittinsFillsNoSlowerType: two types of one GPU each, v100 rated
// faster, and a job r that runs at 0.4 on v100 and 1 on p100 (Gavel's
// Recommendation models run so). Jobs of 100, 400 and 1600 s finish; r is
// left alone. X gives it its whole share on p100 and none on v100 (esrpt's
// program; gittins's bestFits, without it, since r fits on its fastest). Pairs are taken type by type from the fastest-rated, and a job
// without a share on a type fills it when it has room: esrpt puts r on
// v100, where it runs at 0.4 for as long as it is alone. Gittins does not
// let a job fill a type slower for it than the type of its share while
// that one has room: r runs on p100.
func TestGittinsFillsNoSlowerType(t *testing.T) {
	both := []float64{1, 1}
	for _, tc := range []struct {
		obj  policy.Objective
		want []string
	}{
		{policy.EstSRPT, []string{"r:v100"}},
		{policy.Gittins, []string{"r:p100"}},
	} {
		s := hetState(t, []string{"v100", "p100"}, []float64{15.7, 10.6}, []int{1, 1},
			typed{"f1": both, "f2": both, "f3": both, "r": {0.4, 1}}, "f1", "f2", "f3", "r")
		a := &policy.Alloc{Objective: tc.obj, Round: 360 * model.Second}
		if got := chosenAfter(t, s, a, 100, 400, 1600); !slices.Equal(got, tc.want) {
			t.Errorf("%v: chosen %v, want %v", a.Name(), got, tc.want)
		}
	}
}
