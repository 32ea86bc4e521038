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
// from Gavel's matrix. running jobs are started first with pack. With vec,
// every node also offers four resources (cpu, memory, pods, rdma/hca) and
// every replica asks for some of each (see vecRequest).
func bigState(b *testing.B, gpus, waiting, running int, vec bool) *model.State {
	b.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.37}}
	var nodes []model.Node
	for i := 0; i < gpus/8; i++ {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("n%d", i), Type: i % 3, GPUs: 8})
		if vec {
			nodes[i].Capacity = model.Resources{"cpu": 64000, "memory": 512 << 30, "pods": 16, "rdma/hca": 4}
		}
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
		if vec && i == running {
			startVec(b, s) // the first running jobs, where their requests fit
		}
		n := sizes[rng.IntN(len(sizes))]
		spec := model.JobSpec{ID: fmt.Sprint(i), Submit: model.Time(i), GPUs: n, MinGPUs: n, MaxGPUs: n,
			Model: tab.Models()[rng.IntN(len(tab.Models()))], Duration: model.Time(1+rng.IntN(100000)) * model.Second}
		if vec {
			spec.Requests = vecRequest(rng)
		}
		mi, work, _ := tab.Work(&spec)
		j := model.NewJob(spec, i, mi, work)
		s.Submit(j)
		if i < running && !vec {
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

// startVec starts the waiting jobs of s that one fifo+fit round places.
func startVec(b *testing.B, s *model.State) {
	b.Helper()
	e, err := engine.New(policy.FIFO{Backfill: true}, placer.Fit{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range e.Schedule(s, 0).Start {
		if err := s.Start(a.Job, a.GPUs); err != nil {
			b.Fatal(err)
		}
	}
}

// vecRequest is one replica's request in a vectored bigState: 4 to 16 CPUs,
// 32 to 160 GiB of memory, and an RDMA adapter one time in four — so that
// CPU or memory, not GPUs, is what fills some nodes.
func vecRequest(rng *rand.Rand) model.Resources {
	r := model.Resources{"cpu": int64(4+rng.IntN(13)) * 1000, "memory": int64(32+rng.IntN(129)) << 30}
	if rng.IntN(4) == 0 {
		r["rdma/hca"] = 1
	}
	return r
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
		vec    bool
	}{
		{"fifo", policy.FIFO{}, placer.Pack{}, 0, false, false},
		{"fifo-backfill", policy.FIFO{Backfill: true}, placer.Pack{}, 0, false, false},
		{"fifo-backfill-2000running", policy.FIFO{Backfill: true}, placer.Pack{}, 2000, false, false},
		{"srtf-2000running", &policy.SRTF{}, placer.Pack{}, 2000, false, false},
		{"srtf-2000running-checkpoints", &policy.SRTF{}, placer.Pack{}, 2000, true, false},
		{"hlas-hetero-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, false, false},
		{"hlas-hetero-2000running-checkpoints", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, true, false},
		{"las-pack-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, placer.Pack{}, 2000, false, false},
		// The same rounds with four resources besides GPUs (issue 26).
		{"vec4/fifo-backfill-2000running", policy.FIFO{Backfill: true}, placer.Pack{}, 2000, false, true},
		{"vec4/fifo-backfill-2000running-fit", policy.FIFO{Backfill: true}, placer.Fit{}, 2000, false, true},
		{"vec4/srtf-2000running-checkpoints", &policy.SRTF{}, placer.Pack{}, 2000, true, true},
		{"vec4/hlas-hetero-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, false, true},
		{"vec4/las-pack-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, placer.Pack{}, 2000, false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := bigState(b, 10000, 10000, bc.run, bc.vec)
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
