package scheduler

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// benchClients is the number of goroutines that fill submits from.
const benchClients = 32

// benchScheduler returns a scheduler without its loop on st, with 24 nodes of
// 8 GPUs (k80, p100 and v100), for the round benchmarks.
func benchScheduler(b *testing.B, st store.Store, names recipe.Names) *Scheduler {
	b.Helper()
	opts := recipe.DefaultOptions()
	opts.Backfill = true
	s, err := New(settings.Config{Store: st, DataDir: b.TempDir(), Names: names, Options: &opts})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 24 {
		typ := []string{"k80", "p100", "v100"}[i%3]
		reg := api.Register{Name: fmt.Sprintf("n%02d", i), Addr: "10.0.0.1"}
		for g := range 8 {
			reg.GPUs = append(reg.GPUs, api.GPU{Index: g, Type: typ})
		}
		gpus, _, ferr := reg.Check()
		if ferr != nil {
			b.Fatal(ferr)
		}
		if err := s.register(&reg, gpus, nil); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// fill submits n jobs of 1, 2, 4 or 8 GPUs from 32 goroutines.
func fill(b *testing.B, s *Scheduler, n int) {
	b.Helper()
	var wg sync.WaitGroup
	models := []string{"ResNet-50 (batch size 64)", "Transformer (batch size 64)", "", "LM (batch size 20)"}
	for c := range benchClients {
		wg.Go(func() {
			for i := c; i < n; i += benchClients {
				k := i + i/benchClients // sizes and models vary within each goroutine
				spec := api.JobSpec{Command: []string{"train"}, GPUs: 1 << (k % 4), Model: models[k%len(models)]}
				if _, err := s.Submit(context.Background(), spec); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// queued returns the number of waiting jobs.
func (s *Scheduler) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tab.State.Waiting())
}

// BenchmarkRound measures one scheduling round (engine.Schedule plus
// applying the plan) with 1,000 queued jobs on 192 GPUs of three types.
//
//   - full: the cluster is full, nothing starts (the steady state); no
//     store write happens.
//   - start-mem: the cluster is empty and the round starts every job that
//     fits (83 to 192 GPUs' worth): bookkeeping with the in-memory store,
//     so without fsync.
//   - start-bolt: the same on the bbolt store: the round's one durable
//     transaction (fsync) included.
func BenchmarkRound(b *testing.B) {
	for _, names := range []recipe.Names{
		{Policy: "fifo", Placer: "pack", Scaler: "none"},
		{Policy: "hlas", Placer: "hetero", Scaler: "none"},
		{Policy: "tiresias", Placer: "pack", Scaler: "none"},
		{Policy: "fifo", Placer: "energy", Scaler: "none"},
	} {
		label := names.Policy + "-" + names.Placer
		b.Run(label+"/full", func(b *testing.B) { benchFull(b, names) })
		b.Run(label+"/start-mem", func(b *testing.B) {
			benchStart(b, names, func() store.Store { return store.NewMem(store.MemOptions{}) })
		})
		b.Run(label+"/start-bolt", func(b *testing.B) {
			benchStart(b, names, func() store.Store {
				st, err := store.OpenBolt(settings.StorePath(b.TempDir()), store.BoltOptions{})
				if err != nil {
					b.Fatal(err)
				}
				return st
			})
		})
	}
}

func benchFull(b *testing.B, names recipe.Names) {
	s := benchScheduler(b, store.NewMem(store.MemOptions{}), names)
	fill(b, s, 1000)
	s.round()
	for q := s.queued(); q < 1000; q = s.queued() {
		fill(b, s, 1000-q)
		s.round()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.round()
	}
	b.StopTimer()
	b.ReportMetric(float64(s.queued()), "queued")
}

func benchStart(b *testing.B, names recipe.Names, open func() store.Store) {
	b.ReportAllocs()
	started := 0
	for range b.N {
		b.StopTimer()
		st := open()
		s := benchScheduler(b, st, names)
		fill(b, s, 1000)
		s.mu.Lock()
		s.rebuild()
		s.mu.Unlock()
		runtime.GC() // the setup's garbage is not the round's
		b.StartTimer()
		s.round()
		b.StopTimer()
		started += 1000 - s.queued()
		_ = st.Close()
	}
	b.ReportMetric(float64(started)/float64(b.N), "started")
}
