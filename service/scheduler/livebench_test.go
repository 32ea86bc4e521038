package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// BenchmarkRefreshEnergy measures rebuilding the energy placer's inputs —
// the table of 1,000 nodes in 4 classes and the network of their measured
// distances to 10 data endpoints — as the service does when a learned fit
// or a measured distance changes.
func BenchmarkRefreshEnergy(b *testing.B) {
	s, err := New(settings.Config{Store: store.NewMem(store.MemOptions{}), DataDir: b.TempDir(), Names: recipe.Names{Policy: "fifo", Placer: "energy", Scaler: "none"}})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for i := range 1000 {
		reg := api.Register{Name: fmt.Sprintf("n%04d", i), Addr: "10.0.0.1"}
		for g := range 8 << (i % 2) {
			reg.GPUs = append(reg.GPUs, api.GPU{Index: g, Type: []string{"v100", "a100"}[i/2%2]})
		}
		gpus, _, ferr := reg.Check()
		if ferr != nil {
			b.Fatal(ferr)
		}
		if err := s.register(&reg, gpus, nil); err != nil {
			b.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuild()
	for e := range 10 {
		ep := fmt.Sprintf("nas%d:2049", e)
		j := &job{Rec: ledger.NewRecord(fmt.Sprintf("j%d", e+1), api.JobSpec{Command: []string{"x"}, GPUs: 1, DataEndpoint: ep}, nil, now), Seq: e + 1}
		s.addJob(j)
		s.energy.NoteJob(j.Rec.Model, j.Rec.DataEndpoint)
		for i := range 1000 {
			s.energy.Probes(s.world, fmt.Sprintf("n%04d", i), []api.ProbeResult{{Endpoint: ep, At: now, RTTMs: float64(i%7) + 0.1}})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.energy.Invalidate()
		s.energy.Refresh(s.world)
	}
}
