package engine_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
)

// vJob is a job of a victim scenario in the fixture's cluster (n0, n1: 4
// GPUs of type "a" each; s0: one "slow" GPU): run lists its GPUs (0-3 on
// n0, 4-7 on n1) when it is running; start and ckpt are its LastStart and
// Checkpoint in seconds (ckpt -1: none).
type vJob struct {
	id          string
	gpus, minG  int
	work        float64
	run         []int
	start, ckpt float64
}

func running(id string, work float64, run []int, start, ckpt float64) vJob {
	return vJob{id, len(run), len(run), work, run, start, ckpt}
}

func waiting(id string, gpus, minG int, work float64) vJob {
	return vJob{id: id, gpus: gpus, minG: minG, work: work, ckpt: -1}
}

// TestCheckpointVictims pins the victim rule (engine package doc, "Stop
// candidates"): without any checkpoint the candidates are released together
// and the placer's choice of GPUs decides (pack: the lowest-index node that
// fits, n0); with one, the shortest prefix by ascending lost work
// (now - max(checkpoint, last start)), ties by the policy's order, is
// released. The round runs at 1000 s.
func TestCheckpointVictims(t *testing.T) {
	// hlas with a tiny ratio demotes (Order.Stop) every running job below;
	// its Stop order is arrival order: A, then B. W (Q1) may claim.
	hlas := func() engine.QueuePolicy { return &policy.HLAS{PriorityRatio: 0.01, StarveRatio: 1e9} }
	// srtf ranks H, W (short) above A, above B (longest): by GPU counts A
	// and B lose their places; H is held back by the placer, so only W
	// needs GPUs, and one of A and B is enough.
	srtf := func() engine.QueuePolicy { return &policy.SRTF{} }
	tests := []struct {
		name    string
		policy  func() engine.QueuePolicy
		jobs    []vJob
		started map[string][]int // job -> GPUs (0-7 as in run)
		preempt []string
		trace   []string
	}{
		{"stop: no checkpoints, the placer's choice (n0: A)", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, -1), running("B", 1e6, []int{4, 5, 6, 7}, 0, -1), waiting("W", 4, 4, 1)},
			map[string][]int{"W": {0, 1, 2, 3}}, []string{"A"}, []string{"W:placed", "A:preempted"}},
		{"stop: B's newer checkpoint loses less (100 s < 800 s)", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 200), running("B", 1e6, []int{4, 5, 6, 7}, 0, 900), waiting("W", 4, 4, 1)},
			map[string][]int{"W": {4, 5, 6, 7}}, []string{"B"}, []string{"W:placed", "B:preempted"}},
		{"stop: only B has a checkpoint (700 s < A's 1000 s since its start)", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, -1), running("B", 1e6, []int{4, 5, 6, 7}, 0, 300), waiting("W", 4, 4, 1)},
			map[string][]int{"W": {4, 5, 6, 7}}, []string{"B"}, []string{"W:placed", "B:preempted"}},
		{"stop: a recent start counts like a checkpoint (A: 200 s < B: 500 s)", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 800, -1), running("B", 1e6, []int{4, 5, 6, 7}, 0, 500), waiting("W", 4, 4, 1)},
			map[string][]int{"W": {0, 1, 2, 3}}, []string{"A"}, []string{"W:placed", "A:preempted"}},
		{"stop: equal checkpoints, the policy's order (Order.Stop: A first)", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 500), running("B", 1e6, []int{4, 5, 6, 7}, 0, 500), waiting("W", 4, 4, 1)},
			map[string][]int{"W": {0, 1, 2, 3}}, []string{"A"}, []string{"W:placed", "A:preempted"}},
		{"stop: W needs both, stopped in lost-work order", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 200), running("B", 1e6, []int{4, 5, 6, 7}, 0, 900), waiting("W", 5, 5, 1)},
			map[string][]int{"W": {0, 1, 2, 3, 4}}, []string{"B", "A"}, []string{"W:placed", "B:preempted", "A:preempted"}},
		{"stop: an elastic job's requested size comes first, even if it needs both", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 200), running("B", 1e6, []int{4, 5, 6, 7}, 0, 900), waiting("W", 8, 4, 1)},
			map[string][]int{"W": {0, 1, 2, 3, 4, 5, 6, 7}}, []string{"B", "A"}, []string{"W:placed", "B:preempted", "A:preempted"}},
		{"stop: a job that is not placed stops nobody", hlas,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 200), running("B", 1e6, []int{4, 5, 6, 7}, 0, 900), waiting("H", 4, 4, 1)},
			map[string][]int{}, nil, []string{"H:paused"}},
		{"preemptive: no checkpoints, the placer's choice (n0: A)", srtf,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, -1), running("B", 2e6, []int{4, 5, 6, 7}, 0, -1),
				waiting("H", 4, 4, 1), waiting("W", 4, 4, 2)},
			map[string][]int{"W": {0, 1, 2, 3}}, []string{"A"}, []string{"H:paused", "W:placed", "A:preempted"}},
		{"preemptive: A's newer checkpoint loses less", srtf,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 900), running("B", 2e6, []int{4, 5, 6, 7}, 0, 200),
				waiting("H", 4, 4, 1), waiting("W", 4, 4, 2)},
			map[string][]int{"W": {0, 1, 2, 3}}, []string{"A"}, []string{"H:paused", "W:placed", "A:preempted"}},
		{"preemptive: equal checkpoints, the policy's order (B ranks last)", srtf,
			[]vJob{running("A", 1e6, []int{0, 1, 2, 3}, 0, 500), running("B", 2e6, []int{4, 5, 6, 7}, 0, 500),
				waiting("H", 4, 4, 1), waiting("W", 4, 4, 2)},
			map[string][]int{"W": {4, 5, 6, 7}}, []string{"B"}, []string{"H:paused", "W:placed", "B:preempted"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for _, j := range tc.jobs {
				f.add(t, j.id, j.gpus, j.minG, j.work, j.run...)
				mj := f.jobs[j.id]
				mj.LastStart, mj.Checkpoint = model.FromSeconds(j.start), -1
				if j.ckpt >= 0 {
					mj.Checkpoint = model.FromSeconds(j.ckpt)
				}
			}
			e, err := engine.New(tc.policy(), holdBack{"H": true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			free := f.s.FreeGPUs()
			plan := e.Schedule(f.s, 1000*model.Second)
			if got := trace(plan); !slices.Equal(got, tc.trace) {
				t.Errorf("trace %v, want %v", got, tc.trace)
			}
			got := map[string][]int{}
			for _, a := range plan.Start {
				for _, g := range a.GPUs {
					got[a.Job.Spec.ID] = append(got[a.Job.Spec.ID], int(g.Node)*4+int(g.Index))
				}
			}
			if len(got) != len(tc.started) {
				t.Errorf("started %v, want %v", got, tc.started)
			}
			for id, want := range tc.started {
				if !slices.Equal(got[id], want) {
					t.Errorf("%s started on %v, want %v", id, got[id], want)
				}
			}
			var pre []string
			for _, j := range plan.Preempt {
				pre = append(pre, j.Spec.ID)
			}
			if !slices.Equal(pre, tc.preempt) {
				t.Errorf("preempted %v, want %v", pre, tc.preempt)
			}
			if f.s.FreeGPUs() != free {
				t.Error("Schedule changed the state")
			}
		})
	}
}

