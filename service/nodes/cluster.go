package nodes

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// unknownMemMiB is the memory of a GPU type that is neither in the catalog
// nor reported by any agent: memory is then not checked.
const unknownMemMiB = math.MaxInt32

// Cluster returns the cluster of nodes (sorted by name here) and their
// indices, modelling every resource that a node declares or that is in
// requested; nil when there is no node.
func Cluster(ready []*Node, requested map[string]bool) (*model.Cluster, map[string]int, error) {
	if len(ready) == 0 {
		return nil, nil, nil
	}
	slices.SortFunc(ready, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
	var types []model.GPUType
	typeIdx := map[string]int{}
	idx := make(map[string]int, len(ready))
	nodes := make([]model.Node, len(ready))
	for i, n := range ready {
		t, ok := typeIdx[n.Type]
		if !ok {
			t = len(types)
			typeIdx[n.Type] = t
			types = append(types, GPUType(n.Type, ready))
		}
		nodes[i] = model.Node{Name: n.Name, Type: t, GPUs: len(n.GPUs), Capacity: n.Capacity}
		idx[n.Name] = i
	}
	declareRequested(nodes, requested)
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		return nil, nil, fmt.Errorf("build the cluster: %w", err)
	}
	return c, idx, nil
}

// declareRequested gives the first node a zero capacity of every resource
// in names that no node declares, so that the cluster models it: a job
// that asks for it then waits (no node has any) instead of being placed
// as if it asked for nothing (model.Cluster.Request ignores resources the
// cluster does not model).
func declareRequested(nodes []model.Node, names map[string]bool) {
	for _, n := range nodes {
		for name := range n.Capacity {
			delete(names, name)
		}
	}
	if len(names) == 0 || len(nodes) == 0 {
		return
	}
	capa := maps.Clone(nodes[0].Capacity)
	if capa == nil {
		capa = model.Resources{}
	}
	for name := range names {
		capa[name] = 0
	}
	nodes[0].Capacity = capa
}

// GPUType describes a GPU type: the catalog's entry, or else the smallest
// memory the nodes report and 1 TFLOPS.
func GPUType(name string, nodes []*Node) model.GPUType {
	if t, ok := config.LookupType(name); ok {
		t.Name = name
		return t
	}
	mem := 0
	for _, n := range nodes {
		for _, g := range n.GPUs {
			if n.Type == name && g.MemMiB > 0 && (mem == 0 || g.MemMiB < mem) {
				mem = g.MemMiB
			}
		}
	}
	if mem == 0 {
		mem = unknownMemMiB
	}
	return model.GPUType{Name: name, MemMiB: mem, TFLOPS: 1}
}
