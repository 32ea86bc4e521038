package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
)

// bigState builds a cluster of gpus GPUs (three types, 8 per node) and
// waiting jobs with Philly-like sizes (mostly 1 GPU, up to 16) and types
// from Gavel's matrix. running jobs are started first with pack.
func bigState(b *testing.B, gpus, waiting, running int) *model.State {
	b.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.37}}
	var nodes []model.Node
	for i := 0; i < gpus/8; i++ {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("n%d", i), Type: i % 3, GPUs: 8})
	}
	c, err := model.NewCluster(ts, nodes)
	if err != nil {
		b.Fatal(err)
	}
	m, err := profile.ParseMatrix("gavel", assets.Throughputs())
	if err != nil {
		b.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, ts[0])
	if err != nil {
		b.Fatal(err)
	}
	s := model.NewState(c, tab)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 4, 8, 16}
	pool := engine.NewPool(c)
	for i := 0; i < waiting+running; i++ {
		n := sizes[rng.IntN(len(sizes))]
		spec := model.JobSpec{ID: fmt.Sprint(i), Submit: model.Time(i), GPUs: n, MinGPUs: n, MaxGPUs: n,
			Model: tab.Models()[rng.IntN(len(tab.Models()))], Duration: model.Time(1+rng.IntN(100000)) * model.Second}
		mi, work, _ := tab.Work(&spec)
		j := model.NewJob(spec, i, mi, work)
		s.Submit(j)
		if i < running {
			pool.Reset(s)
			gpus := placer.Fewest(pool, n, engine.Feasible(s, j, n))
			if gpus == nil {
				b.Fatalf("cannot start running job %d", i)
			}
			if err := s.Start(j, gpus); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s
}

// BenchmarkSchedule measures one round at 10,000 GPUs and 10,000 waiting
// jobs (issue: ≤ 10 ms). The -checkpoints cases give every running job a
// checkpoint, so that stop candidates are released by lost work.
func BenchmarkSchedule(b *testing.B) {
	for _, bc := range []struct {
		name   string
		policy engine.QueuePolicy
		placer engine.Placer
		run    int
		ckpt   bool
	}{
		{"fifo", policy.FIFO{}, placer.Pack{}, 0, false},
		{"fifo-backfill", policy.FIFO{Backfill: true}, placer.Pack{}, 0, false},
		{"fifo-backfill-2000running", policy.FIFO{Backfill: true}, placer.Pack{}, 2000, false},
		{"srtf-2000running", &policy.SRTF{}, placer.Pack{}, 2000, false},
		{"srtf-2000running-checkpoints", &policy.SRTF{}, placer.Pack{}, 2000, true},
		{"hlas-hetero-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, false},
		{"hlas-hetero-2000running-checkpoints", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, true},
		{"las-pack-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, placer.Pack{}, 2000, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := bigState(b, 10000, 10000, bc.run)
			if bc.ckpt {
				for i, j := range s.Running() {
					j.Checkpoint = model.Time(i * 7919 % 20000) // before the round at 20 s
				}
			}
			e, err := engine.New(bc.policy, bc.placer, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var started int
			for i := 0; i < b.N; i++ {
				plan := e.Schedule(s, model.Time(20000))
				started = len(plan.Start)
			}
			b.ReportMetric(float64(started), "started/op")
		})
	}
}
