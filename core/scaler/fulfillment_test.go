package scaler_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/scaler"
)

func newFulfillment(t testing.TB, maxLoad float64) *scaler.Fulfillment {
	t.Helper()
	f, err := scaler.NewFulfillment(maxLoad, true)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// recorder is a fulfillment scaler that records its donors, one entry per
// replica given, in order.
type recorder struct {
	*scaler.Fulfillment
	donors []string
}

func (r *recorder) Donate(s *model.State, now model.Time, rz *engine.Resizer, w *model.Job, ts engine.TypeSet) bool {
	before := map[*model.Job]int{}
	for _, j := range rz.Jobs() {
		before[j] = rz.Size(j)
	}
	ok := r.Fulfillment.Donate(s, now, rz, w, ts)
	for _, j := range rz.Jobs() {
		if n, seen := before[j]; seen && rz.Size(j) < n {
			r.donors = append(r.donors, j.Spec.ID)
		}
	}
	return ok
}

func blocked(p engine.Plan) []string {
	var out []string
	for _, d := range p.Trace {
		if d.Status == engine.Blocked {
			out = append(out, d.Job)
		}
	}
	return out
}

// TestScore is seed 001's fulfillment score (cur − min)/(max − min), and 1
// when min == max.
func TestScore(t *testing.T) {
	for _, tc := range []struct {
		min, max, replica, cur int
		want                   float64
	}{
		{1, 5, 1, 1, 0},
		{1, 5, 1, 2, 0.25},
		{1, 5, 1, 3, 0.5},
		{1, 5, 1, 5, 1},
		{2, 4, 1, 3, 0.5},
		{2, 8, 2, 4, 2.0 / 6},
		{2, 8, 2, 8, 1},
		{3, 3, 1, 3, 1}, // rigid: 1
		{4, 4, 2, 4, 1},
	} {
		spec := model.JobSpec{GPUs: tc.max, MinGPUs: tc.min, MaxGPUs: tc.max, ReplicaGPUs: tc.replica}
		if got := scaler.Score(&spec, tc.cur); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Score(min %d, max %d, cur %d) = %g, want %g", tc.min, tc.max, tc.cur, got, tc.want)
		}
	}
}

func TestNewFulfillment(t *testing.T) {
	for _, load := range []float64{0.5, 0.97, 1, math.SmallestNonzeroFloat64} {
		f, err := scaler.NewFulfillment(load, true)
		if err != nil || f == nil || f.Name() != "fulfillment" {
			t.Errorf("NewFulfillment(%g, true) = %v, %v", load, f, err)
		}
	}
	for _, load := range []float64{0, -0.5, 1.01, math.NaN(), math.Inf(1)} {
		f, err := scaler.NewFulfillment(load, true)
		if err == nil || f != nil || !strings.Contains(err.Error(), "maximum load") {
			t.Errorf("NewFulfillment(%g, true) = %v, %v; want an error", load, f, err)
		}
	}
}

var one8 = []nd{{"a", 8}} // one node of 8 GPUs

