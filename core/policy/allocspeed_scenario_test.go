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
