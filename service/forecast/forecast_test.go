package forecast

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
)

// snapshot is one node of two V100s at now = 1000 s: A runs on GPU 0 with
// 6 s left, B on GPU 1 with 20 s left; C (1 GPU, 5 s) and D (2 GPUs, 3 s)
// wait, in that order.
func snapshot(t *testing.T) *Snapshot {
	t.Helper()
	v100, _ := config.LookupType("v100")
	c, err := model.NewCluster([]model.GPUType{v100}, []model.Node{{Name: "n0", Type: 0, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := profile.ParseMatrix("embedded", assets.Throughputs())
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, v100)
	if err != nil {
		t.Fatal(err)
	}
	now := model.FromSeconds(1000)
	mk := func(seq int, id string, gpus int, gpu int, left time.Duration) Job {
		j := model.NewJob(model.JobSpec{ID: id, Submit: model.FromSeconds(900 + float64(seq)), GPUs: gpus, MinGPUs: gpus, MaxGPUs: gpus}, seq, -1, 0)
		job := Job{Job: j, Length: Length{Kind: KindTimeLimit, Remaining: left}}
		if gpu >= 0 {
			j.State, j.Alloc = model.Running, []model.GPU{{Node: 0, Index: int32(gpu)}}
			j.FirstStart, j.LastStart = now-model.FromSeconds(30), now-model.FromSeconds(30)
			job.Started = j.LastStart
		}
		return job
	}
	return &Snapshot{Now: now, Cluster: c, Table: tab, Names: recipe.Defaults(), Options: recipe.DefaultOptions(),
		Jobs: []Job{mk(0, "A", 1, 0, 6*time.Second), mk(1, "B", 1, 1, 20*time.Second),
			mk(2, "C", 1, -1, 5*time.Second), mk(3, "D", 2, -1, 3*time.Second)}}
}

func TestRunPoint(t *testing.T) {
	s := snapshot(t)
	exact := map[Class]Spread{ClassTimeLimit: {Sigma: 0}}
	res, err := Run(s, Options{Runs: 4, Spreads: exact})
	if err != nil {
		t.Fatal(err)
	}
	// A ends at 1006, C starts there and ends at 1011; B ends at 1020; D
	// needs both GPUs: 1020–1023.
	want := []struct{ start, finish float64 }{{970, 1006}, {970, 1020}, {1006, 1011}, {1020, 1023}}
	for i, w := range want {
		e := res.ETAs[i]
		if e.Start.Seconds() != w.start || e.Finish.Seconds() != w.finish {
			t.Errorf("%s: start %v finish %v, want %v, %v", s.Jobs[i].Job.Spec.ID, e.Start.Seconds(), e.Finish.Seconds(), w.start, w.finish)
		}
		for k := range 3 {
			if e.StartQ[k] != e.Start || e.FinishQ[k] != e.Finish {
				t.Errorf("%s: quantiles %v %v differ from the point without spread", s.Jobs[i].Job.Spec.ID, e.StartQ, e.FinishQ)
			}
		}
	}
	if res.Runs != 4 {
		t.Errorf("runs %d", res.Runs)
	}
}

func TestRunBias(t *testing.T) {
	s := snapshot(t)
	// Jobs of this kind ran twice their estimate: A ends at 1012, C
	// starts there.
	res, err := Run(s, Options{Runs: 2, Spreads: map[Class]Spread{ClassTimeLimit: {Mu: 0.6931471805599453}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ETAs[2].Start.Seconds(); got != 1012 {
		t.Errorf("C starts at %v, want 1012", got)
	}
}

func TestRunRange(t *testing.T) {
	s := snapshot(t)
	o := Options{Runs: 40, Seed: 7, Spreads: map[Class]Spread{ClassTimeLimit: {Sigma: 0.5}}}
	a, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range a.ETAs {
		if !(e.StartQ[0] <= e.StartQ[1] && e.StartQ[1] <= e.StartQ[2] && e.FinishQ[0] <= e.FinishQ[1] && e.FinishQ[1] <= e.FinishQ[2]) {
			t.Errorf("job %d: quantiles out of order: %v %v", i, e.StartQ, e.FinishQ)
		}
	}
	if c := a.ETAs[2]; !(c.StartQ[0] < c.Start && c.Start < c.StartQ[2]) {
		t.Errorf("C: the range %v does not hold the point %v", c.StartQ, c.Start)
	}
	o.Workers = 1
	b, err := Run(snapshot(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("the same snapshot and seed gave different forecasts")
	}
}

func TestRunNever(t *testing.T) {
	s := snapshot(t)
	s.Jobs[3].Job.Spec.GPUs, s.Jobs[3].Job.Spec.MinGPUs, s.Jobs[3].Job.Spec.MaxGPUs = 4, 4, 4
	res, err := Run(s, Options{Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	d := res.ETAs[3]
	if d.Start != Never || d.Finish != Never || d.StartQ[2] != Never || d.Reason == "" {
		t.Errorf("a job larger than the cluster: %+v, want Never with a reason", d)
	}
}

func TestRunChecksSeq(t *testing.T) {
	s := snapshot(t)
	s.Jobs[1].Job.Seq = 3
	if _, err := Run(s, Options{}); err == nil {
		t.Error("no error for a job out of sequence")
	}
}
