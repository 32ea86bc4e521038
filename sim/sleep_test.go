package sim_test

import (
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/sim"
)

// sleepy is roundPower without contention and with every node
// power-managed: asleep at 20 W after after seconds idle, up wake seconds
// after a job wakes it.
func sleepy(c *model.Cluster, after, wake float64) *power.Cluster {
	p := roundPower(c)
	for i := range p.Nodes {
		p.Nodes[i] = power.NodePower{BaseW: 200, Contention: power.Contention{Knee: 1},
			Sleeps: true, SleepW: 20, SleepAfterS: after, WakeS: wake}
	}
	return p
}

// finishTimes returns the jobs' finish times in seconds, in trace order.
func finishTimes(res *sim.Result) []float64 {
	var out []float64
	for _, r := range res.Records {
		out = append(out, r.Finish.Seconds())
	}
	return out
}

func TestSleepAndWakeByHand(t *testing.T) {
	// One 2-GPU node (idle 50 W, max 300 W per GPU, base 200 W), asleep at
	// the start, asleep 100 s after it becomes idle, up 30 s after a job
	// wakes it. A, B, C: 1 GPU, 50 s each, submitted at 0, 120, 300.
	//   0: A wakes the node, which draws 200 + 2·50 = 300 W until it is
	//   up at 30 (300 W · 30 s = 9,000 J); A runs 30–80 at 550 W (27,500 J)
	//   80–120: idle, still on                          300 W ·  40 s = 12,000 J
	//   120: B starts at once (the node is on); 120–170. 550 W · 50 s = 27,500 J
	//   170–270: idle, on                               300 W · 100 s = 30,000 J
	//   270–300: asleep                                  20 W ·  30 s =    600 J
	//   300: C wakes it (9,000 J); up at 330; C runs 330–380 (27,500 J)
	// Total 143,100 J, idle 42,600 J, 2 wake-ups. A job's energy includes
	// the wake-up it waits for: A and C 36,500 J each, B 27,500 J.
	c := cluster(t, "v100", 2)
	jobs := []model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 120).dur(50).obj(), makeJob("C", 300).dur(50).obj()}
	res, _ := powered{cluster: c, power: sleepy(c, 100, 30), jobs: jobs, cfg: sim.Config{Energy: true}}.run(t)
	if got, want := finishTimes(res), []float64{80, 170, 380}; !equalFloats(got, want) {
		t.Errorf("finishes %v, want %v", got, want)
	}
	const kWh = 3.6e6
	e := res.Energy
	if !near(e.TotalKWh, 143_100/kWh) || !near(e.IdleKWh, 42_600/kWh) || e.Wakes != 2 {
		t.Errorf("energy %v kWh (idle %v, wakes %d), want %v (idle %v, 2 wakes)", e.TotalKWh, e.IdleKWh, e.Wakes, 143_100/kWh, 42_600/kWh)
	}
	for i, want := range []float64{36_500, 27_500, 36_500} {
		if got := res.Records[i].EnergyKWh; !near(got, want/kWh) {
			t.Errorf("job %d: %v kWh, want %v", i, got, want/kWh)
		}
	}
	// The draw changes at every start and finish, and between events when
	// the node is up (30, 330) and when it suspends itself (270).
	want := []struct{ t, w float64 }{{0, 300}, {30, 550}, {80, 300}, {120, 550}, {170, 300}, {270, 20}, {300, 300}, {330, 550}, {380, 300}}
	if len(res.Samples) != len(want) {
		t.Fatalf("samples %+v, want %d", res.Samples, len(want))
	}
	for i, w := range want {
		if s := res.Samples[i]; s.T.Seconds() != w.t || !near(s.PowerW, w.w) {
			t.Errorf("sample %d: %v W at %v s, want %v W at %v s", i, s.PowerW, s.T.Seconds(), w.w, w.t)
		}
	}
	if s := res.Samples[5]; s.BusyGPUs != 0 || s.Queued != 0 {
		t.Errorf("sample at 270: %d busy, %d queued, want 0 and 0", s.BusyGPUs, s.Queued)
	}
}

