package store

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPutParallel measures acknowledged durable puts per second from
// concurrent clients on a Bolt store in b.TempDir() (the real disk: each
// commit is fsynced). The value is the size of a typical job spec. The last
// two cases show what the linger and group commit itself are worth.
func BenchmarkPutParallel(b *testing.B) {
	cases := []struct {
		name    string
		clients int
		opts    BoltOptions
	}{
		{"clients=1", 1, BoltOptions{}},
		{"clients=32", 32, BoltOptions{}},
		{"clients=32/no-linger", 32, BoltOptions{MaxBatchDelay: -1}},
		{"clients=32/no-batching", 32, BoltOptions{MaxBatchSize: 1}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchPut(b, c.clients, c.opts) })
	}
}

// benchPut runs b.N puts from `clients` goroutines (rounded up to a
// multiple of GOMAXPROCS).
func benchPut(b *testing.B, clients int, opts BoltOptions) {
	s, err := OpenBolt(filepath.Join(b.TempDir(), "store.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	value := make([]byte, 300)
	var seq atomic.Int64
	ctx := context.Background()
	putNext := func() {
		key := "jobs/" + strconv.FormatInt(seq.Add(1), 10)
		if _, err := s.Put(ctx, key, value); err != nil {
			b.Error(err)
		}
	}
	// RunParallel starts parallelism × GOMAXPROCS goroutines, so one client
	// is a plain loop.
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism(max(1, (clients+procs-1)/procs))
	b.ResetTimer()
	start := time.Now()
	if clients == 1 {
		for range b.N {
			putNext()
		}
	} else {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				putNext()
			}
		})
	}
	elapsed := time.Since(start)
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "puts/s")
	if st.Commits > 0 {
		b.ReportMetric(float64(st.Requests)/float64(st.Commits), "puts/commit")
	}
}
