package power

import (
	"fmt"

	"github.com/gpusched/gpusched/core/model"
)

// Cluster is the power description of a model.Cluster: Types[t] is the
// power of one GPU of type t and Nodes[i] the description of node i, in the
// order of the cluster's Types and Nodes.
type Cluster struct {
	Types []GPUPower
	Nodes []NodePower
}

// DefaultCluster returns the defaults for every type and node of c: the
// type's entry of Defaults and DefaultNode. A type without defaults is an
// error.
func DefaultCluster(c *model.Cluster) (*Cluster, error) {
	p := &Cluster{Types: make([]GPUPower, len(c.Types)), Nodes: make([]NodePower, len(c.Nodes))}
	for t, typ := range c.Types {
		g, ok := Lookup(typ.Name)
		if !ok {
			return nil, fmt.Errorf("GPU type %q has no default power figures", typ.Name)
		}
		p.Types[t] = g
	}
	for i := range p.Nodes {
		p.Nodes[i] = DefaultNode()
	}
	return p, nil
}

// Validate checks that p describes c: one entry per type and per node, each
// valid.
func (p *Cluster) Validate(c *model.Cluster) error {
	if len(p.Types) != len(c.Types) || len(p.Nodes) != len(c.Nodes) {
		return fmt.Errorf("power description has %d types and %d nodes, cluster %d and %d", len(p.Types), len(p.Nodes), len(c.Types), len(c.Nodes))
	}
	for t, g := range p.Types {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("GPU type %s: %w", c.Types[t].Name, err)
		}
	}
	for i, n := range p.Nodes {
		if err := n.Validate(); err != nil {
			return fmt.Errorf("node %s: %w", c.Nodes[i].Name, err)
		}
	}
	return nil
}

// NodeWatts returns the draw of node i of c with busy GPUs running at
// utilisation util (see the function NodeWatts).
func (p *Cluster) NodeWatts(c *model.Cluster, i, busy int, util float64) float64 {
	n := c.Nodes[i]
	return NodeWatts(p.Nodes[i], p.Types[n.Type], busy, n.GPUs, util)
}

// NodesMatter reports whether the energy of a run on p can depend on which
// nodes of a GPU type run the jobs, rather than only on how many GPUs of
// each type are busy when: it can when some node sleeps while idle (work
// on few nodes lets the others sleep), or when contention is applied and
// some node slows its jobs down (co-located jobs run longer). Otherwise a
// node's draw is its constant static part (base power and idle GPUs) plus
// a part per busy GPU that depends only on the GPU's type and its job, and
// no job runs faster or slower on one node of a type than on another.
func (p *Cluster) NodesMatter(contention bool) bool {
	for _, n := range p.Nodes {
		if n.Sleeps || (contention && !n.ContentionOff()) {
			return true
		}
	}
	return false
}
