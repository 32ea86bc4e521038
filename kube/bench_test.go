package kube

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/gpusched/gpusched/internal/testbed/threadcpu"
)

// benchWorld fills a scheduler's world with the benchmark's load
// (docs/BENCHMARKS.md): nodes of 8 V100s, single-pod jobs and gangs of 8,
// 1 GPU per pod, all pending. With opts, each node also advertises cpu,
// memory and pods, and each pod asks for cpu and memory (kwok's nodes and
// real pods do): the resource vector's path.
func benchWorld(b *testing.B, nodes, singles, gangs int, opts ...benchOpt) *Scheduler {
	s := testSched(&testing.T{}, "fifo", "pack")
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	seen := t0.Add(-time.Minute)
	for i := range nodes {
		var no []nodeOpt
		for _, o := range opts {
			no = append(no, o.node)
		}
		n, _ := stripNode(mkNode(fmt.Sprintf("gpu-%04d", i), "Tesla-V100-SXM2-16GB", 8, no...))
		s.w.setNode(n.(*v1.Node))
	}
	add := func(p *v1.Pod) {
		for _, o := range opts {
			o.pod(p)
		}
		sp, _ := stripPod(p)
		s.w.setPod(sp.(*v1.Pod), seen)
	}
	for i := range singles {
		add(mkPod(fmt.Sprintf("single-%05d", i), 1))
	}
	for g := range gangs {
		for k := range 8 {
			add(mkPod(fmt.Sprintf("gang-%03d-%d", g, k), 1, gang(fmt.Sprintf("gang-%03d", g), 8)))
		}
	}
	return s
}

// BenchmarkRoundPlaceAll is gpusched's own decision time for the
// benchmark's load: one round over 1,000 nodes of 8 GPUs and 14,000
// pending pods (10,000 single-pod jobs, 500 gangs of 8) that places the
// 8,000 that fit. The API calls are not made (they are the workers').
// It reports the round's thread CPU time beside the wall time (cpu-ns/op:
// on a shared machine the wall time counts whatever else runs there).
func BenchmarkRoundPlaceAll(b *testing.B) {
	defer threadcpu.Lock()()
	var cpu int64
	for b.Loop() {
		b.StopTimer()
		s := benchWorld(b, 1000, 10000, 500)
		b.StartTimer()
		c0, _ := threadcpu.Now()
		s.w.mu.Lock()
		r := &round{s: s, w: s.w, now: t0, t: 0}
		r.run()
		s.w.mu.Unlock()
		c1, _ := threadcpu.Now()
		cpu += c1 - c0
		if n := len(s.w.assumed); n != 8000 {
			b.Fatalf("%d pods placed, want 8000", n)
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// benchOpt changes the benchmark's nodes and pods.
type benchOpt struct {
	node nodeOpt
	pod  podOpt
}

// vectored gives nodes 64 CPUs, 512Gi and 110 pods, and pods a request of
// 4 CPUs and 32Gi (a node holds 8 pods' worth: GPUs still bound first).
func vectored() benchOpt {
	return benchOpt{allocates("cpu", "64", "memory", "512Gi", "pods", "110"), requests("cpu", "4", "memory", "32Gi")}
}

// BenchmarkRoundSteady is a round with nothing new to place: 8,000 pods
// bound (being bound), 6,000 waiting; what every later round costs.
func BenchmarkRoundSteady(b *testing.B) { benchSteady(b) }

// BenchmarkRoundSteadyResources is BenchmarkRoundSteady with cpu, memory
// and pods on the nodes and cpu and memory requests on the pods.
func BenchmarkRoundSteadyResources(b *testing.B) { benchSteady(b, vectored()) }

func benchSteady(b *testing.B, opts ...benchOpt) {
	s := benchWorld(b, 1000, 10000, 500, opts...)
	s.w.mu.Lock()
	(&round{s: s, w: s.w, now: t0, t: 0}).run()
	s.w.mu.Unlock()
	defer threadcpu.Lock()()
	c0, _ := threadcpu.Now()
	for b.Loop() {
		s.w.mu.Lock()
		r := &round{s: s, w: s.w, now: t0.Add(time.Second), t: 1000}
		r.run()
		s.w.mu.Unlock()
		if len(r.work.binds) != 0 {
			b.Fatalf("%d binds in a steady round", len(r.work.binds))
		}
	}
	c1, _ := threadcpu.Now()
	b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
}
