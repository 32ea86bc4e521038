package power_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/power"
)

// sleeper is node(200, 0.75, 0.3) suspended at 20 W while idle.
func sleeper() power.NodePower {
	n := node(200, 0.75, 0.3)
	n.Sleeps, n.SleepW = true, 20
	return n
}

func TestIdleAndMixedWatts(t *testing.T) {
	tests := []struct {
		name        string
		node        power.NodePower
		busy, total int
		utilSum     float64
		want        float64
	}{
		{"idle node that stays on", node(200, 0.75, 0.3), 0, 8, 0, 200 + 8*50},
		{"idle node that sleeps", sleeper(), 0, 8, 0, 20},
		{"sleep power 0", func() power.NodePower { n := sleeper(); n.SleepW = 0; return n }(), 0, 4, 0, 0},
		{"a sleeping node wakes with one busy GPU", sleeper(), 1, 8, 1, 200 + 8*50 + 250},
		// Two busy GPUs at 1 and 0.6: 200 + 4·50 + 250·1.6.
		{"two families on one node", node(200, 0.75, 0.3), 2, 4, 1.6, 200 + 4*50 + 250*1.6},
		{"utilisation sum clamped to busy", node(200, 0.75, 0.3), 2, 4, 5, 200 + 4*50 + 250*2},
		{"negative utilisation sum", node(200, 0.75, 0.3), 2, 4, -1, 200 + 4*50},
	}
	for _, tt := range tests {
		if got := power.MixedWatts(tt.node, v100(), tt.busy, tt.total, tt.utilSum); !near(got, tt.want) {
			t.Errorf("%s: MixedWatts = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := power.NodeWatts(sleeper(), v100(), 0, 8, 1); got != 20 {
		t.Errorf("NodeWatts of an idle sleeping node = %v, want its sleep power 20", got)
	}
	if got, want := power.NodeWatts(sleeper(), v100(), 3, 8, 0.5), 200+8*50+3*125.0; !near(got, want) {
		t.Errorf("NodeWatts of a busy sleeping node = %v, want %v", got, want)
	}
	if got := v100().BusyWatts(0.6); !near(got, 50+250*0.6) {
		t.Errorf("BusyWatts(0.6) = %v, want 200", got)
	}
}

// TestRampIgnoresSleep: a calibration ramp measures a node that is on, so
// its idle reading is base plus idle GPUs even for a node that sleeps.
func TestRampIgnoresSleep(t *testing.T) {
	r := power.Ramp(sleeper(), v100(), power.DefaultWorkload(), 8, 8)
	if r[0].PowerW != 200+8*50 {
		t.Errorf("idle reading of a sleeping node's ramp = %v W, want 600", r[0].PowerW)
	}
}

func TestValidateSleep(t *testing.T) {
	tests := []struct {
		name   string
		sleepW float64
		sleeps bool
		want   string
	}{
		{"sleep power 0", 0, true, ""},
		{"sleep power 15", 15, true, ""},
		{"negative sleep power", -1, true, "sleep power -1 W"},
		{"NaN sleep power", math.NaN(), true, "sleep power NaN W"},
		{"unused sleep power is not checked", -1, false, ""},
	}
	for _, tt := range tests {
		n := node(200, 0.75, 0.3)
		n.Sleeps, n.SleepW = tt.sleeps, tt.sleepW
		err := n.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one starting %q", tt.name, err, tt.want)
		}
	}
}
