package sim_test

import (
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/sim"
)

func TestSpareNodesByHand(t *testing.T) {
	// Two 1-GPU V100 nodes (idle on 250 W, busy 500 W, asleep 20 W), asleep
	// 100 s after they become idle, up 30 s after a wake-up, one spare.
	// A (0, 50 s), B (35, 200 s), C (300, 50 s), 1 GPU each.
	//   0: n0 is on (the spare), n1 asleep. A runs on n0 0–50; n0 busy, so
	//      n1 is woken with no job (up at 30) to be the spare.
	//  35: B on n1, which is up: 35–235. Spares are kept until 35 + 35 ×
	//      (e^10 − 1) ≈ 770,924 (keepGaps(1) mean gaps after the last
	//      submission), past the run's end.
	// 150: n0, idle since 50, is the only idle node: held on.
	// 235: n1 idle: one more spare than needed, so n0 suspends itself.
	// 300: C goes to n0 (pack: the lowest node), asleep; n1, on and idle,
	//      stands in: n0 takes n1's state, C runs 300–350 at once; n1
	//      sleeps, and is woken again as the spare (up at 330).
	// Draw: n0 0–50 busy 25,000 J, 50–235 on 46,250, 235–300 asleep 1,300,
	// 300–350 busy 25,000 (97,550 J); n1 0–30 waking 7,500, 30–35 on 1,250,
	// 35–235 busy 100,000, 235–300 on 16,250, 300–330 waking 7,500, 330–350
	// on 5,000 (137,500 J). Total 235,050 J, idle 85,050 J, 2 wake-ups.
	// Without spares A waits for n0 (30–80), B for n1 (65–265) and C for
	// n0 again (330–380).
	c := cluster(t, "v100", 1, "v100", 1)
	jobs := []model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 35).dur(200).obj(), makeJob("C", 300).dur(50).obj()}
	for _, tt := range []struct {
		spare int
		want  []float64
	}{{0, []float64{80, 265, 380}}, {1, []float64{50, 235, 350}}} {
		res, _ := powered{cluster: c, power: sleepy(c, 100, 30), jobs: jobs, cfg: sim.Config{Energy: true, Spare: tt.spare}}.run(t)
		if got := finishTimes(res); !equalFloats(got, tt.want) {
			t.Errorf("spare %d: finishes %v, want %v", tt.spare, got, tt.want)
		}
		if tt.spare == 0 {
			continue
		}
		const kWh = 3.6e6
		e := res.Energy
		if !near(e.TotalKWh, 235_050/kWh) || !near(e.IdleKWh, 85_050/kWh) || e.Wakes != 2 {
			t.Errorf("energy %v kWh (idle %v, %d wakes), want %v (idle %v, 2 wakes)", e.TotalKWh, e.IdleKWh, e.Wakes, 235_050/kWh, 85_050/kWh)
		}
		if !near(e.NodeKWh[0], 97_550/kWh) || !near(e.NodeKWh[1], 137_500/kWh) {
			t.Errorf("nodes %v kWh, want %v and %v", e.NodeKWh, 97_550/kWh, 137_500/kWh)
		}
	}
}

