package scaler_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/scaler"
)

// testCfg is the configuration of most threshold scenarios: p = 0.5,
// et = 0.3, st = 0.9, so mt = (et + st)/2 = 0.6.
var testCfg = scaler.ThresholdConfig{Proportion: 0.5, Expand: 0.3, Shrink: 0.9, Period: 5 * model.Minute}

// band is p = 1, et = 0.25, st = 0.75 (mt = 0.5): every figure is exact in
// binary, so the boundaries T = et and T = st can be hit exactly.
var band = scaler.ThresholdConfig{Proportion: 1, Expand: 0.25, Shrink: 0.75, Period: 5 * model.Minute}

func newThreshold(t testing.TB, cfg scaler.ThresholdConfig) *scaler.Threshold {
	t.Helper()
	th, err := scaler.NewThreshold(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

var two8 = []nd{{"a", 8}, {"a", 8}} // A = 16 GPUs of one type

// TestThresholdScenarios drives seed 000's pass (steps 1–5) through the
// engine at now = 0 (the first pass is due at once). In the comments A is
// the cluster's GPUs, used the GPUs in use after the round's starts, EU the
// elastic surplus (GPUs above the minimums), a = used − EU, M = (A − a)·p,
// mt = (et + st)/2, T = EU/M and EM the budget; r1 is a replica's GPUs.
// Unless a job says otherwise r1 = 1 and every job has priority 0, no past
// resize, and arrives in the order listed.
func TestThresholdScenarios(t *testing.T) {
	period := 5 * model.Minute
	tests := []struct {
		name  string
		cfg   scaler.ThresholdConfig
		nodes []nd
		jobs  []*jb
		// fig is A, used, EU as computed in the comment; mode and em are
		// what ThresholdConfig.Plan must make of them.
		fig    [3]int
		mode   scaler.Mode
		em     float64
		resize map[string]int
		start  map[string]int
		wake   model.Time
	}{
		// A = 16; used = R 2 + E1 2 + E2 1 = 5; EU = 1 (E1); a = 4;
		// M = (16 − 4)·0.5 = 6; T = 1/6 ≈ 0.167 < et → expand;
		// EM = (mt − T)·M = 0.6·6 − 1 = 2.6 → ⌊2.6/1⌋ = 2 replicas:
		// E1 2→3 (EM 1.6), E2 1→2 (EM 0.6), then 0.6 − 1 < 0 ends the walk.
		{name: "expand budget EM=2.6 pays two replicas", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 2).running(2), el("E1", 1, 8).running(2), el("E2", 1, 8).running(1)},
			fig:  [3]int{16, 5, 1}, mode: "expand", em: 2.6,
			resize: map[string]int{"E1": 3, "E2": 2}, wake: period},
		// A = 16; used = R 4 + E1 2 + E2 2 = 8; EU = 0; a = 8; M = 4; T = 0;
		// EM = 0.6·4 = 2.4, r1 = 2 → ⌊2.4/2⌋ = 1 replica: E1 2→4 (EM 0.4);
		// E2: 0.4 − 2 < 0.
		{name: "expand budget EM=2.4 pays one replica of 2 GPUs", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4), el("E1", 2, 8).replica(2).running(2), el("E2", 2, 8).replica(2).running(2)},
			fig:  [3]int{16, 8, 0}, mode: "expand", em: 2.4,
			resize: map[string]int{"E1": 4}, wake: period},
		// p = 1: A = 16; used = R 2 + E 1 = 3; EU = 0; a = 3; M = 13; T = 0;
		// EM = 0.6·13 = 7.8 → ⌊7.8⌋ = 7 replicas, all to E: 1→8.
		{name: "expand budget EM=7.8 pays seven replicas", cfg: scaler.ThresholdConfig{Proportion: 1, Expand: 0.3, Shrink: 0.9, Period: period},
			nodes: two8, jobs: []*jb{rg("R", 2).running(2), el("E", 1, 16).running(1)},
			fig: [3]int{16, 3, 0}, mode: "expand", em: 7.8,
			resize: map[string]int{"E": 8}, wake: period},
		// A = 16; used = R 1 + five jobs at 1 = 6; EU = 0; a = 6; M = 5;
		// T = 0; EM = 0.6·5 = 3 → 3 replicas. Order: P (priority 1) first;
		// then, at priority 0, the fewest expansions (N, Y, X have 1, Z 2)
		// and among those the earliest last expansion: N (never, -1), Y
		// (30 s), X (60 s). P, N, Y get one replica each (EM 3→0); X and Z
		// none. Arrival (Z, X, Y, N, P) is the reverse of the order.
		{name: "expand order priority expansions last expansion", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 1).running(1),
				el("Z", 1, 8).expanded(2, 10*model.Second).running(1),
				el("X", 1, 8).expanded(1, 60*model.Second).running(1),
				el("Y", 1, 8).expanded(1, 30*model.Second).running(1),
				el("N", 1, 8).expanded(1, -1).running(1),
				el("P", 1, 8).prio(1).expanded(5, 90*model.Second).running(1)},
			fig: [3]int{16, 6, 0}, mode: "expand", em: 3,
			resize: map[string]int{"P": 2, "N": 2, "Y": 2}, wake: period},
		// A = 16; used = R 4 + E1 1 + E2 1 = 6; EU = 0; a = 6; M = 5; T = 0;
		// EM = 3. Order E2 (priority 1), E1. Pass 1: E2 1→2 (EM 2), E1 1→2
		// (EM 1); pass 2: E2 2→3 (EM 0), E1 0 − 1 < 0 leaves; pass 3: E2
		// leaves. Round robin: the first gets 2 replicas, the second 1.
		{name: "expand round robin budget 3 over two candidates", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4), el("E1", 1, 4).running(1), el("E2", 1, 4).prio(1).running(1)},
			fig:  [3]int{16, 6, 0}, mode: "expand", em: 3,
			resize: map[string]int{"E2": 3, "E1": 2}, wake: period},
		// Same figures: R 1 + A 4 (min 4) + B 1 = 6 used; EU = 0; a = 6;
		// M = 5; EM = 3. A (priority 1) has replicas of 4 GPUs: 3 − 4 < 0, A
		// leaves the walk; B's replicas of 1 still fit: B 1→2→3→4 (EM 0).
		{name: "expand a replica the budget cannot pay leaves, smaller ones go on", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 1).running(1), el("A", 4, 8).replica(4).prio(1).running(4), el("B", 1, 8).running(1)},
			fig:  [3]int{16, 6, 0}, mode: "expand", em: 3,
			resize: map[string]int{"B": 4}, wake: period},
		// Same figures (EM = 3) but max 2: E1 1→2 (EM 2), E2 1→2 (EM 1);
		// both at their max, so the walk ends with EM = 1 unspent and 8 GPUs
		// idle.
		{name: "expand ends with every candidate at max", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4), el("E1", 1, 2).running(1), el("E2", 1, 2).running(1)},
			fig:  [3]int{16, 6, 0}, mode: "expand", em: 3,
			resize: map[string]int{"E1": 2, "E2": 2}, wake: period},
		// A = 16; used = R 9 + E 2 = 11; EU = 0; a = 11; M = 5·0.5 = 2.5;
		// T = 0; EM = 0.6·2.5 = 1.5 < r1 = 2: no replica, though 5 GPUs are
		// idle.
		{name: "expand budget EM=1.5 cannot pay a replica of 2 GPUs", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 9).running(9), el("E", 2, 8).replica(2).running(2)},
			fig:  [3]int{16, 11, 0}, mode: "expand", em: 1.5, wake: -1}, // idle: nothing changed
		// Types a (n0) and b (n1). A = 16; used = Rb 7 + Eb 1 + Ea 1 = 9;
		// EU = 0; a = 9; M = 3.5; T = 0; EM = 0.6·3.5 = 2.1 → 2 replicas.
		// Order Eb (priority 1), Ea. Eb has no free GPU of type b and leaves
		// the walk without spending budget; Ea 1→2 (EM 1.1) → 3 (EM 0.1).
		{name: "expand skips a candidate with no free GPU of its type", cfg: testCfg,
			nodes: []nd{{"a", 8}, {"b", 8}},
			jobs:  []*jb{rg("Rb", 7).running(7, 1), el("Eb", 1, 8).prio(1).running(1, 1), el("Ea", 1, 8).running(1, 0)},
			fig:   [3]int{16, 9, 0}, mode: "expand", em: 2.1,
			resize: map[string]int{"Ea": 3}, wake: period},
		// W waits and starts at its minimum 2 (engine.tryPlace with a
		// scaler). A = 16; used = 2; EU = 0; a = 2; M = 7; T = 0;
		// EM = 0.6·7 = 4.2 → 4 replicas: W 2→6 in its Start allocation, no
		// Resize entry.
		{name: "expand grows a job the round starts", cfg: testCfg, nodes: two8,
			jobs: []*jb{el("W", 2, 8).requests(4)},
			fig:  [3]int{16, 2, 0}, mode: "expand", em: 4.2,
			start: map[string]int{"W": 6}, wake: period},
		// A = 16; used = R 4 + L 3 + H 9 = 16; EU = 2 + 8 = 10; a = 6; M = 5;
		// T = 2 > st → shrink; EM = (T − mt)·M = 10 − 3 = 7 → 7 replicas.
		// Order L (priority 0), H (priority 1). Pass 1: L 3→2, H 9→8 (EM 5);
		// pass 2: L 2→1, H 8→7 (EM 3); pass 3: L is at its min and leaves,
		// H 7→6; then H 6→5, 5→4 (EM 0). L gave 2, H 5. A shrink asks for a
		// follow-up round at once: Wake = now = 0.
		{name: "shrink lower priority first never below min", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4), el("L", 1, 16).running(3), el("H", 1, 16).prio(1).running(9)},
			fig:  [3]int{16, 16, 10}, mode: "shrink", em: 7,
			resize: map[string]int{"L": 1, "H": 4}, wake: 0},
		// A = 16; used = R 4 + A 3 + B 2 + C 3 + D 2 = 14; EU = 2+1+2+1 = 6;
		// a = 8; M = 4; T = 1.5 > st; EM = 6 − 0.6·4 = 3.6 → 3 replicas.
		// Order: fewest past shrinks (D 0; B, C 1; A 2), then the earliest
		// last shrink (C 30 s before B 60 s): D 2→1, C 3→2, B 2→1 (EM 0.6);
		// A: 0.6 − 1 < 0. Arrival (A, B, C, D) is the reverse of the order.
		{name: "shrink order past shrinks then last shrink", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4),
				el("A", 1, 8).shrunk(2, 10*model.Second).running(3),
				el("B", 1, 8).shrunk(1, 60*model.Second).running(2),
				el("C", 1, 8).shrunk(1, 30*model.Second).running(3),
				el("D", 1, 8).running(2)},
			fig: [3]int{16, 14, 6}, mode: "shrink", em: 3.6,
			resize: map[string]int{"D": 1, "C": 2, "B": 1}, wake: 0},
		// A = 16; used = R 4 + E 12 = 16; EU = 10; a = 6; M = 5; T = 2;
		// EM = 10 − 3 = 7, r1 = 2 → ⌊7/2⌋ = 3 replicas: E 12→6 (EM 1).
		{name: "shrink replicas of 2 GPUs", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4), el("E", 2, 12).replica(2).running(12)},
			fig:  [3]int{16, 16, 10}, mode: "shrink", em: 7,
			resize: map[string]int{"E": 6}, wake: 0},
		// A = 16; used = R 4 + E1 4 + E2 1 = 9; EU = 3; a = 6; M = 5;
		// T = 0.6, et <= T <= st → maintain.
		{name: "maintain inside the band", cfg: testCfg, nodes: two8,
			jobs: []*jb{rg("R", 4).running(4), el("E1", 1, 8).running(4), el("E2", 1, 8).running(1)},
			fig:  [3]int{16, 9, 3}, mode: "maintain", wake: -1}, // idle
		// band (p = 1, et = 0.25, st = 0.75, mt = 0.5): A = 16; R 7 + E min 1
		// → a = 8, M = 8. E at 3: used 10, EU 2, T = 0.25 = et → maintain.
		{name: "maintain at T = et", cfg: band, nodes: two8,
			jobs: []*jb{rg("R", 7).running(7), el("E", 1, 16).running(3)},
			fig:  [3]int{16, 10, 2}, mode: "maintain", wake: -1}, // idle
		// E at 7: used 14, EU 6, T = 0.75 = st → maintain.
		{name: "maintain at T = st", cfg: band, nodes: two8,
			jobs: []*jb{rg("R", 7).running(7), el("E", 1, 16).running(7)},
			fig:  [3]int{16, 14, 6}, mode: "maintain", wake: -1}, // idle
		// E at 8: used 15, EU 7, T = 0.875 > st → shrink, EM = 7 − 0.5·8 = 3:
		// E 8→5.
		{name: "shrink just above st", cfg: band, nodes: two8,
			jobs: []*jb{rg("R", 7).running(7), el("E", 1, 16).running(8)},
			fig:  [3]int{16, 15, 7}, mode: "shrink", em: 3,
			resize: map[string]int{"E": 5}, wake: 0},
		// E at 2: used 9, EU 1, T = 0.125 < et → expand, EM = 0.5·8 − 1 = 3:
		// E 2→5.
		{name: "expand just below et", cfg: band, nodes: two8,
			jobs: []*jb{rg("R", 7).running(7), el("E", 1, 16).running(2)},
			fig:  [3]int{16, 9, 1}, mode: "expand", em: 3,
			resize: map[string]int{"E": 5}, wake: period},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.cfg.Plan(tc.fig[0], tc.fig[1], tc.fig[2])
			if p.Mode != tc.mode || math.Abs(p.EM-tc.em) > 1e-9 {
				t.Errorf("Plan%v = %s EM %g, want %s EM %g (the comment's figures)", tc.fig, p.Mode, p.EM, tc.mode, tc.em)
			}
			w := newWorld(t, tc.nodes, tc.jobs...)
			e := newEngine(t, newThreshold(t, tc.cfg))
			free := w.s.FreeGPUs()
			plan := e.Schedule(w.s, 0)
			if got := sizes(plan.Resize); !sameSizes(got, tc.resize) {
				t.Errorf("resize %v, want %v", got, tc.resize)
			}
			if got := sizes(plan.Start); !sameSizes(got, tc.start) {
				t.Errorf("start %v, want %v", got, tc.start)
			}
			if plan.Wake != tc.wake {
				t.Errorf("wake %v, want %v", plan.Wake, tc.wake)
			}
			checkPlan(t, w.s, plan)
			if w.s.FreeGPUs() != free {
				t.Error("Schedule changed the state")
			}
			// The figures in the comment describe this state.
			if a, u := w.s.Cluster.TotalGPUs(), usedAfter(w.s, plan)-growth(plan); a != tc.fig[0] || u != tc.fig[1] {
				t.Errorf("state has A = %d, used = %d before scaling; the comment says %d, %d", a, u, tc.fig[0], tc.fig[1])
			}
		})
	}
}

