package quota_test

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/quota"
)

// TestResourceLimit: queue a may hold 4 CPUs in all. On one node with 8
// GPUs and 64 CPUs, of a's three 1-GPU jobs asking 2 CPUs each two start
// (4 CPUs), the third waits although GPUs and CPUs are free; b's job,
// without a limit, starts; a's job asking 6 CPUs could never run in a and
// is rejected with the limit named. After one of a's jobs ends, the third
// starts.
func TestResourceLimit(t *testing.T) {
	c, err := model.NewCluster([]model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}},
		[]model.Node{{Name: "n0", GPUs: 8, Capacity: model.Resources{model.ResourceCPU: 64000}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := quota.Config{Queues: []quota.Queue{
		{Name: "a", Weight: 1, ResourceLimit: map[string]int64{model.ResourceCPU: 4000}},
		{Name: "b", Weight: 1},
	}}
	q, err := quota.New(policy.FIFO{Backfill: true}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(q, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speeds{})
	for i, spec := range []struct {
		queue string
		cpu   int64
	}{{"a", 2000}, {"a", 2000}, {"a", 2000}, {"b", 2000}, {"a", 6000}} {
		s.Submit(model.NewJob(model.JobSpec{ID: fmt.Sprint("j", i), Queue: spec.queue, Submit: model.Time(i), GPUs: 1, MinGPUs: 1, MaxGPUs: 1,
			Requests: model.Resources{model.ResourceCPU: spec.cpu}}, i, -1, 1e9))
	}
	got := decide(t, e, s, 0)
	// Queue a's jobs come first (fair share ties go to the first declared).
	want := "j0:placed j1:placed j2:blocked j4:unschedulable(its queue a's cpu limit of 4 is below the 6 its minimum of 1 GPUs asks) j3:placed"
	if got != want {
		t.Fatalf("round 1: %s\nwant %s", got, want)
	}
	if err := s.End(s.Running()[0], model.Finished); err != nil {
		t.Fatal(err)
	}
	if got := decide(t, e, s, 1000); got != "j2:placed" {
		t.Fatalf("round 2: %s, want j2:placed", got)
	}
}

// decide runs a round at now, applies its starts and rejections to s and
// returns its decisions in order.
func decide(t *testing.T, e *engine.Engine, s *model.State, now model.Time) string {
	t.Helper()
	plan := e.Schedule(s, now)
	for _, a := range plan.Start {
		if err := s.Start(a.Job, a.GPUs); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range plan.Reject {
		if err := s.End(r.Job, model.Rejected); err != nil {
			t.Fatal(err)
		}
	}
	out := ""
	for _, d := range plan.Trace {
		if out != "" {
			out += " "
		}
		out += d.Job + ":" + d.Status.String()
		if d.Status == engine.Unschedulable {
			out += "(" + d.Reason + ")"
		}
	}
	return out
}
