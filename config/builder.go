package config

import (
	"maps"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// clusterBuilder accumulates the types and nodes of a cluster file's node
// entries, checking each entry.
type clusterBuilder struct {
	file      string                   // file name, for messages
	known     map[string]model.GPUType // catalog plus the file's gpu_types
	types     []model.GPUType          // types in first-use order
	typeIndex map[string]int           // type name to index in types
	nodes     []model.Node
	nodeEntry map[string]int    // node name to the nodes[] entry that made it
	total     int               // GPUs so far
	caps      []model.Resources // per nodes entry, its nodes' capacity
}

// add checks node entry i and appends its nodes.
func (b *clusterBuilder) add(i int, n NodeSpec) error {
	field := "nodes[" + strconv.Itoa(i) + "]"
	if msg := checkNodeName(n.Name); msg != "" {
		return fieldError(b.file, field+".name", "%s", msg)
	}
	typ, err := b.typeOf(field, n.GPUType)
	if err != nil {
		return err
	}
	if n.GPUs < 1 || n.GPUs > model.MaxGPUsPerNode {
		return fieldError(b.file, field+".gpus", "must be 1..%d, got %d", model.MaxGPUsPerNode, n.GPUs)
	}
	count := 1
	if n.Count != nil {
		count = *n.Count
		if count < 1 {
			return fieldError(b.file, field+".count", "must be at least 1, got %d", count)
		}
	}
	if count > (MaxClusterGPUs-b.total)/n.GPUs {
		return fieldError(b.file, field+".count", "cluster would have more than %d GPUs", MaxClusterGPUs)
	}
	b.total += count * n.GPUs
	capa, serr := n.capacity()
	if serr != nil {
		return fieldError(b.file, field+serr.field, "%s", serr.msg)
	}
	b.caps = append(b.caps, capa)
	for k := range count {
		name := n.Name
		if count > 1 {
			name += "-" + strconv.Itoa(k)
		}
		if j, dup := b.nodeEntry[name]; dup {
			return fieldError(b.file, field+".name", "node %q already defined by nodes[%d]", name, j)
		}
		b.nodeEntry[name] = i
		b.nodes = append(b.nodes, model.Node{Name: name, Type: typ, GPUs: n.GPUs, Capacity: maps.Clone(capa)})
	}
	return nil
}

// typeOf returns the index in b.types of the named GPU type, adding the type
// on first use.
func (b *clusterBuilder) typeOf(field, name string) (int, error) {
	name = strings.ToLower(name)
	if i, ok := b.typeIndex[name]; ok {
		return i, nil
	}
	if name == "" {
		return 0, fieldError(b.file, field+".gpu_type", "required")
	}
	t, ok := b.known[name]
	if !ok {
		known := make([]model.GPUType, 0, len(b.known))
		for _, t := range b.known {
			known = append(known, t)
		}
		return 0, fieldError(b.file, field+".gpu_type", "unknown GPU type %q; declare it under gpu_types or use one of: %s", name, typeNames(known))
	}
	b.typeIndex[name] = len(b.types)
	b.types = append(b.types, t)
	return len(b.types) - 1, nil
}
