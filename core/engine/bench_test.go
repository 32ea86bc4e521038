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
	"github.com/gpusched/gpusched/internal/testbed/threadcpu"
)

// bigState builds a cluster of gpus GPUs (three types, 8 per node) and
// waiting jobs with Philly-like sizes (mostly 1 GPU, up to 16) and types
// from Gavel's matrix. running jobs are started first with pack. With vec
// set, every node also offers four resources (cpu, memory, pods, rdma/hca)
// and every replica asks for some of each (vecShare, vecHeavy).
func bigState(b *testing.B, gpus, waiting, running int, vec vecLoad) *model.State {
	b.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.37}}
	var nodes []model.Node
	for i := 0; i < gpus/8; i++ {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("n%d", i), Type: i % 3, GPUs: 8})
		if vec != nil {
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
		if vec != nil && i == running {
			startVec(b, s) // the first running jobs, where their requests fit
		}
		n := sizes[rng.IntN(len(sizes))]
		spec := model.JobSpec{ID: fmt.Sprint(i), Submit: model.Time(i), GPUs: n, MinGPUs: n, MaxGPUs: n,
			Model: tab.Models()[rng.IntN(len(tab.Models()))], Duration: model.Time(1+rng.IntN(100000)) * model.Second}
		if vec != nil {
			spec.Requests, spec.ReplicaGPUs = vec(rng, n), min(n, 8)
		}
		mi, work, _ := tab.Work(&spec)
		j := model.NewJob(spec, i, mi, work)
		s.Submit(j)
		if i < running && vec == nil {
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
	e, err := engine.New(policy.FIFO{Backfill: true}, &placer.Fit{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range e.Schedule(s, 0).Start {
		if err := s.Start(a.Job, a.GPUs); err != nil {
			b.Fatal(err)
		}
	}
}

// timedRound schedules the benchmark's round and returns how many jobs it
// started. It is a function of its own, never inlined, so that an
// instruction count can be limited to the timed rounds, without the
// set-up's: valgrind --tool=callgrind --toggle-collect='*timedRound'.
//
//go:noinline
func timedRound(e *engine.Engine, s *model.State) int {
	return len(e.Schedule(s, model.Time(20000)).Start)
}

// vecLoad draws the request of a replica of n GPUs.
type vecLoad func(rng *rand.Rand, n int) model.Resources

// vecHeavy asks 4 to 16 CPUs and 32 to 160 GiB of memory whatever the GPUs,
// and an RDMA adapter one time in four: more than a node's share per GPU
// (8 CPUs, 64 GiB) on average, so that CPU and memory, not GPUs, fill most
// nodes and most free GPUs are stranded — the stress case.
func vecHeavy(rng *rand.Rand, _ int) model.Resources {
	r := model.Resources{"cpu": int64(4+rng.IntN(13)) * 1000, "memory": int64(32+rng.IntN(129)) << 30}
	if rng.IntN(4) == 0 {
		r["rdma/hca"] = 1
	}
	return r
}

// vecShare asks per GPU 2 to 8 CPUs and 16 to 64 GiB, never more than a
// node's share, and an RDMA adapter one time in four: GPUs run out first,
// with some CPU and memory fragmentation — the usual case.
func vecShare(rng *rand.Rand, n int) model.Resources {
	n = min(n, 8) // a replica per node (bigState's ReplicaGPUs)
	r := model.Resources{"cpu": int64(n*(2+rng.IntN(7))) * 1000, "memory": int64(n*(16+rng.IntN(49))) << 30}
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
		vec    vecLoad
	}{
		{"fifo", policy.FIFO{}, placer.Pack{}, 0, false, nil},
		{"fifo-backfill", policy.FIFO{Backfill: true}, placer.Pack{}, 0, false, nil},
		{"fifo-backfill-2000running", policy.FIFO{Backfill: true}, placer.Pack{}, 2000, false, nil},
		{"srtf-2000running", &policy.SRTF{}, placer.Pack{}, 2000, false, nil},
		{"srtf-2000running-checkpoints", &policy.SRTF{}, placer.Pack{}, 2000, true, nil},
		{"hlas-hetero-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, false, nil},
		{"hlas-hetero-2000running-checkpoints", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, true, nil},
		{"las-pack-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, placer.Pack{}, 2000, false, nil},
		// The same rounds with four resources besides GPUs (issue 26).
		{"vec4-share/fifo-backfill-2000running", policy.FIFO{Backfill: true}, placer.Pack{}, 2000, false, vecShare},
		{"vec4-share/fifo-backfill-2000running-fit", policy.FIFO{Backfill: true}, &placer.Fit{}, 2000, false, vecShare},
		{"vec4-share/srtf-2000running-checkpoints", &policy.SRTF{}, placer.Pack{}, 2000, true, vecShare},
		{"vec4-share/hlas-hetero-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, false, vecShare},
		{"vec4-share/las-pack-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, placer.Pack{}, 2000, false, vecShare},
		{"vec4-heavy/fifo-backfill-2000running", policy.FIFO{Backfill: true}, placer.Pack{}, 2000, false, vecHeavy},
		{"vec4-heavy/fifo-backfill-2000running-fit", policy.FIFO{Backfill: true}, &placer.Fit{}, 2000, false, vecHeavy},
		{"vec4-heavy/srtf-2000running-checkpoints", &policy.SRTF{}, placer.Pack{}, 2000, true, vecHeavy},
		{"vec4-heavy/hlas-hetero-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4}, &placer.Hetero{}, 2000, false, vecHeavy},
		{"vec4-heavy/las-pack-2000running", &policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, placer.Pack{}, 2000, false, vecHeavy},
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
			defer threadcpu.Lock()()
			b.ResetTimer()
			cpu0, cpuOK := threadcpu.Now()
			var started int
			for i := 0; i < b.N; i++ {
				started = timedRound(e, s)
			}
			if cpu1, ok := threadcpu.Now(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(started), "started/op")
		})
	}
}
