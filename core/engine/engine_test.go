package engine_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
)

// unit runs every job at 1 unit/s per GPU on type "a" and half that on
// type "slow".
type unit struct{}

func (unit) Speed(_ *model.Job, t, n int) float64 {
	if t == 1 {
		return float64(n) / 2
	}
	return float64(n)
}

// fixture is a two-node cluster (4 GPUs each, type "a") plus a one-GPU node
// of type "slow", with jobs submitted in order.
type fixture struct {
	s    *model.State
	jobs map[string]*model.Job
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 16384, TFLOPS: 1}, {Name: "slow", MemMiB: 16384, TFLOPS: 1}}
	c, err := model.NewCluster(types, []model.Node{{Name: "n0", GPUs: 4}, {Name: "n1", GPUs: 4}, {Name: "s0", Type: 1, GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: model.NewState(c, unit{}), jobs: map[string]*model.Job{}}
}

// add submits a job of gpus GPUs (at least minG) with work units of work;
// run, when given, starts it on those GPUs: 0-3 on n0, 4-7 on n1.
func (f *fixture) add(t *testing.T, id string, gpus, minG int, work float64, run ...int) {
	t.Helper()
	j := model.NewJob(model.JobSpec{ID: id, GPUs: gpus, MinGPUs: minG, MaxGPUs: gpus}, len(f.jobs), -1, work)
	f.jobs[id] = j
	f.s.Submit(j)
	if len(run) > 0 {
		var alloc []model.GPU
		for _, i := range run {
			alloc = append(alloc, model.GPU{Node: int32(i / 4), Index: int32(i % 4)})
		}
		if err := f.s.Start(j, alloc); err != nil {
			t.Fatal(err)
		}
		j.Rate = float64(len(alloc))
	}
}

func trace(p engine.Plan) []string {
	var out []string
	for _, d := range p.Trace {
		out = append(out, d.Job+":"+d.Status.String())
	}
	return out
}

func TestSchedule(t *testing.T) {
	type job struct {
		id         string
		gpus, minG int
		work       float64
		run        []int
	}
	tests := []struct {
		name    string
		policy  engine.QueuePolicy
		jobs    []job
		trace   []string
		started map[string]int // job -> GPUs
		preempt []string
	}{
		{"strict fifo stops at the first blocked job", policy.FIFO{},
			[]job{{"big", 9, 9, 1, nil}, {"small", 1, 1, 1, nil}},
			[]string{"big:unschedulable", "small:placed"}, map[string]int{"small": 1}, nil},
		{"strict fifo: a job that fits later blocks the queue", policy.FIFO{},
			[]job{{"r", 6, 6, 1, []int{0, 1, 2, 3}}, {"wide", 5, 5, 1, nil}, {"one", 1, 1, 1, nil}},
			[]string{"wide:blocked"}, map[string]int{}, nil},
		{"backfill goes on past a blocked job", policy.FIFO{Backfill: true},
			[]job{{"r", 4, 4, 1, []int{0, 1, 2, 3}}, {"wide", 5, 5, 1, nil}, {"one", 1, 1, 1, nil}},
			[]string{"wide:blocked", "one:placed"}, map[string]int{"one": 1}, nil},
		{"elastic job falls back to its minimum", policy.FIFO{},
			[]job{{"r", 4, 4, 1, []int{0, 1, 2, 3}}, {"el", 8, 2, 1, nil}},
			[]string{"el:placed"}, map[string]int{"el": 2}, nil},
		{"srtf preempts the longest running job", &policy.SRTF{},
			[]job{{"long", 4, 4, 1000, []int{0, 1, 2, 3}}, {"mid", 4, 4, 10, nil}, {"short", 4, 4, 1, nil}},
			[]string{"short:placed", "mid:placed", "long:preempted"}, map[string]int{"short": 4, "mid": 4}, []string{"long"}},
		// By counts, w takes one "a" GPU and "other" loses its place; pack
		// then puts w on the one-GPU "slow" node (best fit), so nobody needs
		// other's GPUs and its preemption is cancelled.
		{"srtf cancels a preemption whose GPUs nobody took", &policy.SRTF{},
			[]job{{"long", 4, 4, 1000, []int{0, 1, 2, 3}}, {"other", 4, 4, 2000, []int{4, 5, 6, 7}}, {"w", 1, 1, 0.1, nil}},
			[]string{"w:placed"}, map[string]int{"w": 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for _, j := range tc.jobs {
				f.add(t, j.id, j.gpus, j.minG, j.work, j.run...)
			}
			e, err := engine.New(tc.policy, placer.Pack{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			free := f.s.FreeGPUs()
			plan := e.Schedule(f.s, 0)
			if got := trace(plan); !slices.Equal(got, tc.trace) {
				t.Errorf("trace %v, want %v", got, tc.trace)
			}
			got := map[string]int{}
			for _, a := range plan.Start {
				got[a.Job.Spec.ID] = len(a.GPUs)
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
