package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// MaxClusterGPUs is the largest number of GPUs a cluster built by this
// package may hold. It keeps a typo such as "v100=80000000" from exhausting
// memory; real clusters are far smaller.
const MaxClusterGPUs = 1 << 20

// ParseGPUs builds a cluster from the --gpus flag, a comma-separated list of
// TYPE=N items such as "v100=8,p100=8,k80=8", where TYPE is a catalog name
// (any case) and N a positive GPU count. For each type, in the order given,
// it makes ceil(N/perNode) nodes: each holds perNode GPUs except the type's
// last, which holds the remainder. Nodes are named n0, n1, ... across all
// types. perNode (the --gpus-per-node flag) must be 1..model.MaxGPUsPerNode.
// Errors name the offending item.
func ParseGPUs(spec string, perNode int) (*model.Cluster, error) {
	if perNode < 1 || perNode > model.MaxGPUsPerNode {
		return nil, fmt.Errorf("--gpus-per-node: %d: must be 1..%d", perNode, model.MaxGPUsPerNode)
	}
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New(`--gpus: empty; want TYPE=N,..., e.g. "v100=8,p100=8"`)
	}
	var (
		types []model.GPUType
		nodes []model.Node
		total int
	)
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("--gpus: %q: empty item (stray comma?)", spec)
		}
		t, n, err := ParseGPUItem(item)
		if err != nil {
			return nil, fmt.Errorf("--gpus: %q: %w", item, err)
		}
		for _, prev := range types {
			if prev.Name == t.Name {
				return nil, fmt.Errorf("--gpus: %q: type %s given twice", item, t.Name)
			}
		}
		if n > MaxClusterGPUs-total {
			return nil, fmt.Errorf("--gpus: %q: cluster would have more than %d GPUs", item, MaxClusterGPUs)
		}
		total += n
		nodes = appendNodes(nodes, len(types), n, perNode)
		types = append(types, t)
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		return nil, fmt.Errorf("--gpus: %w", err)
	}
	return c, nil
}

// ParseGPUItem parses one TYPE=N item of a --gpus flag (the simulator's
// cluster, an agent's GPUs): a catalog type (any case) and a positive count.
func ParseGPUItem(item string) (model.GPUType, int, error) {
	name, count, ok := strings.Cut(item, "=")
	if !ok {
		return model.GPUType{}, 0, errors.New("want TYPE=N, e.g. v100=8")
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return model.GPUType{}, 0, errors.New("missing GPU type before '='")
	}
	t, ok := LookupType(name)
	if !ok {
		return model.GPUType{}, 0, fmt.Errorf("unknown GPU type %q (known: %s)", name, typeNames(Catalog()))
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n <= 0 {
		return model.GPUType{}, 0, errors.New("count must be a positive integer")
	}
	return t, n, nil
}

// appendNodes appends ceil(n/perNode) nodes of type index typ holding n GPUs
// in all, named n<k> where k continues from len(nodes).
func appendNodes(nodes []model.Node, typ, n, perNode int) []model.Node {
	for n > 0 {
		g := min(n, perNode)
		nodes = append(nodes, model.Node{Name: "n" + strconv.Itoa(len(nodes)), Type: typ, GPUs: g})
		n -= g
	}
	return nodes
}