func TestSpareRules(t *testing.T) {
	tests := []struct {
		name  string
		nodes int // 1-GPU V100 nodes
		jobs  []model.JobSpec
		want  []float64 // finishes
		wakes int
	}{
		// A on n0, the spare, at once; n1 woken as the spare (up at 30),
		// so B, at 10, waits for it: 30–80. One gap of 10 s says little of
		// the rate: the spares are kept 10 × (e^10 − 1) = 220,254.658 s
		// after B (keepGaps(1)), to 220,264.658. n0, idle at 50, suspends
		// at 150 (n1, idle at 80, is the spare); n1 is held from 180. C, at
		// 300,000, after the lapse, wakes the spare n0 again (up at
		// 300,030) and runs on it, 300,030–300,080, and n1 is woken as the
		// next spare.
		{"spares lapse when jobs stop coming", 2,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 10).dur(50).obj(), makeJob("C", 300_000).dur(50).obj()},
			[]float64{50, 80, 300_080}, 3},
		// The same with C at 1,000, a hundred gaps after B, as the one
		// gap known so far measures them: the spares are still kept (the
		// rate is not known well enough to say jobs stopped), so C finds
		// n1 on: n1 stands in for the sleeping n0, C runs 1,000–1,050 at
		// once, and n1 (under n0's name now asleep) is woken as the spare.
		// (Kept 10 mean gaps whatever their number, the spares lapsed at
		// 10 + 10 × 10 = 110: C woke n0 and ran 1,030–1,080, 3 wake-ups.)
		{"a few gaps do not end the spares", 2,
			[]model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("B", 10).dur(50).obj(), makeJob("C", 1000).dur(50).obj()},
			[]float64{50, 80, 1050}, 2},
		// C's 3 GPUs make the spares 3 (the largest gang): every node is on
		// from 0. A on n0 (0–1000), B on n1 (40–100); C (3 GPUs, at 50)
		// waits for A. The spares lapse at 50 + 10 × 25 = 300, but C
		// waits: n1 and n2 stay on, and C runs at once when A ends:
		// 1000–1050, with no wake-up. (Letting them sleep at 300, C would
		// wait for them until 1030 and end at 1080.)
		{"no idle node sleeps while jobs wait", 3,
			[]model.JobSpec{makeJob("A", 0).dur(1000).obj(), makeJob("B", 40).dur(60).obj(), makeJob("C", 50).gpus(3).dur(50).obj()},
			[]float64{1000, 100, 1050}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []any
			for range tt.nodes {
				nodes = append(nodes, "v100", 1)
			}
			c := cluster(t, nodes...)
			res, _ := powered{cluster: c, power: sleepy(c, 100, 30), jobs: tt.jobs, cfg: sim.Config{Energy: true, Spare: 1}}.run(t)
			if got := finishTimes(res); !equalFloats(got, tt.want) {
				t.Errorf("finishes %v, want %v", got, tt.want)
			}
			if res.Energy.Wakes != tt.wakes {
				t.Errorf("%d wake-ups, want %d", res.Energy.Wakes, tt.wakes)
			}
		})
	}
}

// TestSparesKeepTheScheduleOfNodesOn: with as many spares as nodes of each
// kind (two kinds here) and jobs that keep coming, no node is ever asleep
// when a job needs it, so every job of one to three GPUs ends when it does
// with every node on, although the nodes would sleep as soon as idle.
func TestSparesKeepTheScheduleOfNodesOn(t *testing.T) {
	c := cluster(t, "v100", 2, "v100", 2, "k80", 2, "k80", 2)
	var jobs []model.JobSpec
	for i := range 40 {
		id := string(rune('a'+i%26)) + string(rune('0'+i/26))
		jobs = append(jobs, makeJob(id, float64(20*i)).gpus(1+i%3).dur(float64(30+(i*37)%200)).obj())
	}
	on, _ := powered{cluster: c, power: roundPower(c), jobs: jobs, cfg: sim.Config{Energy: true}}.run(t)
	asleep, _ := powered{cluster: c, power: sleepy(c, 0, 30), jobs: jobs, cfg: sim.Config{Energy: true, Spare: 2}}.run(t)
	if got, want := finishTimes(asleep), finishTimes(on); !equalFloats(got, want) {
		t.Errorf("finishes asleep %v,\nwant those with nodes on %v", got, want)
	}
	if asleep.Energy.Wakes != 0 {
		t.Errorf("%d wake-ups, want 0", asleep.Energy.Wakes)
	}
}

