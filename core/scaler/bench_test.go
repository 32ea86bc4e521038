package scaler_test

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/scaler"
)

// scaleState builds nodes × 8 GPUs of three types (node i has type i mod 3)
// and one running elastic job (min 1, max 4, at its minimum) on every GPU
// except every gap-th one, which stays idle; the job count is returned.
// Every job holds at least one GPU, so 10,000 running jobs need more than
// 10,000 GPUs for any to be idle: the shapes below are 8,000 jobs on 10,000
// GPUs and 10,000 jobs on 12,000 GPUs.
func scaleState(b *testing.B, nodes, gap int) (*model.State, int) {
	b.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.37}}
	ns := make([]model.Node, nodes)
	for i := range ns {
		ns[i] = model.Node{Name: fmt.Sprintf("n%d", i), Type: i % 3, GPUs: 8}
	}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		b.Fatal(err)
	}
	s := model.NewState(c, perGPU{})
	k := 0
	for n := range nodes {
		for g := range 8 {
			if (n*8+g)%gap == gap-1 {
				continue
			}
			spec := model.JobSpec{ID: fmt.Sprint(k), Submit: model.Time(k), GPUs: 4, MinGPUs: 1, MaxGPUs: 4}
			j := model.NewJob(spec, k, -1, 1e9)
			s.Submit(j)
			if err := s.Start(j, []model.GPU{{Node: int32(n), Index: int32(g)}}); err != nil {
				b.Fatal(err)
			}
			k++
		}
	}
	return s, k
}

// BenchmarkScalerPass measures one engine round (FIFO with backfill, pack)
// in which the scaler acts over every running elastic job (issue: ≤ 10 ms a
// round). The threshold scaler passes once per period, so each iteration is
// one period later; Schedule does not change the state, so every iteration
// does the same work. With the default configurations: threshold (10,000
// GPUs, 8,000 jobs) a = 8,000, M = 2,000·0.3 = 600, EM = 0.6·600 = 360
// replicas; fulfillment fills up to ⌊0.97·A⌋ (1,700 GPUs on 10,000).
func BenchmarkScalerPass(b *testing.B) {
	shapes := []struct {
		name       string
		nodes, gap int
	}{
		{"10000gpus-8000jobs", 1250, 5},
		{"12000gpus-10000jobs", 1500, 6},
	}
	for _, sc := range []string{"threshold", "fulfillment"} {
		b.Run(sc, func(b *testing.B) {
			for _, sh := range shapes {
				b.Run(sh.name, func(b *testing.B) {
					s, jobs := scaleState(b, sh.nodes, sh.gap)
					cfg := scaler.SeedThresholdConfig()
					e := newEngine(b, newFulfillment(b, scaler.DefaultMaxLoad))
					if sc == "threshold" {
						e = newEngine(b, newThreshold(b, cfg))
					}
					now := model.Time(0)
					plan := e.Schedule(s, now) // warm the engine's buffers
					if len(plan.Resize) == 0 {
						b.Fatalf("the %s scaler did nothing over %d jobs", sc, jobs)
					}
					b.ReportAllocs()
					for b.Loop() {
						now += cfg.Period
						plan = e.Schedule(s, now)
					}
					b.StopTimer()
					if len(plan.Resize) == 0 {
						b.Fatalf("the %s scaler did nothing in the last round", sc)
					}
					b.ReportMetric(float64(len(plan.Resize)), "resized/op")
				})
			}
		})
	}
}
