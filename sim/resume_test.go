package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/audit"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// resumed builds the jobs of a Start at now = 1000 s on one 2-GPU V100
// node: A runs on GPU 0 (10 s of work, 4 done), B on GPU 1 (20 s, none
// done); C (5 s, 1 GPU) and D (3 s, 2 GPUs) wait, C first.
func resumed(t *testing.T) (*model.Cluster, *profile.Table, *sim.Start) {
	t.Helper()
	c := cluster(t, "v100", 2)
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	now := model.FromSeconds(1000)
	mk := func(seq int, spec model.JobSpec, done float64, gpu int) *model.Job {
		_, work, err := tab.Work(&spec)
		if err != nil {
			t.Fatal(err)
		}
		j := model.NewJob(spec, seq, -1, work)
		j.Done = done
		if gpu >= 0 {
			j.State, j.Alloc = model.Running, []model.GPU{{Node: 0, Index: int32(gpu)}}
			j.FirstStart, j.LastStart, j.Mark, j.Resume = now-model.FromSeconds(done), now-model.FromSeconds(done), now, now
		}
		return j
	}
	jobs := []*model.Job{
		mk(0, makeJob("A", 990).dur(10).obj(), 4, 0),
		mk(1, makeJob("B", 995).dur(20).obj(), 0, 1),
		mk(2, makeJob("C", 996).dur(5).obj(), 0, -1),
		mk(3, makeJob("D", 997).gpus(2).dur(3).obj(), 0, -1),
	}
	return c, tab, &sim.Start{Now: now, Jobs: jobs}
}

func TestResume(t *testing.T) {
	c, tab, from := resumed(t)
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := eventlog.NewWriter(&log)
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, From: from, Events: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A ends at 1006 (6 s left); C starts on its GPU and ends at 1011; B
	// ends at 1020; D needs both GPUs: 1020–1023.
	want := map[string][2]float64{"A": {990 + 0, 1006}, "B": {1000, 1020}, "C": {1006, 1011}, "D": {1020, 1023}}
	for _, r := range res.Records {
		w := want[r.ID]
		if r.Finish.Seconds() != w[1] {
			t.Errorf("%s finished at %v, want %v", r.ID, r.Finish.Seconds(), w[1])
		}
		if r.ID == "C" || r.ID == "D" {
			if r.Start.Seconds() != w[0] {
				t.Errorf("%s started at %v, want %v", r.ID, r.Start.Seconds(), w[0])
			}
		}
	}
	if !strings.HasPrefix(log.String(), `{"t":1000,"event":"cluster"`) {
		t.Errorf("the log does not begin with the cluster at the resume time:\n%s", log.String())
	}
}

// TestResumeLog: a resumed run's log starts with the running jobs'
// starts; with the waiting jobs' submissions missing it is no complete
// log, and the auditor says so (a forecast's log is not a trace replay).
func TestResumeLog(t *testing.T) {
	c, tab, from := resumed(t)
	eng, _ := engine.New(policy.FIFO{}, placer.Pack{}, nil)
	var log bytes.Buffer
	w := eventlog.NewWriter(&log)
	if _, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, From: from, Events: w}); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if _, err := audit.Check(strings.NewReader(log.String()), "resumed"); err == nil {
		t.Errorf("the auditor accepts a log without submissions:\n%s", log.String())
	}
}

func TestResumeRejectsBadStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		bend func(*sim.Start)
		want string
	}{
		{"seq", func(s *sim.Start) { s.Jobs[1].Seq = 5 }, "has Seq 5 at index 1"},
		{"no GPUs", func(s *sim.Start) { s.Jobs[0].Alloc = nil }, "holds no GPU"},
		{"done", func(s *sim.Start) { s.Jobs[2].Done = 99 }, "has done 99 of work 5"},
		{"finished", func(s *sim.Start) { s.Jobs[3].State = model.Finished }, "is finished"},
		{"time", func(s *sim.Start) { s.Now = -1 }, "outside"},
		{"same GPU", func(s *sim.Start) { s.Jobs[1].Alloc = s.Jobs[0].Alloc }, "resume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, tab, from := resumed(t)
			tc.bend(from)
			eng, _ := engine.New(policy.FIFO{}, placer.Pack{}, nil)
			_, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, From: from})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