// growth is the net number of GPUs the scaler added in a plan (resizes, and
// starts beyond the started jobs' minimums).
func growth(p engine.Plan) int {
	g := 0
	for _, a := range p.Resize {
		g += len(a.GPUs) - len(a.Job.Alloc)
	}
	for _, a := range p.Start {
		g += len(a.GPUs) - a.Job.Spec.MinGPUs
	}
	return g
}

// TestThresholdPeriod: a pass at now = 0, none before the period has
// elapsed, the next one at now = Period; Plan.Wake is the next due time.
func TestThresholdPeriod(t *testing.T) {
	period := testCfg.Period
	// The first scenario above: EM = 2.6 → E1 3, E2 2.
	w := newWorld(t, two8, rg("R", 2).running(2), el("E1", 1, 8).running(2), el("E2", 1, 8).running(1))
	e := newEngine(t, newThreshold(t, testCfg))
	want := map[string]int{"E1": 3, "E2": 2}
	for _, step := range []struct {
		now    model.Time
		resize map[string]int
		wake   model.Time
	}{
		{0, want, period},
		{1, nil, period},
		{period - 1, nil, period},
		{period, want, 2 * period},
		{period + period/2, nil, 2 * period},
		// A late round acts at once and counts the period from there.
		{3 * period, want, 4 * period},
	} {
		plan := e.Schedule(w.s, step.now)
		if got := sizes(plan.Resize); !sameSizes(got, step.resize) {
			t.Errorf("now %v: resize %v, want %v", step.now, got, step.resize)
		}
		if plan.Wake != step.wake {
			t.Errorf("now %v: wake %v, want %v", step.now, plan.Wake, step.wake)
		}
	}
}

