package sim_test

import (
	"os"
	"testing"

	"github.com/gpusched/gpusched/assets"
	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/engine"
	"github.com/gpusched/gpusched/placer"
	"github.com/gpusched/gpusched/policy"
	"github.com/gpusched/gpusched/profile"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/trace"
)

// BenchmarkPhilly replays all 82,247 Philly jobs on 2,500 V100s in 8-GPU
// nodes under strict FIFO (issue: ≤ 5 s wall for the whole command). It
// needs ../shared beside the checkout and is skipped without it.
func BenchmarkPhilly(b *testing.B) {
	const path = "../../shared/traces/philly/philly.csv"
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("%s not available: %v", path, err)
	}
	jobs, err := trace.Read(f, path, "philly")
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	c, err := config.ParseGPUs("v100=2500", 8)
	if err != nil {
		b.Fatal(err)
	}
	m, err := profile.ParseMatrix("gavel", assets.Throughputs())
	if err != nil {
		b.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, c.Types[0])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		eng, _ := engine.New(policy.FIFO{}, placer.Pack{}, nil)
		res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, Jobs: jobs, RestartOverhead: 30000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Rounds), "rounds/op")
	}
}
