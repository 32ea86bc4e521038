package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/sim/metrics"
)

// vectorCluster is two 4-GPU V100 nodes with 64 GiB of memory each: n0
// with 8 CPUs, n1 with 16.
func vectorCluster(t *testing.T) *model.Cluster {
	t.Helper()
	c, err := model.NewCluster([]model.GPUType{types["v100"]}, []model.Node{
		{Name: "n0", GPUs: 4, Capacity: model.Resources{model.ResourceCPU: 8000, model.ResourceMemory: 64 << 30}},
		{Name: "n1", GPUs: 4, Capacity: model.Resources{model.ResourceCPU: 16000, model.ResourceMemory: 64 << 30}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// asks sets what one replica of j asks: cores and GiB.
func (j *job) asks(cores, gib int64) *job {
	j.s.Requests = model.Resources{model.ResourceCPU: cores * 1000, model.ResourceMemory: gib << 30}
	return j
}

// TestStrandedGPUs is the hand-computed scenario of docs/SIM.md. Three
// 1-GPU jobs at 0 on vectorCluster: A (6 CPUs, 8 GiB, 100 s), B and C (4
// CPUs, 8 GiB; 200 s and 50 s). The reference request per GPU is the
// median: 4 CPUs and 8 GiB. Pack puts A on n0 (lowest index); n0 then has
// 2 CPUs left, less than B or C asks, so both go to n1.
//
//	0–50    n0: 3 free GPUs, 2 CPUs serve none → 3 stranded; n1: 2 free, 8 CPUs serve 2 → 0
//	50–100  C ends: n1 has 3 free GPUs and 12 CPUs → 0; n0 still 3        → 3
//	100–200 A ends: n0 has 4 free GPUs, 8 CPUs serve 2 → 2; n1 0          → 2
//
// Stranded GPUs over the makespan of 200 s: (3·100 + 2·100) / 200 = 2.5,
// a share of 2.5 / 8 = 0.3125. CPUs held: 14 cores for 50 s, 10 for 50 s,
// 4 for 100 s = 1,600 core-s of 24 · 200: 1/3. Memory: 24, 16, 8 GiB =
// 2,800 GiB-s of 128 · 200: 0.109375. Empty, the cluster strands 2 GPUs
// (n0's 8 CPUs serve 2 of its 4 GPUs): the structural figure.
func TestStrandedGPUs(t *testing.T) {
	jobs := []model.JobSpec{
		makeJob("A", 0).dur(100).asks(6, 8).obj(),
		makeJob("B", 0).dur(200).asks(4, 8).obj(),
		makeJob("C", 0).dur(50).asks(4, 8).obj(),
	}
	res, log := scenario{vectorCluster(t), policy.FIFO{Backfill: true}, 30, jobs, nil}.run(t)
	for _, want := range []string{`"job":"A","alloc":["n0/0"]`, `"job":"B","alloc":["n1/0"]`, `"job":"C","alloc":["n1/1"]`,
		// What the audit (scenario.run) books the nodes' CPU and memory by.
		`"nodes":[{"node":"n0","capacity":{"cpu":8000,"memory":68719476736}}`, `"job":"A","gpus":1,"min_gpus":1,"max_gpus":1,"duration_s":100,"requests":{"cpu":6000,"memory":8589934592}`} {
		if !strings.Contains(log, want) {
			t.Fatalf("placement differs from the hand computation: no %s in\n%s", want, log)
		}
	}
	r := res.Resources
	if r == nil {
		t.Fatal("no resource measure on a vectored cluster")
	}
	if r.PerGPU[0] != 4000 || r.PerGPU[1] != 8<<30 {
		t.Errorf("reference per GPU %v, want [4000 %d]", r.PerGPU, 8<<30)
	}
	s := metrics.Summarize(8, res.Records)
	metrics.SetResources(&s, res.Records, 8, r)
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if s.StrandedGPUs == nil || s.StrandedGPUShare == nil {
		t.Fatalf("summary has no stranded GPUs: %+v", s)
	}
	near("stranded GPUs", *s.StrandedGPUs, 2.5)
	near("stranded share", *s.StrandedGPUShare, 0.3125)
	near("cpu util", s.ResourceUtil["cpu"], 1.0/3)
	near("memory util", s.ResourceUtil["memory"], 0.109375)
	near("gpu util", s.GPUUtil, 350.0/1600)
	// Empty, n0's 8 CPUs serve 2 of its 4 GPUs; n1's 16 serve all 4.
	if s.StructuralStrandedGPUs == nil || *s.StructuralStrandedGPUs != 2 || r.Structural != 2 {
		t.Errorf("structural stranded GPUs %v, want 2", s.StructuralStrandedGPUs)
	}
	if s.StrandedGPUsWaiting != nil {
		t.Errorf("stranded GPUs while jobs wait: %v, but no job waited", *s.StrandedGPUsWaiting)
	}
}

// TestNoResourcesGPUOnly: a GPU-only cluster measures no resources, and
// its summary gets no resource figures.
func TestNoResourcesGPUOnly(t *testing.T) {
	jobs := []model.JobSpec{makeJob("A", 0).dur(10).asks(4, 8).obj()}
	res, _ := scenario{cluster(t, "v100", 4), policy.FIFO{}, 30, jobs, nil}.run(t)
	if res.Resources != nil {
		t.Fatalf("resources measured on a GPU-only cluster: %+v", res.Resources)
	}
	s := metrics.Summarize(4, res.Records)
	metrics.SetResources(&s, res.Records, 4, res.Resources)
	if s.ResourceUtil != nil || s.StrandedGPUs != nil || s.StrandedGPUShare != nil {
		t.Errorf("resource figures on a GPU-only run: %+v", s)
	}
}