// TestThresholdIdle: a pass that changes nothing makes the scaler idle:
// Plan.Wake is -1 (no round needed for it) until a round changes the state.
// A round between period boundaries then asks for the next boundary of the
// original grid (0, P, 2P, …) and passes there; a round that falls on a
// boundary passes at once — as if every idle period had been woken for.
func TestThresholdIdle(t *testing.T) {
	period := testCfg.Period
	// "maintain inside the band": T = 0.6, nothing to do.
	w := newWorld(t, two8, rg("R", 4).running(4), el("E1", 1, 8).running(4), el("E2", 1, 8).running(1))
	e := newEngine(t, newThreshold(t, testCfg))
	for _, step := range []struct {
		now  model.Time
		wake model.Time
	}{
		{0, -1},                           // pass: maintain → idle
		{7*period + period/3, 8 * period}, // a round off the grid: no pass, next boundary
		{8 * period, -1},                  // the pass on the boundary: idle again
		{11 * period, -1},                 // a round on a boundary passes at once
	} {
		if plan := e.Schedule(w.s, step.now); plan.Wake != step.wake || len(plan.Resize) != 0 {
			t.Errorf("now %v: wake %v, resize %v; want %v and none", step.now, plan.Wake, sizes(plan.Resize), step.wake)
		}
	}
	// A pass that changes something is not idle: the next period is woken
	// for (the first scenario above: EM = 2.6 → E1 3, E2 2).
	w2 := newWorld(t, two8, rg("R", 2).running(2), el("E1", 1, 8).running(2), el("E2", 1, 8).running(1))
	e2 := newEngine(t, newThreshold(t, testCfg))
	if plan := e2.Schedule(w2.s, 0); plan.Wake != period || len(plan.Resize) != 2 {
		t.Errorf("an expanding pass: wake %v, resize %v; want %v and two", plan.Wake, sizes(plan.Resize), period)
	}
}