// stopFor stops the named running jobs (Order.Stop) for every waiting job.
type stopFor []string

func (stopFor) Name() string { return "stop" }

func (p stopFor) Order(s *model.State, _ model.Time, _ []*model.Job) engine.Order {
	ord := engine.Order{Jobs: s.Waiting(), Backfill: true, Claim: len(s.Waiting())}
	for _, j := range s.Running() {
		if slices.Contains(p, j.Spec.ID) {
			ord.Stop = append(ord.Stop, j)
		}
	}
	return ord
}

// donorStub is a Donor scaler that shrinks job from by one GPU at a time.
type donorStub struct{ from string }

func (donorStub) Name() string                                    { return "donor" }
func (donorStub) Scale(*model.State, model.Time, *engine.Resizer) {}
func (d donorStub) Donate(_ *model.State, _ model.Time, r *engine.Resizer, _ *model.Job, _ engine.TypeSet) bool {
	for _, j := range r.Jobs() {
		if j.Spec.ID == d.from {
			return r.Shrink(j, 1)
		}
	}
	return false
}

// TestCheckpointVictimsDonor: W (5 GPUs) fits neither with A's 4 GPUs
// alone nor with what the donor can take from E alone; with a Donor
// scaler the candidates stay released for the donor, so W starts on A's
// GPUs and one of E's, with or without a checkpoint.
func TestCheckpointVictimsDonor(t *testing.T) {
	for _, ckpt := range []model.Time{-1, 500 * model.Second} {
		f := newFixture(t)
		f.add(t, "A", 4, 4, 1e6, 0, 1, 2, 3)
		f.add(t, "E", 4, 1, 1e6, 4, 5, 6, 7)
		f.add(t, "W", 5, 5, 1)
		f.jobs["A"].Checkpoint = ckpt
		e, err := engine.New(stopFor{"A"}, placer.Pack{}, donorStub{"E"})
		if err != nil {
			t.Fatal(err)
		}
		plan := e.Schedule(f.s, 1000*model.Second)
		if len(plan.Preempt) != 1 || plan.Preempt[0].Spec.ID != "A" || len(plan.Start) != 1 || len(plan.Start[0].GPUs) != 5 ||
			len(plan.Resize) != 1 || len(plan.Resize[0].GPUs) != 3 {
			t.Errorf("checkpoint %d: preempt %v, start %v, resize %v; want A stopped, W on 5 GPUs, E on 3", ckpt, plan.Preempt, plan.Start, plan.Resize)
		}
	}
}
