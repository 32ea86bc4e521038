package power_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/power"
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
		name                string
		sleepW, after, wake float64
		sleeps              bool
		want                string
	}{
		{"sleep power 0", 0, 0, 0, true, ""},
		{"sleep power 15", 15, 600, 300, true, ""},
		{"negative sleep power", -1, 0, 0, true, "sleep power -1 W"},
		{"NaN sleep power", math.NaN(), 0, 0, true, "sleep power NaN W"},
		{"unused sleep power is not checked", -1, -1, -1, false, ""},
		{"negative delay before sleeping", 20, -1, 0, true, "sleep after -1 s"},
		{"infinite wake-up", 20, 0, math.Inf(1), true, "wake-up time +Inf s"},
		{"negative wake-up", 20, 0, -2, true, "wake-up time -2 s"},
	}
	for _, tt := range tests {
		n := node(200, 0.75, 0.3)
		n.Sleeps, n.SleepW, n.SleepAfterS, n.WakeS = tt.sleeps, tt.sleepW, tt.after, tt.wake
		err := n.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one starting %q", tt.name, err, tt.want)
		}
	}
}

func TestAwakeIdleWatts(t *testing.T) {
	if got := sleeper().AwakeIdleWatts(v100(), 8); got != 200+8*50 {
		t.Errorf("AwakeIdleWatts of a sleeping node = %v, want its draw when on, 600", got)
	}
	if got := sleeper().IdleWatts(v100(), 8); got != 20 {
		t.Errorf("IdleWatts of a sleeping node = %v, want 20", got)
	}
}

// TestNodesMatter: energy can depend on the nodes chosen exactly when some
// node sleeps or contention applies on some node that slows its jobs.
func TestNodesMatter(t *testing.T) {
	on, noKnee, noSlow := node(200, 0.75, 0.3), node(200, 1, 0.3), node(200, 0.5, 0)
	tests := []struct {
		name       string
		nodes      []power.NodePower
		contention bool
		want       bool
	}{
		{"always on, no contention", []power.NodePower{on, on}, false, false},
		{"different base power, always on", []power.NodePower{on, node(50, 0.75, 0.3)}, false, false},
		{"one node sleeps", []power.NodePower{on, sleeper()}, false, true},
		{"contention applied", []power.NodePower{on, on}, true, true},
		{"contention applied, knee at full load", []power.NodePower{noKnee, noKnee}, true, false},
		{"contention applied, no slowdown", []power.NodePower{noSlow, noKnee}, true, false},
		{"contention applied, one node slows", []power.NodePower{noSlow, on}, true, true},
	}
	for _, tt := range tests {
		p := &power.Cluster{Nodes: tt.nodes}
		if got := p.NodesMatter(tt.contention); got != tt.want {
			t.Errorf("%s: NodesMatter = %v, want %v", tt.name, got, tt.want)
		}
	}
}
