package lp

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// BenchmarkMaxMin2000x8 solves the max-min program of 2,000 active jobs on 8
// GPU types (the scale target: ≤ 50 ms).
func BenchmarkMaxMin2000x8(b *testing.B) { benchSolve(b, 2000, 8, true, false) }

// BenchmarkMaxMinTies2000x8 is max-min with a throughput tie-breaker.
func BenchmarkMaxMinTies2000x8(b *testing.B) { benchSolve(b, 2000, 8, true, true) }

// BenchmarkMaxThroughput2000x8 solves the max-sum-throughput program.
func BenchmarkMaxThroughput2000x8(b *testing.B) { benchSolve(b, 2000, 8, false, true) }

// BenchmarkMaxMin400x3 is the size of a loaded Gavel-style trace on a
// three-type cluster.
func BenchmarkMaxMin400x3(b *testing.B) { benchSolve(b, 400, 3, true, false) }

// BenchmarkValue750x3 is the program of gittins and esrpt on a three-type
// cluster at the size of the Philly replay's (about 750 tracked jobs; its
// 353 programs take most of the replay's solver time, docs/BENCHMARKS.md):
// no Fair, values only, the three-type loops (three.go).
func BenchmarkValue750x3(b *testing.B) { benchSolve(b, 750, 3, false, true) }

func benchSolve(b *testing.B, n, k int, fair, value bool) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	p := random(rng, n, k, fair, value)
	if fair && value {
		for i := range p.Value {
			p.Value[i] *= 1e-3
		}
	}
	var s Solver
	its := 0
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		sol, err := s.Solve(p)
		if err != nil {
			b.Fatal(err)
		}
		its = sol.Iterations
	}
	b.ReportMetric(float64(its), "iterations")
	// The machine is shared: CPU time per solve is the figure that does not
	// depend on other processes (wall time, ns/op, does).
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
