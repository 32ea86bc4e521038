package nodes

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// Usage is what the views show of a node's use: the GPUs jobs hold there,
// its energy (package energy's view) and its latest power reading (nil:
// none).
type Usage struct {
	Used   int
	Energy *api.NodeEnergy
	Last   *api.PowerReading
}

// ClusterView returns the cluster view of the dashboard: every node of
// list (sorted by name) with its load and latest power reading (usage
// tells them), the GPUs by type, and jobs (the jobs by state).
func ClusterView(list []*Node, usage func(n *Node) Usage, jobs map[api.State]int) api.ClusterView {
	out := api.ClusterView{Nodes: []api.NodeView{}, Types: []api.TypeView{}, Jobs: jobs}
	types := map[string]*api.TypeView{}
	for _, n := range list {
		u := usage(n)
		v := api.NodeView{Node: n.View(u.Used)}
		v.Energy = u.Energy
		if len(n.GPUs) > 0 && n.Ready {
			v.Load = float64(u.Used) / float64(len(n.GPUs))
		}
		if last := u.Last; last != nil && n.Ready {
			w := readingWatts(last)
			at := last.At.UTC()
			v.PowerW, v.PowerAt = &w, &at
			out.PowerW += w
		}
		out.Nodes = append(out.Nodes, v)
		for _, g := range n.GPUs {
			t := types[g.Type]
			if t == nil {
				t = &api.TypeView{Type: g.Type}
				types[g.Type] = t
			}
			t.GPUs++
			if !n.Ready {
				t.Down++
			}
		}
		if t := types[n.Type]; t != nil && n.Ready {
			t.Busy += u.Used
			t.Free += len(n.GPUs) - u.Used
		}
	}
	for _, t := range types {
		out.Types = append(out.Types, *t)
	}
	slices.SortFunc(out.Types, func(a, b api.TypeView) int { return cmp.Compare(a.Type, b.Type) })
	return out
}

// readingWatts is a reading's node draw: the BMC's when it has one, else
// the sum of its GPUs'.
func readingWatts(r *api.PowerReading) float64 {
	if r.NodeW > 0 {
		return r.NodeW
	}
	w := 0.0
	for _, g := range r.GPUs {
		w += g.Watts
	}
	return w
}

// UsedResources returns what jobs hold of node n's resources besides
// GPUs, from used (the model state's use of the node, by resource index
// of cluster c): every resource the node declares (0 when none is held)
// and any other that jobs hold there.
func UsedResources(n *Node, c *model.Cluster, used model.Vec) model.Resources {
	out := model.Resources{}
	for r, v := range used {
		name := c.Resources()[r]
		if _, declared := n.Capacity[name]; declared || v != 0 {
			out[name] = v
		}
	}
	return out
}