func TestWakeLatency(t *testing.T) {
	tests := []struct {
		name   string
		gpus   []any // cluster nodes
		wake   []float64
		after  float64
		energy bool
		jobs   []model.JobSpec
		want   []float64 // finishes
		wakes  int
	}{
		// A 2-GPU job on two 1-GPU nodes, up after 10 and 40 s: it starts
		// when the slower is up, at 40, and ends at 90.
		{"a job waits for its slowest node", []any{"v100", 1, "v100", 1}, []float64{10, 40}, 0, true,
			[]model.JobSpec{makeJob("A", 0).gpus(2).dur(50).obj()}, []float64{90}, 2},
		// B joins A's node while it wakes (up at 30): both run from 30.
		{"a job placed on a waking node waits too", []any{"v100", 2}, []float64{30}, 0, true,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 10).dur(50).obj()}, []float64{80, 80}, 1},
		// B waits in the queue for A's GPU and takes it as A ends, at 80:
		// the node was never idle, so it never slept, even with no delay
		// before sleeping.
		{"no sleep between a finish and a start", []any{"v100", 1}, []float64{30}, 0, true,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 5).dur(50).obj()}, []float64{80, 130}, 1},
		// After 0 s idle the node sleeps at once: B, at 100, wakes it.
		{"asleep as soon as idle", []any{"v100", 1}, []float64{30}, 0, true,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 100).dur(50).obj()}, []float64{80, 180}, 2},
		// Idle for 20 s, less than the 60 s before sleeping: still on.
		{"on until the delay passes", []any{"v100", 1}, []float64{30}, 60, true,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 100).dur(50).obj()}, []float64{80, 150}, 1},
		// Without energy accounting nodes still sleep and wake.
		{"without energy accounting", []any{"v100", 1}, []float64{30}, 0, false,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj()}, []float64{80}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster(t, tt.gpus...)
			p := sleepy(c, tt.after, 0)
			for i, w := range tt.wake {
				p.Nodes[i].WakeS = w
			}
			res, _ := powered{cluster: c, power: p, jobs: tt.jobs, cfg: sim.Config{Energy: tt.energy}}.run(t)
			if got := finishTimes(res); !equalFloats(got, tt.want) {
				t.Errorf("finishes %v, want %v", got, tt.want)
			}
			switch {
			case tt.wakes < 0 && res.Energy != nil:
				t.Errorf("energy %+v without accounting", res.Energy)
			case tt.wakes >= 0 && res.Energy.Wakes != tt.wakes:
				t.Errorf("%d wake-ups, want %d", res.Energy.Wakes, tt.wakes)
			}
		})
	}
}

// TestPreemptorWaitsForWake: S preempts L and needs both nodes; it runs
// when the sleeping one is up, and L restarts with its pause on a node that
// is on. Two 2-GPU nodes, up 30 s after a wake-up, asleep as soon as idle;
// srtf, 10 s restart pause. L (2 GPUs, 100 s) wakes n0 at 0 and runs from
// 30; S (4 GPUs, 5 s) preempts it at 40 (L has done 10 s) and wakes n1: up
// at 70, S ends at 75. L restarts at 75 on n0, idle only since 75 and so
// still on: it resumes at 85 with 90 s left and ends at 175.
func TestPreemptorWaitsForWake(t *testing.T) {
	c := cluster(t, "v100", 2, "v100", 2)
	eng, err := engine.New(&policy.SRTF{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{makeJob("L", 0).gpus(2).dur(100).obj(), makeJob("S", 40).gpus(4).dur(5).obj()}
	res, log := powered{cluster: c, power: sleepy(c, 0, 30), eng: eng, jobs: jobs,
		cfg: sim.Config{Energy: true, RestartOverhead: 10 * model.Second}}.run(t)
	if got := finishTimes(res); !equalFloats(got, []float64{175, 75}) || res.Energy.Wakes != 2 {
		t.Errorf("finishes %v, %d wake-ups; want [175 75], 2\n%s", got, res.Energy.Wakes, log)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}
