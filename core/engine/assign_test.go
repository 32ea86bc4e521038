package engine_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
)

// assignment is a queue policy that returns a fixed order with per-job
// types (what an allocation policy gives the engine).
type assignment struct {
	ids   []string
	types []engine.TypeSet
	jobs  map[string]*model.Job
}

func (assignment) Name() string { return "assignment" }

func (a assignment) Order(*model.State, model.Time, []*model.Job) engine.Order {
	var js []*model.Job
	for _, id := range a.ids {
		js = append(js, a.jobs[id])
	}
	return engine.Order{Jobs: js, Types: a.types, Preemptive: true}
}

const (
	typeA    engine.TypeSet = 1 << 0
	typeSlow engine.TypeSet = 1 << 1
)

func TestScheduleAssigned(t *testing.T) {
	type job struct {
		id   string
		gpus int
		run  []int
	}
	tests := []struct {
		name    string
		jobs    []job
		ids     []string
		types   []engine.TypeSet
		trace   []string
		started map[string]string // job -> first GPU's node
		preempt []string
	}{
		{"a waiting job runs on its type", []job{{"w", 1, nil}}, []string{"w"}, []engine.TypeSet{typeSlow},
			[]string{"w:placed"}, map[string]string{"w": "s0"}, nil},
		{"a running job on its type keeps its GPUs", []job{{"r", 4, []int{0, 1, 2, 3}}}, []string{"r"}, []engine.TypeSet{typeA},
			nil, map[string]string{}, nil},
		// r runs on "a" but its allocation moves it to "slow": it is
		// preempted and started again there in the same plan.
		{"a running job moves to its type", []job{{"r", 1, []int{0}}}, []string{"r"}, []engine.TypeSet{typeSlow},
			[]string{"r:migrated"}, map[string]string{"r": "s0"}, []string{"r"}},
		// big books all 8 "a" GPUs first, so r, later in the order, has no
		// room on its type and stops; big takes r's GPUs.
		{"a job earlier in the order takes a running job's place", []job{{"r", 4, []int{0, 1, 2, 3}}, {"big", 8, nil}},
			[]string{"big", "r"}, []engine.TypeSet{typeA, typeA},
			[]string{"big:placed", "r:preempted"}, map[string]string{"big": "n0"}, []string{"r"}},
		// r is not chosen this round (no types) but nobody needs its GPUs:
		// it keeps running.
		{"an unchosen job whose GPUs nobody takes keeps running", []job{{"r", 4, []int{0, 1, 2, 3}}, {"w", 1, nil}},
			[]string{"w", "r"}, []engine.TypeSet{typeSlow, 0},
			[]string{"w:placed"}, map[string]string{"w": "s0"}, nil},
		{"a job with no types waits", []job{{"w", 1, nil}}, []string{"w"}, []engine.TypeSet{0},
			[]string{"w:blocked"}, map[string]string{}, nil},
		{"a job no type can run is rejected", []job{{"huge", 20, nil}}, []string{"huge"}, []engine.TypeSet{typeA},
			[]string{"huge:unschedulable"}, map[string]string{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for _, j := range tc.jobs {
				f.add(t, j.id, j.gpus, j.gpus, 100, j.run...)
			}
			e, err := engine.New(assignment{tc.ids, tc.types, f.jobs}, placer.Pack{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			free := f.s.FreeGPUs()
			plan := e.Schedule(f.s, 0)
			if got := trace(plan); !slices.Equal(got, tc.trace) {
				t.Errorf("trace %v, want %v", got, tc.trace)
			}
			got := map[string]string{}
			for _, a := range plan.Start {
				got[a.Job.Spec.ID] = f.s.Cluster.Nodes[a.GPUs[0].Node].Name
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.started) {
				t.Errorf("started %v, want %v", got, tc.started)
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
