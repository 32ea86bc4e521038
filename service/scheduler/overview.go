package scheduler

import (
	"maps"
	"slices"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
)

// Cluster returns the cluster view of the dashboard: every node with its
// load and latest power reading, the GPUs by type and the jobs by state
// (nodes.ClusterView).
func (s *Scheduler) Cluster() api.ClusterView {
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := map[api.State]int{}
	for _, st := range api.States() {
		jobs[st] = 0
	}
	for _, j := range s.tab.Jobs {
		jobs[s.tab.ViewState(j)]++
	}
	list := make([]*node, 0, len(s.tab.Nodes))
	for _, name := range slices.Sorted(maps.Keys(s.tab.Nodes)) {
		list = append(list, s.tab.Nodes[name])
	}
	return nodes.ClusterView(list, func(n *node) nodes.Usage {
		used := s.tab.UsedGPUs(n.Name)
		return nodes.Usage{Used: used, Energy: s.energy.NodeView(s.world, n.Name, used), Last: s.energy.LastReading(n.Name)}
	}, jobs)
}
