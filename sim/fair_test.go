package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/metrics"
)

// runQueues runs jobs on c under fifo with the queue layer of cfg.
func runQueues(t *testing.T, c *model.Cluster, cfg quota.Config, jobs []model.JobSpec) *sim.Result {
	t.Helper()
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	q, err := quota.New(policy.FIFO{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(q, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, Jobs: jobs, Queues: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func inQueue(j *job, q string) model.JobSpec { j.s.Queue = q; return j.s }

// TestReclaimScenario: 4 V100s, queues a and b with a quota of 2 each. a's
// four 100 s jobs start at 0 and borrow b's quota; b's 2-GPU job of 50 s
// arrives at 10 and reclaims it: a's two jobs of the highest arrival rank
// (all started at 0) are preempted, b runs 10–60, they resume at 60 with
// 90 s left and finish at 150 (no restart pause).
func TestReclaimScenario(t *testing.T) {
	cfg := quota.Config{Queues: []quota.Queue{
		{Name: "a", Quota: map[string]int{"v100": 2}, Weight: 1},
		{Name: "b", Quota: map[string]int{"v100": 2}, Weight: 1},
	}}
	jobs := []model.JobSpec{
		inQueue(makeJob("a0", 0).dur(100), "a"), inQueue(makeJob("a1", 0).dur(100), "a"),
		inQueue(makeJob("a2", 0).dur(100), "a"), inQueue(makeJob("a3", 0).dur(100), "a"),
		inQueue(makeJob("b0", 10).gpus(2).dur(50), "b"),
	}
	res := runQueues(t, cluster(t, "v100", 4), cfg, jobs)
	want := map[string]float64{"a0": 100, "a1": 100, "a2": 150, "a3": 150, "b0": 60}
	for id, w := range want {
		if got := finishes(res)[id]; got != w {
			t.Errorf("%s finished at %v, want %v", id, got, w)
		}
	}
	f := res.Fairness
	if f.Reclaims != 2 || f.Valid {
		t.Errorf("fairness %+v: want 2 reclaims and no time with two queues waiting", f)
	}
	qs := metrics.SummarizeQueues(res.Records, []string{"a", "b"}, []float64{1, 1})
	// a: JCT 100, 100, 150, 150; 400 GPU-s. b: JCT 50; 100 GPU-s.
	if qs[0].AvgJCT != 125 || qs[1].AvgJCT != 50 || math.Abs(qs[0].GPUHours-400.0/3600) > 1e-12 ||
		math.Abs(qs[1].GPUHours-100.0/3600) > 1e-12 || qs[0].Reclaimed != 2 || math.Abs(qs[0].Share-0.8) > 1e-12 {
		t.Errorf("queues %+v", qs)
	}
}

// TestJainScenario: one V100 and one K80; job type M runs at 2 steps/s on
// the V100 and 1 on the K80, so a K80 GPU is worth 0.5. Queue a's jobs run
// on the K80, b's on the V100, 100 s each, two per queue. For 0–100 both
// queues have a job waiting: x_a = 0.5, x_b = 1, Jain = 1.5² / (2 ·
// 1.25) = 0.9. From 100 nobody waits.
func TestJainScenario(t *testing.T) {
	cfg := quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}}}
	jobs := []model.JobSpec{
		inQueue(makeJob("a1", 0).steps("M", 100).gpuType("k80"), "a"),
		inQueue(makeJob("b1", 0).steps("M", 200).gpuType("v100"), "b"),
		inQueue(makeJob("a2", 0).steps("M", 100).gpuType("k80"), "a"),
		inQueue(makeJob("b2", 0).steps("M", 200).gpuType("v100"), "b"),
	}
	res := runQueues(t, cluster(t, "v100", 1, "k80", 1), cfg, jobs)
	f := res.Fairness
	if !f.Valid || math.Abs(f.Jain-0.9) > 1e-12 || f.Contended != 100*model.Second {
		t.Errorf("fairness %+v, want Jain 0.9 over 100 s", f)
	}
	qs := metrics.SummarizeQueues(res.Records, []string{"a", "b"}, []float64{1, 1})
	if math.Abs(qs[0].NormGPUHours-100.0/3600) > 1e-12 || math.Abs(qs[1].NormGPUHours-200.0/3600) > 1e-12 {
		t.Errorf("normalised GPU-hours %v, %v; want 100 and 200 GPU-s", qs[0].NormGPUHours*3600, qs[1].NormGPUHours*3600)
	}
	if !strings.HasPrefix(res.Records[0].Queue, "a") {
		t.Errorf("record queue %q", res.Records[0].Queue)
	}
}