// TestFulfillmentScenarios drives seed 001's rule through the engine. s(J)
// is J's score (cur − min)/(max − min); "limit" is ⌊MaxLoad·A⌋. Jobs
// arrive in the order listed; r1 = 1 GPU and no CPU or memory request
// unless a job says otherwise.
func TestFulfillmentScenarios(t *testing.T) {
	tests := []struct {
		name    string
		load    float64
		nodes   []nd
		jobs    []*jb
		resize  map[string]int
		start   map[string]int
		donors  []string // in donation order
		blocked []string
		maxUsed int // when > 0: GPUs in use after the plan, at most
	}{
		// 3 idle GPUs. s(J1) = 0/4 = 0, s(J2) = 1/2 = 0.5.
		// 1: J1 (0) 1→2, s = 0.25. 2: J1 (0.25) 2→3, s = 0.5.
		// 3: tie 0.5 = 0.5, same r1, CPU, memory → earlier arrival J1 3→4.
		{name: "lowest score first, rescored, tie to the earlier arrival J1", load: 1, nodes: one8,
			jobs:   []*jb{el("J1", 1, 5).running(1), el("J2", 2, 4).running(3), rg("R", 1).running(1)},
			resize: map[string]int{"J1": 4}},
		// The same with J2 arriving first: steps 1 and 2 as above, then the
		// tie at 0.5 goes to J2: 3→4 (s = 1).
		{name: "lowest score first, rescored, tie to the earlier arrival J2", load: 1, nodes: one8,
			jobs:   []*jb{el("J2", 2, 4).running(3), el("J1", 1, 5).running(1), rg("R", 1).running(1)},
			resize: map[string]int{"J1": 3, "J2": 4}},
		// One node of 10 GPUs, 4 idle, J1 first; M is at its max (s = 1) and
		// takes nothing. J1 1→2→3, tie at 0.5 → J1 3→4 (0.75), then J2
		// (0.5 < 0.75) 3→4.
		{name: "four idle GPUs", load: 1, nodes: []nd{{"a", 10}},
			jobs:   []*jb{el("J1", 1, 5).running(1), el("J2", 2, 4).running(3), el("M", 1, 2).running(2)},
			resize: map[string]int{"J1": 4, "J2": 4}},
		// 2 idle GPUs; s(A) = s(B) = 0. B's replica is 2 GPUs, A's 1 (A asks
		// for more CPU and memory and arrived first): B first, 2→4; then A
		// finds no free GPU. (By arrival A would take 1 and B none.)
		{name: "tie to the larger replica GPU request", load: 1, nodes: one8,
			jobs: []*jb{el("A", 1, 3).cpu(8000).mem(65536).running(1), el("B", 2, 6).replica(2).cpu(1000).mem(1024).running(2),
				rg("R", 3).running(3)},
			resize: map[string]int{"B": 4}},
		// 1 idle GPU; same r1; B asks for 2000 millicores, A 1000 (A asks for
		// more memory and arrived first): B 1→2.
		{name: "tie to the larger CPU request", load: 1, nodes: one8,
			jobs: []*jb{el("A", 1, 3).cpu(1000).mem(8192).running(1), el("B", 1, 3).cpu(2000).mem(1024).running(1),
				rg("R", 5).running(5)},
			resize: map[string]int{"B": 2}},
		// 1 idle GPU; same r1 and CPU; B asks for more memory: B 1→2.
		{name: "tie to the larger memory request", load: 1, nodes: one8,
			jobs: []*jb{el("A", 1, 3).cpu(1000).mem(1024).running(1), el("B", 1, 3).cpu(1000).mem(2048).running(1),
				rg("R", 5).running(5)},
			resize: map[string]int{"B": 2}},
		// 1 idle GPU; everything equal: the earlier arrival A 1→2.
		{name: "tie to the earlier arrival", load: 1, nodes: one8,
			jobs:   []*jb{el("A", 1, 3).running(1), el("B", 1, 3).running(1), rg("R", 5).running(5)},
			resize: map[string]int{"A": 2}},
		// n0 type a, n1 type b, 4 GPUs each; 1 GPU free, on b. s(Ea) = 3/7
		// ≈ 0.43 is the lowest, but no GPU of type a is free: Ea leaves the
		// heap and Eb (s = 2/3) takes the GPU: 3→4.
		{name: "lowest score without a free GPU of its type is skipped", load: 1, nodes: []nd{{"a", 4}, {"b", 4}},
			jobs:   []*jb{el("Ea", 1, 8).running(4, 0), el("Eb", 1, 4).running(3, 1)},
			resize: map[string]int{"Eb": 4}},
		// limit = ⌊0.75·8⌋ = 6; used = R 1 + E 1 = 2 → E takes 4: 1→5,
		// used 6; 2 GPUs stay idle.
		{name: "max load 0.75 on 8 GPUs", load: 0.75, nodes: one8,
			jobs:   []*jb{rg("R", 1).running(1), el("E", 1, 8).running(1)},
			resize: map[string]int{"E": 5}, maxUsed: 6},
		// limit 6; used = 1 + 2 = 3; r1 = 2: E 2→4 (used 5); one more would
		// make 7 > 6.
		{name: "max load 0.75 with replicas of 2 GPUs", load: 0.75, nodes: one8,
			jobs:   []*jb{rg("R", 1).running(1), el("E", 2, 8).replica(2).running(2)},
			resize: map[string]int{"E": 4}, maxUsed: 6},
		// limit 6; used = 6 + 1 = 7 > 6 already: no growth (and no shrink).
		{name: "max load already exceeded", load: 0.75, nodes: one8,
			jobs:    []*jb{rg("R", 6).running(6), el("E", 1, 4).running(1)},
			maxUsed: 7},
		// Seed example 0.97: limit = ⌊7.76⌋ = 7; used 2 → E 1→6.
		{name: "max load 0.97", load: scaler.DefaultMaxLoad, nodes: one8,
			jobs:   []*jb{rg("R", 1).running(1), el("E", 1, 8).running(1)},
			resize: map[string]int{"E": 6}, maxUsed: 7},
		// limit 8: E 1→7.
		{name: "max load 1", load: 1, nodes: one8,
			jobs:   []*jb{rg("R", 1).running(1), el("E", 1, 8).running(1)},
			resize: map[string]int{"E": 7}, maxUsed: 8},
		// 1 GPU free; W needs 4. s(D1) = 3/3 = 1, s(D2) = 2/4 = 0.5.
		// 1: D1 (1) 4→3, s = 2/3; 2 free. 2: D1 (0.67 > 0.5) 3→2, s = 1/3;
		// 3 free. 3: D2 (0.5 > 0.33) 3→2, s = 0.25; 4 free → W starts.
		{name: "steal from the highest score, rescored after each donation", load: 1, nodes: one8,
			jobs:   []*jb{el("D1", 1, 4).running(4), el("D2", 1, 5).running(3), rg("W", 4)},
			donors: []string{"D1", "D1", "D2"}, resize: map[string]int{"D1": 2, "D2": 2}, start: map[string]int{"W": 4}},
		// Full; W needs 1. s(D1) = s(D2) = 1 → the later arrival D2 gives:
		// 3→2, and W starts.
		{name: "steal tie to the later arrival", load: 1, nodes: one8,
			jobs:   []*jb{el("D1", 1, 3).running(3), el("D2", 1, 3).running(3), rg("R", 2).running(2), rg("W", 1)},
			donors: []string{"D2"}, resize: map[string]int{"D2": 2}, start: map[string]int{"W": 1}},
		// W needs 2: D2 (tie, later) 3→2 (s 0.5), then D1 (1) 3→2.
		{name: "steal tie then the higher score", load: 1, nodes: one8,
			jobs:   []*jb{el("D1", 1, 3).running(3), el("D2", 1, 3).running(3), rg("R", 2).running(2), rg("W", 2)},
			donors: []string{"D2", "D1"}, resize: map[string]int{"D1": 2, "D2": 2}, start: map[string]int{"W": 2}},
		// n0 type a (4), n1 type b (4), both full; W needs 2 GPUs of type a.
		// s(Db) = 3/3 = 1 is the highest, but Db runs on b: it frees nothing
		// W can use. Da (s = 2/3) gives 3→2 (1/3), then 2→1 (0); W starts.
		{name: "steal only from donors of a type the waiting job can use", load: 1, nodes: []nd{{"a", 4}, {"b", 4}},
			jobs: []*jb{rg("Ra", 1).running(1, 0), el("Da", 1, 4).running(3, 0), el("Db", 1, 4).running(4, 1),
				rg("W", 2).gpuType("a")},
			donors: []string{"Da", "Da"}, resize: map[string]int{"Da": 1}, start: map[string]int{"W": 2}},
		// Full; W needs 3; r1(D) = 2: D 8→6 (2 free), 6→4 (4 free) → W
		// starts on 3. The GPU left idle cannot go back to D (a job only
		// grows or shrinks in a round) nor pay a replica of 2.
		{name: "steal replicas of 2 GPUs", load: 1, nodes: one8,
			jobs:   []*jb{el("D", 2, 8).replica(2).running(8), rg("W", 3)},
			donors: []string{"D", "D"}, resize: map[string]int{"D": 4}, start: map[string]int{"W": 3}},
		// An elastic waiting job steals only up to its minimum: full; W
		// (min 2) gets D 8→7 (1 free), 7→6 (2 free) and starts at 2; no GPU
		// is left to grow it.
		{name: "elastic waiting job steals its minimum", load: 1, nodes: one8,
			jobs:   []*jb{el("D", 1, 8).running(8), el("W", 2, 4)},
			donors: []string{"D", "D"}, resize: map[string]int{"D": 6}, start: map[string]int{"W": 2}},
		// 1 GPU free; W needs 2; E1, E2 at their minimums (s = 0): nobody
		// can give, W waits. The idle GPU cannot pay a replica of 2.
		{name: "nobody can give: every elastic job at its minimum", load: 1, nodes: one8,
			jobs: []*jb{el("E1", 2, 4).replica(2).running(2), el("E2", 2, 4).replica(2).running(2), rg("R", 3).running(3),
				rg("W", 2)},
			blocked: []string{"W"}},
		// 1 GPU free; W needs 4; D can give 2 (3→1): 1 + 2 < 4, so no
		// donation helps and none is made; D is at its max (s = 1) and the
		// idle GPU stays idle.
		{name: "all donations would not make it fit", load: 1, nodes: one8,
			jobs:    []*jb{rg("R", 4).running(4), el("D", 1, 3).running(3), rg("W", 4)},
			blocked: []string{"W"}},
		// 8 free; W (min 2, max 6, requests 4) starts at its minimum 2 and
		// is grown in the same round: s = 0 → ... → 6 (max). One Start of 6
		// GPUs, no Resize.
		{name: "started job grows in its Start allocation", load: 1, nodes: one8,
			jobs:  []*jb{el("W", 2, 6).requests(4)},
			start: map[string]int{"W": 6}},
		// E runs at 1 (s 0/3 = 0); W starts at 2 (s 0/4 = 0); 5 idle.
		// 1: tie, same r1 → earlier arrival E 1→2 (1/3). 2: W (0) 2→3
		// (1/4). 3: W (0.25 < 0.33) 3→4 (2/4). 4: E (0.33) 2→3 (2/3).
		// 5: W (0.5) 4→5 (3/4).
		{name: "started and running jobs share the idle GPUs", load: 1, nodes: one8,
			jobs:   []*jb{el("E", 1, 4).running(1), el("W", 2, 6)},
			resize: map[string]int{"E": 3}, start: map[string]int{"W": 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.nodes, tc.jobs...)
			rec := &recorder{Fulfillment: newFulfillment(t, tc.load)}
			e := newEngine(t, rec)
			free := w.s.FreeGPUs()
			plan := e.Schedule(w.s, 0)
			if got := sizes(plan.Resize); !sameSizes(got, tc.resize) {
				t.Errorf("resize %v, want %v", got, tc.resize)
			}
			if got := sizes(plan.Start); !sameSizes(got, tc.start) {
				t.Errorf("start %v, want %v", got, tc.start)
			}
			if !slices.Equal(rec.donors, tc.donors) {
				t.Errorf("donors %v, want %v", rec.donors, tc.donors)
			}
			if got := blocked(plan); !slices.Equal(got, tc.blocked) {
				t.Errorf("blocked %v, want %v", got, tc.blocked)
			}
			if plan.Wake != -1 {
				t.Errorf("wake %v, want -1 (fulfillment is not periodic)", plan.Wake)
			}
			if u := usedAfter(w.s, plan); tc.maxUsed > 0 && u > tc.maxUsed {
				t.Errorf("%d GPUs in use after the plan, want at most %d", u, tc.maxUsed)
			}
			checkPlan(t, w.s, plan)
			if w.s.FreeGPUs() != free {
				t.Error("Schedule changed the state")
			}
			// The round is a function of the state: a second one gives the
			// same plan.
			again := e.Schedule(w.s, 0)
			if !sameSizes(sizes(again.Resize), sizes(plan.Resize)) || !sameSizes(sizes(again.Start), sizes(plan.Start)) {
				t.Errorf("second round: resize %v start %v, first %v %v",
					sizes(again.Resize), sizes(again.Start), sizes(plan.Resize), sizes(plan.Start))
			}
		})
	}
}