// TestThresholdShrinkFollowUp: after a shrink Plan.Wake == now, so that
// waiting jobs can use the freed GPUs at once; that follow-up round does
// not pass again (the period is not due) and wakes at the next period.
func TestThresholdShrinkFollowUp(t *testing.T) {
	period := testCfg.Period
	// The "shrink lower priority first" scenario: L 3→1, H 9→4.
	w := newWorld(t, two8, rg("R", 4).running(4), el("L", 1, 16).running(3), el("H", 1, 16).prio(1).running(9))
	e := newEngine(t, newThreshold(t, testCfg))
	now := 7 * model.Minute
	plan := e.Schedule(w.s, now)
	if got, want := sizes(plan.Resize), map[string]int{"L": 1, "H": 4}; !sameSizes(got, want) {
		t.Fatalf("resize %v, want %v", got, want)
	}
	if plan.Wake != now {
		t.Errorf("wake after a shrink %v, want now = %v", plan.Wake, now)
	}
	plan = e.Schedule(w.s, now)
	if len(plan.Resize) != 0 || plan.Wake != now+period {
		t.Errorf("follow-up round: resize %v wake %v, want none and %v", sizes(plan.Resize), plan.Wake, now+period)
	}
	plan = e.Schedule(w.s, now+period)
	if got := sizes(plan.Resize); len(got) != 2 || plan.Wake != now+period {
		t.Errorf("next period: resize %v wake %v, want the shrink again and wake %v", got, plan.Wake, now+period)
	}
}

