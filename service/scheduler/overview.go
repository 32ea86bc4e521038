package scheduler

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/service/api"
)

// Cluster returns the cluster view of the dashboard: every node with its
// load and latest power reading, the GPUs by type and the jobs by state.
func (s *Scheduler) Cluster() api.ClusterView {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := api.ClusterView{Nodes: []api.NodeView{}, Types: []api.TypeView{}, Jobs: map[api.State]int{}}
	for _, st := range api.States() {
		out.Jobs[st] = 0
	}
	for _, j := range s.jobs {
		out.Jobs[s.viewState(j)]++
	}
	types := map[string]*api.TypeView{}
	for _, name := range slicesSortedKeys(s.nodes) {
		n := s.nodes[name]
		used := s.usedGPUs(name)
		v := api.NodeView{Node: n.View(used)}
		v.Energy = s.energy.NodeView(world{s}, name, used)
		if len(n.GPUs) > 0 && n.Ready {
			v.Load = float64(used) / float64(len(n.GPUs))
		}
		if last := s.energy.LastReading(name); last != nil && n.Ready {
			w := readingWatts(last)
			v.PowerW, v.PowerAt = &w, ptr(last.At.UTC())
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
			t.Busy += used
			t.Free += len(n.GPUs) - used
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