// stopPolicy is FIFO with backfill that also asks to stop some running
// jobs (as hlas demotes), without letting any waiting job claim their GPUs.
type stopPolicy struct{ stop []*model.Job }

func (stopPolicy) Name() string { return "fifo-stop" }
func (p stopPolicy) Order(s *model.State, _ model.Time, _ []*model.Job) engine.Order {
	return engine.Order{Jobs: s.Waiting(), Backfill: true, Stop: p.stop}
}

// TestFulfillmentRollback: donations that do not make the waiting job fit
// are undone. S is a stop candidate nobody may claim: it keeps its GPUs but
// its surplus of 3 still counts as a possible donation (Resizer.Surplus is
// an upper bound), so free 1 + surplus (S 3 + D 1) = 5 >= 4 and the engine
// asks for donations. The only usable donor is D (s = 1/1): 2→1, 2 free < 4; then
// nobody can give (G is at its minimum), and D's donation is rolled back.
// Then the scaler gives the 1 idle GPU to the lowest score: G (0) 1→2; had
// the rollback not returned D's GPU to the pool and D to 2, D would be in
// the plan at 1 and G would grow to 3.
func TestFulfillmentRollback(t *testing.T) {
	w := newWorld(t, one8, el("S", 1, 4).running(4), el("D", 1, 2).running(2), el("G", 1, 8).running(1), rg("W", 4))
	rec := &recorder{Fulfillment: newFulfillment(t, 1)}
	e, err := engine.New(stopPolicy{stop: []*model.Job{w.jobs["S"]}}, placer.Pack{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		rec.donors = nil
		plan := e.Schedule(w.s, 0)
		if !slices.Equal(rec.donors, []string{"D"}) {
			t.Errorf("round %d: donors %v, want [D] (then rolled back)", round, rec.donors)
		}
		if got, want := sizes(plan.Resize), map[string]int{"G": 2}; !sameSizes(got, want) {
			t.Errorf("round %d: resize %v, want %v", round, got, want)
		}
		if len(plan.Start) != 0 || len(plan.Preempt) != 0 {
			t.Errorf("round %d: start %v preempt %d, want none (S's stop is cancelled)", round, sizes(plan.Start), len(plan.Preempt))
		}
		if got := blocked(plan); !slices.Equal(got, []string{"W"}) {
			t.Errorf("round %d: blocked %v, want [W]", round, got)
		}
		checkPlan(t, w.s, plan)
	}
}