// TestSparesCoverTheLargestGang: a kind's spares are at least the nodes
// the workload's largest gang fills — an elastic job's maximum when a
// scaler may grow it, else a job's GPUs (issue 28). Three 4-GPU V100
// nodes, asleep when idle (after 10,000 s), up 300 s after a wake-up; one
// spare; 30 s restart pause. A (elastic 4..max GPUs, 1,000 s on 4: 1 unit/s
// on 4, 2 on 8, 3 on 12) starts at 0 on n0:
//   - max 12, grown by 8 at 100 by the script: the gang is 3 nodes, so all
//     three are on from the first submission; the growth finds n1 and n2
//     up and pauses at once: 130 + 900/3 = 430, as with every node on, and
//     no node is ever woken. (With one spare, n1 woken at 0 and n2 at 100,
//     A would run on its 4 GPUs to 400 and end at 430 + 600/3 = 630.)
//   - max 8, grown by 4 at 100: 2 spares, n0 and n1 on; n2 is woken at 0
//     when A takes n0 (up at 300); the growth onto n1 pauses at once:
//     130 + 900/2 = 580.
//   - max 12 with no scaler: A runs at its 4 GPUs, the gang is 1 node and
//     the spare is the one: n1 is woken at 0 when A takes n0; A ends at
//     1,000.
func TestSparesCoverTheLargestGang(t *testing.T) {
	tests := []struct {
		name  string
		max   int
		steps []step // nil: no scaler
		want  float64
		wakes int
	}{
		{"elastic maximum under a scaler", 12, []step{{100, "A", 8}}, 430, 0},
		{"a smaller maximum", 8, []step{{100, "A", 4}}, 580, 1},
		{"no scaler: the job's GPUs", 12, nil, 1000, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster(t, "v100", 4, "v100", 4, "v100", 4)
			var sc engine.Scaler
			if tt.steps != nil {
				sc = &scripted{tt.steps}
			}
			eng, err := engine.New(policy.FIFO{}, placer.Pack{}, sc)
			if err != nil {
				t.Fatal(err)
			}
			jobs := []model.JobSpec{makeJob("A", 0).gpus(4).elastic(4, tt.max).dur(1000).obj()}
			res, log := powered{cluster: c, power: sleepy(c, 10_000, 300), eng: eng, jobs: jobs,
				cfg: sim.Config{Energy: true, Spare: 1, RestartOverhead: 30 * model.Second}}.run(t)
			if got := finishTimes(res); !equalFloats(got, []float64{tt.want}) {
				t.Errorf("A ends at %v, want %v\n%s", got, tt.want, log)
			}
			if res.Energy.Wakes != tt.wakes {
				t.Errorf("%d wake-ups, want %d", res.Energy.Wakes, tt.wakes)
			}
		})
	}
}

