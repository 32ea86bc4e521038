package sim_test

import (
	"os"
	"testing"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/trace"
)

// BenchmarkPhilly replays all 82,247 Philly jobs on 2,500 V100s in 8-GPU
// nodes under strict FIFO (issue: ≤ 5 s wall for the whole command). It
// needs ../shared beside the checkout and is skipped without it.
func BenchmarkPhilly(b *testing.B) {
	benchPhilly(b, sim.Config{})
}

// BenchmarkPhillyEnergy is BenchmarkPhilly with energy accounting at the
// power model's defaults, as `gpusched sim` runs it.
func BenchmarkPhillyEnergy(b *testing.B) {
	benchPhilly(b, sim.Config{Energy: true})
}

// BenchmarkPhillyContention is BenchmarkPhillyEnergy with contention
// (`--contention`): every change of a node's load above the knee gives its
// jobs new rates and new finish events.
func BenchmarkPhillyContention(b *testing.B) {
	benchPhilly(b, sim.Config{Energy: true, Contention: true})
}

// BenchmarkPhillyGittins replays the first 20,000 Philly jobs on
// v100=800,p100=800,k80=800 in 8-GPU nodes with gittins and the hetero
// placer, the recommended policy (issue 29: the whole trace ≤ 2 s), at
// the simulator's defaults (6-minute rounds, 30 s restarts), without energy
// accounting.
func BenchmarkPhillyGittins(b *testing.B) {
	jobs, tab, c := phillyInputs(b, "v100=800,p100=800,k80=800")
	if len(jobs) > 20000 {
		jobs = jobs[:20000]
	}
	cfg := sim.Config{Cluster: c, Workload: tab, Jobs: jobs, RestartOverhead: 30 * model.Second, Round: 6 * model.Minute}
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if cfg.Engine, err = recipe.New(recipe.Names{Policy: "gittins", Placer: "hetero", Scaler: "none"}, recipe.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Rounds), "rounds/op")
	}
}

// phillyInputs reads the Philly trace (skipping the benchmark without it)
// and builds the cluster gpus, 8 GPUs a node, with Gavel's throughputs and
// job types drawn as `gpusched sim` draws them (seed 1).
func phillyInputs(b *testing.B, gpus string) ([]model.JobSpec, *profile.Table, *model.Cluster) {
	jobs, m, tab, c := readPhilly(b, gpus)
	sim.AssignModels(jobs, tab.Models(), 1) // as `gpusched sim --seed 1` draws job types
	m.FillPeakMem(jobs)
	return jobs, tab, c
}

// readPhilly reads the Philly trace (skipping the benchmark without it)
// and Gavel's throughputs, and builds the cluster gpus, 8 GPUs a node, and
// its profile table; the jobs keep the trace's (absent) job types.
func readPhilly(b *testing.B, gpus string) ([]model.JobSpec, *profile.Matrix, *profile.Table, *model.Cluster) {
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
	c, err := config.ParseGPUs(gpus, 8)
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
	return jobs, m, tab, c
}

// benchPhilly replays the Philly trace with cfg's energy settings; the
// cluster's default power model is filled in when cfg asks for energy or
// contention.
func benchPhilly(b *testing.B, cfg sim.Config) {
	jobs, _, tab, c := readPhilly(b, "v100=2500")
	if cfg.Energy || cfg.Contention {
		pw, err := power.DefaultCluster(c)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Power = pw
	}
	cfg.Cluster, cfg.Workload, cfg.Jobs, cfg.RestartOverhead = c, tab, jobs, 30*model.Second
	b.ReportAllocs()
	for b.Loop() {
		cfg.Engine, _ = engine.New(policy.FIFO{}, placer.Pack{}, nil)
		res, err := sim.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Rounds), "rounds/op")
	}
}
