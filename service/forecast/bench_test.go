package forecast

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
)

// bigSnapshot is 1,000 running one-GPU jobs on 125 nodes of 8 V100s and
// 1,000 waiting ones, lengths of every kind mixed.
func bigSnapshot(b *testing.B) *Snapshot {
	v100, _ := config.LookupType("v100")
	nodes := make([]model.Node, 125)
	for i := range nodes {
		nodes[i] = model.Node{Name: fmt.Sprintf("n%03d", i), Type: 0, GPUs: 8}
	}
	c, err := model.NewCluster([]model.GPUType{v100}, nodes)
	if err != nil {
		b.Fatal(err)
	}
	m, err := profile.ParseMatrix("embedded", assets.Throughputs())
	if err != nil {
		b.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, v100)
	if err != nil {
		b.Fatal(err)
	}
	now := model.FromSeconds(1e6)
	s := &Snapshot{Now: now, Cluster: c, Table: tab, Names: recipe.Defaults(), Options: recipe.DefaultOptions()}
	mi := tab.ModelIndex("ResNet-50 (batch size 64)")
	for i := range 2000 {
		j := model.NewJob(model.JobSpec{ID: fmt.Sprintf("j%d", i), Submit: model.Time(i), GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, i, mi, 0)
		l := Length{Kind: KindTimeLimit, Remaining: time.Duration(600+(i*37)%3000) * time.Second}
		if i%3 == 1 {
			l = Length{Kind: KindSteps, Speed: SpeedMatrix, Steps: float64(1000 + i)}
		}
		job := Job{Job: j, Length: l}
		if i < 1000 {
			j.State, j.Alloc = model.Running, []model.GPU{{Node: int32(i / 8), Index: int32(i % 8)}}
			j.FirstStart, j.LastStart = now-1000, now-1000
			job.Started = j.LastStart
			job.Length = Length{Kind: KindTimeLimit, Remaining: time.Duration(60+(i*53)%3000) * time.Second}
		}
		s.Jobs = append(s.Jobs, job)
	}
	return s
}

// BenchmarkRun is one forecast of 1,000 running and 1,000 waiting jobs on
// 1,000 GPUs: 21 simulations.
func BenchmarkRun(b *testing.B) {
	s := bigSnapshot(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Run(s, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
