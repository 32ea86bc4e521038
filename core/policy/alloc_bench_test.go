package policy_test

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

// BenchmarkAllocOrder is one round of each allocation policy with 2,000
// active jobs (26 job types × 4 GPU counts, as in Gavel's matrix, with
// made-up speeds) on 8 GPU types, half of the jobs running: the LP, the
// priorities and the choice. X is recomputed at every round (a job
// arrives before each).
func BenchmarkAllocOrder(b *testing.B) {
	for _, obj := range []policy.Objective{policy.MaxMin, policy.MaxThroughput, policy.EstSRPT} {
		a := &policy.Alloc{Objective: obj, Round: 360 * model.Second}
		b.Run(a.Name(), func(b *testing.B) { benchAlloc(b, a) })
	}
	// esrpt and gittins with the shells' defaults: the gang probe, its
	// light-load length and the priority backlog
	for _, obj := range []policy.Objective{policy.EstSRPT, policy.Gittins} {
		a := &policy.Alloc{Objective: obj, Round: 360 * model.Second, GangProbe: policy.DefaultGangProbe,
			GangProbeLight: policy.DefaultGangProbeLight, PriorityBacklog: policy.DefaultPriorityBacklog}
		b.Run(a.Name()+"-defaults", func(b *testing.B) { benchAlloc(b, a) })
	}
}

func benchAlloc(b *testing.B, a *policy.Alloc) {
	const types, jobs = 8, 2000
	speeds := typed{}
	var names []string
	tf := make([]float64, types)
	gpus := make([]int, types)
	for t := range types {
		names = append(names, fmt.Sprintf("t%d", t))
		tf[t], gpus[t] = float64(types-t), 64
	}
	var ids []string
	for i := range jobs + 1 {
		id := fmt.Sprintf("j%04d", i)
		ids = append(ids, id)
		sp := make([]float64, types)
		for t := range types {
			sp[t] = float64((i%26)+1) * float64(types-t) / float64(1+(i/26)%4)
		}
		speeds[id] = sp
	}
	s := benchState(b, names, tf, gpus, speeds, ids[:jobs])
	extra := model.NewJob(model.JobSpec{ID: ids[jobs], GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, jobs, -1, 1000)
	now := model.Time(0)
	b.ReportAllocs()
	for b.Loop() {
		now += 360 * model.Second
		if extra.State == model.Waiting && len(s.Waiting()) > 0 && s.Waiting()[len(s.Waiting())-1] == extra {
			if err := s.End(extra, model.Finished); err != nil {
				b.Fatal(err)
			}
			extra = model.NewJob(extra.Spec, extra.Seq, -1, 1000)
		} else {
			s.Submit(extra)
		}
		a.Order(s, now, nil)
	}
}

// benchState is hetState for benchmarks, with every other job running on
// a free GPU of its fastest type.
func benchState(b *testing.B, names []string, tflops []float64, gpus []int, speeds typed, ids []string) *model.State {
	var ts []model.GPUType
	var ns []model.Node
	for i, n := range names {
		ts = append(ts, model.GPUType{Name: n, MemMiB: 16384, TFLOPS: tflops[i]})
		ns = append(ns, model.Node{Name: "n" + n, Type: i, GPUs: gpus[i]})
	}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		b.Fatal(err)
	}
	s := model.NewState(c, speeds)
	for i, id := range ids {
		g := 1 + (i/26)%4
		j := model.NewJob(model.JobSpec{ID: id, GPUs: g, MinGPUs: g, MaxGPUs: g}, i, -1, 1e6)
		s.Submit(j)
		if i%2 == 1 {
			continue
		}
		for n := range c.Nodes {
			var alloc []model.GPU
			for x := 0; x < c.Nodes[n].GPUs && len(alloc) < g; x++ {
				if s.FreeMask(n)&(1<<uint(x)) != 0 {
					alloc = append(alloc, model.GPU{Node: int32(n), Index: int32(x)})
				}
			}
			if len(alloc) == g {
				if err := s.Start(j, alloc); err != nil {
					b.Fatal(err)
				}
				j.Rate = 1
				break
			}
		}
	}
	return s
}

