package profile_test

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// bigModel needs 22000 MiB per GPU and runs 10× faster on the 16 GiB V100s
// than on the 40 GiB A100s, so only its peak memory keeps it off the V100s.
const bigModel = `{"profiles": [{"job_type": "big", "peak_mem_mib": 22000,
	"throughput": {"v100": {"1": 10, "2": 20}, "a100": {"1": 1, "2": 2}}}]}`

func memCluster(t *testing.T) *model.Cluster {
	t.Helper()
	types := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "a100", MemMiB: 40960, TFLOPS: 19.5}}
	c, err := model.NewCluster(types, []model.Node{{Name: "v", Type: 0, GPUs: 4}, {Name: "a", Type: 1, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bigTable(t *testing.T, c *model.Cluster) (*profile.Matrix, *profile.Table) {
	t.Helper()
	ps, err := profile.ParseProfiles("p.json", []byte(bigModel))
	if err != nil {
		t.Fatal(err)
	}
	m := (&profile.Matrix{}).Merge(ps...)
	tab, err := profile.NewTable(m, c, c.Types[0])
	if err != nil {
		t.Fatal(err)
	}
	return m, tab
}

func TestPeakMemFeasible(t *testing.T) {
	c := memCluster(t)
	m, tab := bigTable(t, c)
	specs := []model.JobSpec{{ID: "j", GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Model: "big", Steps: 100}}
	m.FillPeakMem(specs)
	mi, w, err := tab.Work(&specs[0])
	if err != nil {
		t.Fatal(err)
	}
	ts := engine.Feasible(model.NewState(c, tab), model.NewJob(specs[0], 0, mi, w), 1)
	if ts.Has(0) || !ts.Has(1) {
		t.Errorf("feasible types %b: want the a100s only", ts)
	}
}

// events records every GPU an event gives a job.
type events struct{ allocs []string }

// Emit implements sim.Sink.
func (e *events) Emit(ev eventlog.Event) { e.allocs = append(e.allocs, ev.Alloc...) }

func TestPeakMemNeverPlacedOnSmallGPUs(t *testing.T) {
	c := memCluster(t)
	m, tab := bigTable(t, c)
	var specs []model.JobSpec
	for i := range 6 {
		id := string(rune('a' + i))
		specs = append(specs, model.JobSpec{ID: id, Submit: model.Time(i) * model.Second, GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Model: "big", Steps: 50})
	}
	m.FillPeakMem(specs)
	for _, names := range []recipe.Names{
		{Policy: "fifo", Placer: "pack", Scaler: "none"},
		{Policy: "srtf", Placer: "hetero", Scaler: "none"},
		{Policy: "hlas", Placer: "hetero", Scaler: "none"},
	} {
		policy := names.Policy + "/" + names.Placer
		eng, err := recipe.New(names, recipe.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		ev := &events{}
		res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, Jobs: specs, Events: ev})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			if !r.Completed() || r.GPUType != "a100" {
				t.Errorf("%s: job %s: completed %v on %q, want completed on a100", policy, r.ID, r.Completed(), r.GPUType)
			}
		}
		for _, g := range ev.allocs {
			if !strings.HasPrefix(g, "a/") {
				t.Errorf("%s: a job needing 22000 MiB got GPU %s (16 GiB)", policy, g)
			}
		}
		if len(ev.allocs) == 0 {
			t.Errorf("%s: no job started", policy)
		}
	}
}