// TestThresholdPlan checks ThresholdConfig.Plan(total, used, eu) against
// hand-computed figures: a = used − eu, M = (A − a)·p, T = EU/M (0 when
// EU = M = 0, +Inf when only M = 0), mt = (et + st)/2, EM = (mt − T)·M to
// expand and (T − mt)·M to shrink.
func TestThresholdPlan(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name          string
		cfg           scaler.ThresholdConfig
		total, used   int
		eu            int
		m, mt, tt, em float64
		mode          scaler.Mode
	}{
		// a = 4, M = 12·0.5 = 6, T = 1/6, EM = 3.6 − 1 = 2.6.
		{"expand", testCfg, 16, 5, 1, 6, 0.6, 1.0 / 6, 2.6, "expand"},
		// a = 6, M = 5, T = 2, EM = 10 − 3 = 7.
		{"shrink", testCfg, 16, 16, 10, 5, 0.6, 2, 7, "shrink"},
		// a = 6, M = 5, T = 0.6.
		{"maintain", testCfg, 16, 9, 3, 5, 0.6, 0.6, 0, "maintain"},
		// Seed example p = 0.3: a = 60, M = 40·0.3 = 12, T = 0, EM = 7.2.
		{"seed example config", scaler.SeedThresholdConfig(), 100, 60, 0, 12, 0.6, 0, 7.2, "expand"},
		// Default p = 1, et = 0.8, st = 1: a = 60, M = 40, mt = 0.9, EU = 30
		// → T = 0.75 < 0.8, EM = (0.9 − 0.75)·40 = 6.
		{"default config", scaler.DefaultThresholdConfig(), 100, 90, 30, 40, 0.9, 0.75, 6, "expand"},
		// Guaranteed work fills the cluster: a = 16, M = 0 and EU = 0 → T = 0
		// < et → expand with EM = 0.6·0 − 0 = 0 (nothing to give).
		{"M = 0 and EU = 0", testCfg, 16, 16, 0, 0, 0.6, 0, 0, "expand"},
		// a = 8 = A, M = 0 with a surplus (only possible with inconsistent
		// input, used > A): T = +Inf → shrink all of it, EM = EU − 0 = 2.
		{"M = 0 and EU > 0", testCfg, 8, 10, 2, 0, 0.6, inf, 2, "shrink"},
		// et = 0: T = 0 is not below et → maintain; nothing ever expands.
		{"et = 0 never expands", scaler.ThresholdConfig{Proportion: 0.5, Expand: 0, Shrink: 0.9, Period: 1}, 16, 4, 0, 6, 0.45, 0, 0, "maintain"},
		// band: a = 8, M = 8, mt = 0.5.
		{"T = et", band, 16, 10, 2, 8, 0.5, 0.25, 0, "maintain"},
		{"T = st", band, 16, 14, 6, 8, 0.5, 0.75, 0, "maintain"},
		{"T > st", band, 16, 15, 7, 8, 0.5, 0.875, 3, "shrink"},
		{"T < et", band, 16, 9, 1, 8, 0.5, 0.125, 3, "expand"},
	}
	near := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-9 }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.cfg.Plan(tc.total, tc.used, tc.eu)
			if p.A != tc.total || p.Used != tc.used || p.EU != tc.eu {
				t.Errorf("A, used, EU = %d, %d, %d, want %d, %d, %d", p.A, p.Used, p.EU, tc.total, tc.used, tc.eu)
			}
			if !near(p.M, tc.m) || !near(p.MT, tc.mt) || !near(p.T, tc.tt) || !near(p.EM, tc.em) || p.Mode != tc.mode {
				t.Errorf("got M %g mt %g T %g EM %g %s, want M %g mt %g T %g EM %g %s",
					p.M, p.MT, p.T, p.EM, p.Mode, tc.m, tc.mt, tc.tt, tc.em, tc.mode)
			}
		})
	}
}