// TestGangSparesHoldItsGrowth: an elastic gang starts at its minimum and
// grows a round later; a job that arrives in between fills the rest of
// its start node, so its growth needs whole nodes of its own: the spares
// are the start's nodes and the growth's, apart (issue 28). Three 4-GPU
// V100 nodes, asleep when idle (after 10,000 s), up 300 s after a
// wake-up; one spare; 30 s restart pause. A (elastic 2..8 GPUs, 1,000 s on
// 2: 1 unit/s on 2, 4 on 8) starts at 0 on n0; B (2 GPUs, 1,000 s) arrives
// at 50 and takes the rest of n0; the script grows A by 6 at 100, onto n1
// and two GPUs of n2. A's gang is 1 node for its start and 2 for its
// growth: all three are on from the first submission, the growth pauses
// at once, and A ends at 130 + 900/4 = 355, as with every node on, with no
// wake-up. (Before, the gang was ⌈8/4⌉ = 2 nodes: n2 was woken at 0 when
// A took n0, up at 300; A ran on its 2 GPUs to 300 and ended at 330 +
// 700/4 = 505.)
func TestGangSparesHoldItsGrowth(t *testing.T) {
	c := cluster(t, "v100", 4, "v100", 4, "v100", 4)
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, &scripted{[]step{{100, "A", 6}}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{
		makeJob("A", 0).gpus(2).elastic(2, 8).dur(1000).obj(),
		makeJob("B", 50).gpus(2).dur(1000).obj(),
	}
	res, log := powered{cluster: c, power: sleepy(c, 10_000, 300), eng: eng, jobs: jobs,
		cfg: sim.Config{Energy: true, Spare: 1, RestartOverhead: 30 * model.Second}}.run(t)
	if got := finishTimes(res); !equalFloats(got, []float64{355, 1050}) {
		t.Errorf("finishes %v, want [355 1050]\n%s", got, log)
	}
	if res.Energy.Wakes != 0 {
		t.Errorf("%d wake-ups, want 0", res.Energy.Wakes)
	}
}

// TestResizeKeepsItsSpares: a resize takes the job off its nodes and puts
// it on its new ones at one instant; the nodes it keeps are not idle in
// between, and no spare suspends itself because they seemed to be. Three
// 4-GPU V100 nodes, asleep 10 s after they become idle, up 300 s after a
// wake-up; one spare, two for the gang (A's maximum, 8, under a scaler);
// 30 s restart pause. A (elastic 4..8 GPUs, 1,000 s on 4: 1 unit/s on 4,
// 2 on 8) starts at 0 on n0; n0 and n1 are on from the first submission,
// and n2 is woken at 0 as the second spare (up at 300). n1, idle since 0,
// is held on at 10. The script grows A by 4 at 100, onto n1: it pauses at
// once and ends at 130 + 900/2 = 580, with one wake-up. (Before, the
// resize's instant with n0 idle made three idle nodes for two spares: n1
// suspended itself, and the growth onto it took n2's wake-up instead: A
// ran on 4 GPUs to 300 and ended at 330 + 700/2 = 680, and n2 was woken
// again: two wake-ups.)
func TestResizeKeepsItsSpares(t *testing.T) {
	c := cluster(t, "v100", 4, "v100", 4, "v100", 4)
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, &scripted{[]step{{100, "A", 4}}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{makeJob("A", 0).gpus(4).elastic(4, 8).dur(1000).obj()}
	res, log := powered{cluster: c, power: sleepy(c, 10, 300), eng: eng, jobs: jobs,
		cfg: sim.Config{Energy: true, Spare: 1, RestartOverhead: 30 * model.Second}}.run(t)
	if got := finishTimes(res); !equalFloats(got, []float64{580}) {
		t.Errorf("A ends at %v, want 580\n%s", got, log)
	}
	if res.Energy.Wakes != 1 {
		t.Errorf("%d wake-ups, want 1", res.Energy.Wakes)
	}
}

// TestGangSparesOnlyWhereItRuns: the largest gang raises the spares of the
// kinds whose GPU type it can run on only. Three 4-GPU V100 nodes and
// three 4-GPU K80 nodes (idle 200 W + 4 × 50 W = 400 W, asleep 20 W),
// asleep 10 s after they become idle, one spare; A (elastic 4..12 GPUs,
// V100 only, 1,000 s) under a scaler that never resizes it. The V100
// spares are the 3 nodes of A's maximum, the K80 spare is 1: n3 is on from
// 0 (400 W × 1,000 s = 400,000 J), n4 and n5 asleep (20,000 J each); A runs
// 0–1,000 on n0 with no wake-up. (Before, A's 12 GPUs kept all three K80
// nodes on: 400,000 J each.)
func TestGangSparesOnlyWhereItRuns(t *testing.T) {
	c := cluster(t, "v100", 4, "v100", 4, "v100", 4, "k80", 4, "k80", 4, "k80", 4)
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, &scripted{[]step{}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{makeJob("A", 0).gpus(4).elastic(4, 12).gpuType("v100").dur(1000).obj()}
	res, log := powered{cluster: c, power: sleepy(c, 10, 300), eng: eng, jobs: jobs,
		cfg: sim.Config{Energy: true, Spare: 1}}.run(t)
	if got := finishTimes(res); !equalFloats(got, []float64{1000}) {
		t.Errorf("A ends at %v, want 1000\n%s", got, log)
	}
	const kWh = 3.6e6
	e := res.Energy
	for i, want := range map[int]float64{3: 400_000, 4: 20_000, 5: 20_000} {
		if !near(e.NodeKWh[i], want/kWh) {
			t.Errorf("n%d drew %v kWh, want %v", i, e.NodeKWh[i], want/kWh)
		}
	}
	if e.Wakes != 0 {
		t.Errorf("%d wake-ups, want 0", e.Wakes)
	}
}

// TestWakingNodeStandsIn: a job placed on a node still waking up, while an
// idle node of its kind is on, runs at once: the two exchange their power
// states (the job goes to the node that is up, the names exchanged), as a
// job placed on a sleeping node does. Five 1-GPU V100 nodes, asleep 100 s
// after they become idle, up 30 s after a wake-up; two spares.
//   - 0: n0 and n1 are on. A (200 s) runs on n0; n2 is woken (up at 30).
//   - 50: B (10,000 s) runs on n1; n3 is woken (up at 80). n2 and n3 are
//     held on as the spares at 130 and 180.
//   - 200: A ends; three idle nodes are on, so the lowest held, n2,
//     suspends itself; n0 and n3 stay on.
//   - 210: C (10,000 s) runs on n0; n2 is woken again (up at 240).
//   - 215: D (10 s) is placed on n2 (pack: the lowest node), still waking,
//     while n3 is on and idle: n3 stands in and D runs 215–225, as with
//     every node on (before, D waited for n2: 240–250). n4 is woken as the
//     second spare. Four wake-ups either way.
func TestWakingNodeStandsIn(t *testing.T) {
	c := cluster(t, "v100", 1, "v100", 1, "v100", 1, "v100", 1, "v100", 1)
	jobs := []model.JobSpec{makeJob("A", 0).dur(200).obj(), makeJob("B", 50).dur(10_000).obj(),
		makeJob("C", 210).dur(10_000).obj(), makeJob("D", 215).dur(10).obj()}
	res, log := powered{cluster: c, power: sleepy(c, 100, 30), jobs: jobs, cfg: sim.Config{Energy: true, Spare: 2}}.run(t)
	if got, want := finishTimes(res), []float64{200, 10_050, 10_210, 225}; !equalFloats(got, want) {
		t.Errorf("finishes %v, want %v\n%s", got, want, log)
	}
	if res.Energy.Wakes != 4 {
		t.Errorf("%d wake-ups, want 4", res.Energy.Wakes)
	}
}

// TestQueueWakesItsNodes: while jobs wait, the sleeping nodes the waiting
// jobs could take are woken (issue 28, eighth session). One 1-GPU V100
// node n0 and three 1-GPU K80 nodes n1–n3, asleep 100 s after they become
// idle, up 30 s after a wake-up, one spare per kind; fifo, pack. A (V100
// only, 1,000 s) at 0 takes n0, the V100 kind's spare; n1 is the K80
// kind's, on from 0. B (V100 only, 100 s) at 10 waits for A, and C and D
// (50 s each), which could run on a K80, wait behind it in the strict
// queue:
//   - C at 20 needs one K80 node: n1 is on. D at 30 makes it two: n2 is
//     woken (up at 60). At 1,000 A ends: B on n0 (1,000–1,100), C on n1
//     and D on n2, both up, each 50 s × 15.7/4.37 TFLOPS = 179.634 s on a
//     K80: 1,000–1,179.634, as with every node on; one wake-up. (Before,
//     no node was woken for the queue: D waited for n2, woken at 1,000,
//     and ran 1,030–1,209.634.)
//   - C and D V100 only: no K80 node is woken for them; they run on n0
//     after B, 1,100–1,150 and 1,150–1,200, and no node is ever woken.
func TestQueueWakesItsNodes(t *testing.T) {
	tests := []struct {
		name  string
		cd    string // C's and D's GPU type constraint
		want  []float64
		wakes int
	}{
		{"the waiting jobs' nodes are up", "", []float64{1000, 1100, 1179.634, 1179.634}, 1},
		{"only nodes they can run on", "v100", []float64{1000, 1100, 1150, 1200}, 0},
	}
	c := cluster(t, "v100", 1, "k80", 1, "k80", 1, "k80", 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := []model.JobSpec{
				makeJob("A", 0).gpuType("v100").dur(1000).obj(), makeJob("B", 10).gpuType("v100").dur(100).obj(),
				makeJob("C", 20).gpuType(tt.cd).dur(50).obj(), makeJob("D", 30).gpuType(tt.cd).dur(50).obj(),
			}
			res, _ := powered{cluster: c, power: sleepy(c, 100, 30), jobs: jobs, cfg: sim.Config{Energy: true, Spare: 1}}.run(t)
			if got := finishTimes(res); !equalFloats(got, tt.want) {
				t.Errorf("finishes %v, want %v", got, tt.want)
			}
			if res.Energy.Wakes != tt.wakes {
				t.Errorf("%d wake-ups, want %d", res.Energy.Wakes, tt.wakes)
			}
		})
	}
}
