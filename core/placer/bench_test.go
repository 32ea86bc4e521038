package placer_test

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
)

// BenchmarkEnergyPlace measures one energy placement on 1,000 nodes of 8
// GPUs of one type (so that the sequence holds every node with a free GPU),
// loaded 0–8 GPUs each (a fixed pattern), with four storage devices at
// per-node latencies: the target is ≤ 1 ms.
func BenchmarkEnergyPlace(b *testing.B) {
	const nodes = 1000
	types := []model.GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}}
	var ns []model.Node
	for i := range nodes {
		ns = append(ns, model.Node{Name: fmt.Sprintf("n%d", i), Type: 0, GPUs: 8})
	}
	c, err := model.NewCluster(types, ns)
	if err != nil {
		b.Fatal(err)
	}
	s := model.NewState(c, flat{})
	for i := range nodes {
		busy := (i * 7) % 9
		if busy == 0 {
			continue
		}
		j := model.NewJob(model.JobSpec{ID: fmt.Sprint(i), GPUs: busy, MinGPUs: busy, MaxGPUs: busy}, i, -1, 1)
		s.Submit(j)
		var gpus []model.GPU
		for g := range busy {
			gpus = append(gpus, model.GPU{Node: int32(i), Index: int32(g)})
		}
		if err := s.Start(j, gpus); err != nil {
			b.Fatal(err)
		}
	}
	var storage []network.Storage
	for k := range 4 {
		storage = append(storage, network.Storage{Name: fmt.Sprintf("s%d", k),
			Interfaces: []network.Interface{{Name: "eth0", BandwidthGbps: 10, LatencyMs: float64(k + 1), Quality: 1}}})
	}
	links := make([][]network.Link, nodes)
	for i := range links {
		for k := range storage {
			links[i] = append(links[i], network.Link{LatencyMs: float64((i*31+k*17)%97) / 100, BandwidthGbps: 10})
		}
	}
	net, err := network.New(storage, links, nil)
	if err != nil {
		b.Fatal(err)
	}
	table := &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: make([]int, nodes),
		Th: [][]placer.LoadThresholds{{{Th1: 0.45, Th2: 0.8}}}}
	e, err := placer.NewEnergy(c, table, net)
	if err != nil {
		b.Fatal(err)
	}
	p := engine.NewPool(c)
	p.Reset(s)
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("gpus=%d", n), func(b *testing.B) {
			j := model.NewJob(model.JobSpec{ID: "new", GPUs: n, MinGPUs: n, MaxGPUs: n}, nodes, -1, 1)
			var got int
			for b.Loop() {
				got = len(e.Place(s, p, j, n, 1).GPUs)
			}
			if got != n {
				b.Fatalf("placed %d GPUs, want %d", got, n)
			}
		})
	}
}
