package quota_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/internal/assets"
)

// benchQueues is the number of queues of BenchmarkRound.
const benchQueues = 20

// queuedState builds 10,000 GPUs (v100, p100, k80 in 8-GPU nodes, as the
// engine's benchmark), 20 queues whose quotas split every type evenly, and
// jobs with Philly-like sizes and Gavel job types: the first running ones
// all belong to the first five queues (which therefore borrow), started
// with pack; the waiting ones to any queue. It returns the state and the
// queue configuration.
func queuedState(b *testing.B, waiting, running int) (*model.State, quota.Config) {
	b.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.37}}
	var nodes []model.Node
	for i := range 10000 / 8 {
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
	var cfg quota.Config
	for q := range benchQueues {
		qq := quota.Queue{Name: fmt.Sprintf("q%02d", q), Weight: 1 + float64(q%3), Quota: map[string]int{}}
		for t, gt := range ts {
			qq.Quota[gt.Name] = c.TypeGPUs(t) / benchQueues
		}
		cfg.Queues = append(cfg.Queues, qq)
	}
	s := model.NewState(c, tab)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 4, 8, 16}
	pool := engine.NewPool(c)
	for i := range waiting + running {
		n := sizes[rng.IntN(len(sizes))]
		q := rng.IntN(benchQueues)
		if i < running {
			q = i % 5
		}
		spec := model.JobSpec{ID: fmt.Sprint(i), Submit: model.Time(i), GPUs: n, MinGPUs: n, MaxGPUs: n, Queue: fmt.Sprintf("q%02d", q),
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
			j.LastStart, j.Checkpoint = model.Time(i), model.Time(i*7919%20000)
		}
	}
	return s, cfg
}

// BenchmarkRound measures one round of the queue layer at 10,000 GPUs and
// 10,000 jobs in 20 queues (issue 18: ≤ 10 ms). With running jobs, the
// first five queues hold 2,000 jobs beyond their quotas, so guaranteed jobs
// of the other queues reclaim GPUs (checkpoint-aware) once the free ones
// run out.
func BenchmarkRound(b *testing.B) {
	for _, bc := range []struct {
		name    string
		inner   func() engine.QueuePolicy
		placer  engine.Placer
		running int
	}{
		{"fifo-backfill", func() engine.QueuePolicy { return policy.FIFO{Backfill: true} }, placer.Pack{}, 0},
		{"fifo", func() engine.QueuePolicy { return policy.FIFO{} }, placer.Pack{}, 2000},
		{"fifo-backfill-reclaim", func() engine.QueuePolicy { return policy.FIFO{Backfill: true} }, placer.Pack{}, 2000},
		{"tiresias", func() engine.QueuePolicy { return &policy.Tiresias{Thresholds: policy.TiresiasThresholds()} }, placer.Pack{}, 2000},
		{"hlas-hetero", func() engine.QueuePolicy { return &policy.HLAS{PriorityRatio: 2, StarveRatio: 4} }, &placer.Hetero{}, 2000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, cfg := queuedState(b, 10000-bc.running, bc.running)
			q, err := quota.New(bc.inner(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			e, err := engine.New(q, bc.placer, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var started, preempted int
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				plan := e.Schedule(s, model.Time(20000+i))
				started, preempted = len(plan.Start), len(plan.Preempt)
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(started), "started/op")
			b.ReportMetric(float64(preempted), "preempted/op")
		})
	}
}

// cpuTime returns the CPU time (user and system) the process has used: on
// a machine shared with other work, wall time per round overstates the
// round's cost, CPU time does not (cpu-ns/op; GC included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
