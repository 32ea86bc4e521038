package model

import (
	"errors"
	"fmt"
	"strconv"
)

// MaxGPUsPerNode is the largest number of GPUs a node may hold; a node's
// free GPUs are kept in one 64-bit mask.
const MaxGPUsPerNode = 64

// GPUType describes one kind of GPU.
type GPUType struct {
	// Name is the lower-case type name used in flags, traces and the
	// throughput matrix, e.g. "v100".
	Name string
	// MemMiB is the memory of one GPU in MiB.
	MemMiB int
	// TFLOPS is the vendor's rated FP32 performance, used to weigh attained
	// service and to scale jobs that have no profile.
	TFLOPS float64
}

// Node is one machine. All GPUs of a node are of one type.
type Node struct {
	// Name identifies the node; GPU ids in plans and logs are "name/index".
	Name string
	// Type indexes Cluster.Types.
	Type int
	// GPUs is the number of GPUs on the node, 1..MaxGPUsPerNode.
	GPUs int
	// Capacity is what the node offers to jobs besides GPUs (allocatable
	// CPU, memory, pods, named resources); nil when only its GPUs are
	// modelled. A resource that another node declares and this one does
	// not is one it has none of.
	Capacity Resources
}

// Equal reports whether n and o describe the same node.
func (n Node) Equal(o Node) bool {
	return n.Name == o.Name && n.Type == o.Type && n.GPUs == o.GPUs && n.Capacity.Equal(o.Capacity)
}

// Cluster is the static description of the machines being scheduled.
// Build one with NewCluster; do not change it afterwards.
type Cluster struct {
	// Types lists the GPU types present, in the order they were declared.
	Types []GPUType
	// Nodes lists the nodes; GPU.Node indexes this slice.
	Nodes []Node

	typeGPUs []int // GPUs per type
	maxNode  []int // largest node per type
	resNames []string
	capacity []int64     // per node, per resource (resNames)
	shapes   []nodeShape // distinct nodes, when resources are modelled
}

// GPU names one GPU: a node index and the GPU's index on that node.
type GPU struct {
	Node  int32
	Index int32
}

// NewCluster validates types and nodes and returns a Cluster.
func NewCluster(types []GPUType, nodes []Node) (*Cluster, error) {
	if len(types) == 0 {
		return nil, errors.New("cluster has no GPU types")
	}
	if len(nodes) == 0 {
		return nil, errors.New("cluster has no nodes")
	}
	seen := make(map[string]bool, len(types))
	for _, t := range types {
		if t.Name == "" {
			return nil, errors.New("GPU type with an empty name")
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("GPU type %q declared twice", t.Name)
		}
		seen[t.Name] = true
		if t.MemMiB <= 0 || t.TFLOPS <= 0 {
			return nil, fmt.Errorf("GPU type %q: memory and TFLOPS must be positive", t.Name)
		}
	}
	c := &Cluster{Types: types, Nodes: nodes, typeGPUs: make([]int, len(types)), maxNode: make([]int, len(types))}
	names := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if n.Name == "" || names[n.Name] {
			return nil, fmt.Errorf("node name %q is empty or used twice", n.Name)
		}
		names[n.Name] = true
		if n.Type < 0 || n.Type >= len(types) {
			return nil, fmt.Errorf("node %s: unknown GPU type index %d", n.Name, n.Type)
		}
		if n.GPUs < 1 || n.GPUs > MaxGPUsPerNode {
			return nil, fmt.Errorf("node %s: %d GPUs, want 1..%d", n.Name, n.GPUs, MaxGPUsPerNode)
		}
		c.typeGPUs[n.Type] += n.GPUs
		c.maxNode[n.Type] = max(c.maxNode[n.Type], n.GPUs)
	}
	if err := c.indexResources(); err != nil {
		return nil, err
	}
	return c, nil
}

// TypeIndex returns the index of the named GPU type, or -1.
func (c *Cluster) TypeIndex(name string) int {
	for i, t := range c.Types {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// TotalGPUs returns the number of GPUs in the cluster.
func (c *Cluster) TotalGPUs() int {
	n := 0
	for _, g := range c.typeGPUs {
		n += g
	}
	return n
}

// TypeGPUs returns the number of GPUs of type t.
func (c *Cluster) TypeGPUs(t int) int { return c.typeGPUs[t] }

// MaxNodeGPUs returns the GPU count of the largest node of type t.
func (c *Cluster) MaxNodeGPUs(t int) int { return c.maxNode[t] }

// GPUName returns the GPU's id as used in plans and logs: "node/index".
func (c *Cluster) GPUName(g GPU) string {
	return c.Nodes[g.Node].Name + "/" + strconv.Itoa(int(g.Index))
}

// TypeOf returns the GPU type index of g.
func (c *Cluster) TypeOf(g GPU) int { return c.Nodes[g.Node].Type }