func TestThresholdValidate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		cfg  scaler.ThresholdConfig
		err  string // "" = valid; otherwise a substring of the error
	}{
		{"seed example", scaler.SeedThresholdConfig(), ""},
		{"default", scaler.DefaultThresholdConfig(), ""},
		{"p = 1, et = st = 0", scaler.ThresholdConfig{Proportion: 1, Period: 1}, ""},
		{"et = st", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.5, Shrink: 0.5, Period: 1}, ""},
		{"st above 1", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.5, Shrink: 3, Period: 1}, ""},
		{"p = 0", scaler.ThresholdConfig{Proportion: 0, Expand: 0.3, Shrink: 0.9, Period: 1}, "elasticProportion"},
		{"p < 0", scaler.ThresholdConfig{Proportion: -0.1, Expand: 0.3, Shrink: 0.9, Period: 1}, "elasticProportion"},
		{"p > 1", scaler.ThresholdConfig{Proportion: 1.5, Expand: 0.3, Shrink: 0.9, Period: 1}, "elasticProportion"},
		{"p NaN", scaler.ThresholdConfig{Proportion: nan, Expand: 0.3, Shrink: 0.9, Period: 1}, "elasticProportion"},
		{"et < 0", scaler.ThresholdConfig{Proportion: 0.3, Expand: -0.1, Shrink: 0.9, Period: 1}, "expandThreshold"},
		{"et > st", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.95, Shrink: 0.9, Period: 1}, "expandThreshold"},
		{"et NaN", scaler.ThresholdConfig{Proportion: 0.3, Expand: nan, Shrink: 0.9, Period: 1}, "expandThreshold"},
		{"st NaN", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.3, Shrink: nan, Period: 1}, "expandThreshold"},
		{"st +Inf", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.3, Shrink: math.Inf(1), Period: 1}, "expandThreshold"},
		{"period 0", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.3, Shrink: 0.9}, "hpaCheckMinutes"},
		{"period < 0", scaler.ThresholdConfig{Proportion: 0.3, Expand: 0.3, Shrink: 0.9, Period: -model.Minute}, "hpaCheckMinutes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			th, nerr := scaler.NewThreshold(tc.cfg)
			if tc.err == "" {
				if err != nil || nerr != nil || th == nil {
					t.Fatalf("Validate %v, NewThreshold %v; want valid", err, nerr)
				}
				if th.Name() != "threshold" {
					t.Errorf("name %q", th.Name())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Validate = %v, want an error about %s", err, tc.err)
			}
			if nerr == nil || th != nil || !strings.HasPrefix(nerr.Error(), "threshold scaler: ") {
				t.Errorf("NewThreshold = %v, %v; want nil and a \"threshold scaler: \" error", th, nerr)
			}
		})
	}
}