// BenchmarkAllocFitted is one round of gittins, with the shells' defaults,
// where every job fits on its fastest type (a fitted round, as nearly
// every round of Philly's trace on 2,400 GPUs: docs/BENCHMARKS.md): 3
// types of 25 nodes of 8 GPUs, 210 jobs of 1 or 2 GPUs, each fastest on
// one type and running there; before each round the oldest running job
// finishes and a new one arrives, waiting.
func BenchmarkAllocFitted(b *testing.B) {
	benchFitted(b, false)
}

// BenchmarkAllocFittedRounds is BenchmarkAllocFitted's world without
// arrivals, ends or new allocations (Realloc a day): the rounds between
// Philly's, one a minute, where the policy only accounts, picks the pinned
// jobs and chooses (chooseFitted, every type with room for all its jobs),
// into the engine's reused buffer.
func BenchmarkAllocFittedRounds(b *testing.B) {
	benchFitted(b, true)
}

func benchFitted(b *testing.B, between bool) {
	const types, nodes, jobs = 3, 25, 210
	var ts []model.GPUType
	var ns []model.Node
	for t := range types {
		ts = append(ts, model.GPUType{Name: fmt.Sprintf("t%d", t), MemMiB: 16384, TFLOPS: float64(types - t)})
		for n := range nodes {
			ns = append(ns, model.Node{Name: fmt.Sprintf("n%d-%d", t, n), Type: t, GPUs: 8})
		}
	}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		b.Fatal(err)
	}
	speeds := typed{}
	spec := func(i int) model.JobSpec {
		id := fmt.Sprintf("j%06d", i)
		sp := make([]float64, types)
		for t := range types {
			sp[t] = 1
		}
		sp[i%types] = 10 // fastest on type i%types
		speeds[id] = sp
		g := 1 + i%2
		return model.JobSpec{ID: id, GPUs: g, MinGPUs: g, MaxGPUs: g}
	}
	s := model.NewState(c, speeds)
	var running []*model.Job
	start := func(j *model.Job, t int) {
		for n := t * nodes; n < (t+1)*nodes; n++ {
			var alloc []model.GPU
			for x := 0; x < 8 && len(alloc) < j.Spec.GPUs; x++ {
				if s.FreeMask(n)&(1<<uint(x)) != 0 {
					alloc = append(alloc, model.GPU{Node: int32(n), Index: int32(x)})
				}
			}
			if len(alloc) == j.Spec.GPUs {
				if err := s.Start(j, alloc); err != nil {
					b.Fatal(err)
				}
				j.Rate = 1
				running = append(running, j)
				return
			}
		}
		b.Fatalf("no room for %s on type %d", j.Spec.ID, t)
	}
	for i := range jobs {
		j := model.NewJob(spec(i), i, -1, 1e6)
		s.Submit(j)
		start(j, i%types)
	}
	a := &policy.Alloc{Objective: policy.Gittins, Round: 360 * model.Second, GangProbe: policy.DefaultGangProbe,
		GangProbeLight: policy.DefaultGangProbeLight, PriorityBacklog: policy.DefaultPriorityBacklog, GangShare: policy.DefaultGangShare}
	now := model.Time(0)
	next := jobs
	var waiting *model.Job
	if between {
		buf := a.Order(s, now, nil).Jobs[:0]
		b.ReportAllocs()
		for b.Loop() {
			now += model.Minute
			buf = a.Order(s, now, buf).Jobs[:0]
		}
		return
	}
	b.ReportAllocs()
	for b.Loop() {
		now += 360 * model.Second
		if waiting != nil {
			start(waiting, waiting.Seq%types)
		}
		old := running[0]
		running = running[1:]
		if err := s.End(old, model.Finished); err != nil {
			b.Fatal(err)
		}
		waiting = model.NewJob(spec(next), next, -1, 1e6)
		next++
		s.Submit(waiting)
		a.Order(s, now, nil)
	}
}
