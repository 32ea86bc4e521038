package policy_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

type perGPU struct{}

func (perGPU) Speed(_ *model.Job, _, n int) float64 { return float64(n) }

func state(t *testing.T) *model.State {
	t.Helper()
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}, []model.Node{{Name: "n0", GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	return model.NewState(c, perGPU{})
}

func ids(js []*model.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.Spec.ID)
	}
	return out
}

func TestFIFOOrder(t *testing.T) {
	s := state(t)
	for i, sub := range []model.Time{20, 10, 10} {
		s.Submit(model.NewJob(model.JobSpec{ID: string(rune('a' + i)), Submit: sub, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, i, -1, 1))
	}
	ord := policy.FIFO{Backfill: true}.Order(s, 0, nil)
	if got := ids(ord.Jobs); !slices.Equal(got, []string{"b", "c", "a"}) || ord.Preemptive || !ord.Backfill {
		t.Errorf("order %v (preemptive %v, backfill %v)", got, ord.Preemptive, ord.Backfill)
	}
}

func TestSRTFOrder(t *testing.T) {
	s := state(t)
	// Remaining time at the best speed on the requested GPUs:
	// r: 100 work, 10 done by t=10 (rate 1 from 0), 1 GPU → 90 s.
	// w1: 200 work on 4 GPUs → 50 s. w2: 90 work on 1 GPU → 90 s (ties r;
	// r arrived first). w3: 5 GPUs on a 4-GPU cluster → +Inf, last.
	r := model.NewJob(model.JobSpec{ID: "r", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 100)
	s.Submit(r)
	if err := s.Start(r, []model.GPU{{Node: 0, Index: 0}}); err != nil {
		t.Fatal(err)
	}
	r.Rate = 1
	for i, spec := range []struct {
		id   string
		gpus int
		work float64
	}{{"w1", 4, 200}, {"w2", 1, 90}, {"w3", 5, 1}} {
		s.Submit(model.NewJob(model.JobSpec{ID: spec.id, GPUs: spec.gpus, MinGPUs: spec.gpus, MaxGPUs: spec.gpus}, i+1, -1, spec.work))
	}
	ord := (&policy.SRTF{}).Order(s, 10*model.Second, nil)
	if got := ids(ord.Jobs); !slices.Equal(got, []string{"w1", "r", "w2", "w3"}) || !ord.Preemptive {
		t.Errorf("order %v, preemptive %v", got, ord.Preemptive)
	}
	if rt := policy.RemainingTime(s, s.Waiting()[2], 0); !math.IsInf(rt, 1) {
		t.Errorf("w3 remaining %v, want +Inf", rt)
	}
}