// TestThresholdStartsAtMinBetweenPeriods: a job that starts between two
// passes starts at its minimum and waits for the next pass to grow.
func TestThresholdStartsAtMinBetweenPeriods(t *testing.T) {
	period := testCfg.Period
	w := newWorld(t, two8, rg("R", 2).running(2), el("E", 1, 8).running(1))
	e := newEngine(t, newThreshold(t, testCfg))
	// now = 0: A = 16; used = 3; EU = 0; a = 3; M = 6.5; T = 0;
	// EM = 0.6·6.5 = 3.9 → E 1→4.
	if got, want := sizes(e.Schedule(w.s, 0).Resize), map[string]int{"E": 4}; !sameSizes(got, want) {
		t.Fatalf("first pass: resize %v, want %v", got, want)
	}
	w.add(t, el("W", 2, 8)) // (the plan was not applied: E is still at 1)
	// now = 1 min: no pass; W starts at its minimum 2.
	plan := e.Schedule(w.s, model.Minute)
	if got := sizes(plan.Start); !sameSizes(got, map[string]int{"W": 2}) || len(plan.Resize) != 0 || plan.Wake != period {
		t.Errorf("between passes: start %v resize %v wake %v; want W 2, none, %v", got, sizes(plan.Resize), plan.Wake, period)
	}
	// now = Period: W starts at 2 and the pass runs: used = 2 + 1 + 2 = 5;
	// EU = 0; a = 5; M = 5.5; EM = 0.6·5.5 = 3.3 → 3 replicas. Order by
	// arrival (all else equal): E 1→2, W 2→3, E 2→3 (EM 0.3).
	plan = e.Schedule(w.s, period)
	if got := sizes(plan.Start); !sameSizes(got, map[string]int{"W": 3}) {
		t.Errorf("at the next pass: start %v, want W 3", got)
	}
	if got := sizes(plan.Resize); !sameSizes(got, map[string]int{"E": 3}) {
		t.Errorf("at the next pass: resize %v, want E 3", got)
	}
	checkPlan(t, w.s, plan)
}

// TestThresholdExactBudget: a budget that is a whole number of replicas in
// exact arithmetic pays for exactly that many (seed 000 steps 3 and 4: give
// or take one replica while EM − r1 >= 0).
//
// (et + st)/2·M is not exact in binary: with et = 0.1, st = 0.7, M = 5 the
// budget 0.4·5 = 2 computes as 1.9999999999999998, and with et = 0.4,
// st = 0.8 the shrink budget 5 − 0.6·5 = 2 as 1.9999999999999996; the walk
// allows for that rounding.
func TestThresholdExactBudget(t *testing.T) {
	tests := []struct {
		name   string
		cfg    scaler.ThresholdConfig
		jobs   []*jb
		fig    [3]int // A, used, EU
		resize map[string]int
	}{
		// et = 0.1, st = 0.7, mt = 0.4, p = 0.5. A = 16; used = R 5 + E 1
		// = 6; EU = 0; a = 6; M = 5; T = 0 < et; EM = 0.4·5 = 2 → 2
		// replicas: E 1→3.
		{"expand EM = 2", scaler.ThresholdConfig{Proportion: 0.5, Expand: 0.1, Shrink: 0.7, Period: model.Minute},
			[]*jb{rg("R", 5).running(5), el("E", 1, 8).running(1)}, [3]int{16, 6, 0}, map[string]int{"E": 3}},
		// et = 0.4, st = 0.8, mt = 0.6, p = 0.5. A = 16; used = R 5 + E 6
		// = 11; EU = 5; a = 6; M = 5; T = 1 > st; EM = 5 − 0.6·5 = 2 → 2
		// replicas: E 6→4.
		{"shrink EM = 2", scaler.ThresholdConfig{Proportion: 0.5, Expand: 0.4, Shrink: 0.8, Period: model.Minute},
			[]*jb{rg("R", 5).running(5), el("E", 1, 8).running(6)}, [3]int{16, 11, 5}, map[string]int{"E": 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, two8, tc.jobs...)
			e := newEngine(t, newThreshold(t, tc.cfg))
			plan := e.Schedule(w.s, 0)
			if got := sizes(plan.Resize); !sameSizes(got, tc.resize) {
				p := tc.cfg.Plan(tc.fig[0], tc.fig[1], tc.fig[2])
				t.Errorf("resize %v, want %v (EM computes as %.17g)", got, tc.resize, p.EM)
			}
		})
	}
}

// TestThresholdCountWaiting is issue 16's scenario on 6 GPUs with p = 1,
// et = 0.5, st = 1.5 (mt = 1). E (min 2, max 6) runs on all 6; W (min 2)
// waits. Without CountWaiting: a = 6 − 4 = 2, M = 4, T = 1 → maintain, W
// waits for ever. With it: a = 2 + 2 (W's minimum) = 4, M = 2, EU = 4,
// T = 2 > st → shrink, EM = (T − mt)·M = 2 → E 6→4, and W fits next round.
// Once W runs (a = 4, EU = 2, M = 2, T = 1) the pass maintains.
func TestThresholdCountWaiting(t *testing.T) {
	cfg := scaler.ThresholdConfig{Proportion: 1, Expand: 0.5, Shrink: 1.5, Period: 5 * model.Minute}
	six := []nd{{"a", 2}, {"a", 2}, {"a", 2}}
	for _, count := range []bool{false, true} {
		cfg.CountWaiting = count
		w := newWorld(t, six, el("E", 2, 6).running(6), el("W", 2, 2))
		plan := newEngine(t, newThreshold(t, cfg)).Schedule(w.s, 0)
		want := map[string]int{}
		if count {
			want["E"] = 4
		}
		if got := sizes(plan.Resize); !sameSizes(got, want) {
			t.Errorf("CountWaiting %v: resize %v, want %v", count, got, want)
		}
		checkPlan(t, w.s, plan)
	}
	cfg.CountWaiting = true
	w := newWorld(t, six, el("E", 2, 6).running(4), el("W", 2, 2).running(2))
	if plan := newEngine(t, newThreshold(t, cfg)).Schedule(w.s, 0); len(plan.Resize) != 0 {
		t.Errorf("with W running: resize %v, want none (maintain)", sizes(plan.Resize))
	}
}

// TestThresholdDefaultLendsIdle: the defaults (p = 1, et = 0.8, st = 1)
// lend the whole idle capacity where the seed's example lends 18 % of it.
// Elastic job E (1 to 8 GPUs) runs alone on 1 GPU of two 8-GPU nodes:
// A = 16, used = 1, EU = 0, a = 1, T = 0.
//   - defaults: M = 15, mt = 0.9, EM = 13.5 → E 1→8 (its maximum; 7 replicas);
//   - seed's example: M = 15·0.3 = 4.5, mt = 0.6, EM = 2.7 → E 1→3.
func TestThresholdDefaultLendsIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  scaler.ThresholdConfig
		want int
	}{{"defaults", scaler.DefaultThresholdConfig(), 8}, {"seed's example", scaler.SeedThresholdConfig(), 3}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, two8, el("E", 1, 8).running(1))
			plan := newEngine(t, newThreshold(t, tc.cfg)).Schedule(w.s, 0)
			if got, want := sizes(plan.Resize), map[string]int{"E": tc.want}; !sameSizes(got, want) {
				t.Errorf("resize %v, want %v", got, want)
			}
			checkPlan(t, w.s, plan)
		})
	}
}
