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
	for _, j := range s.jobs {
		jobs[s.viewState(j)]++
	}
	list := make([]*node, 0, len(s.nodes))
	for _, name := range slices.Sorted(maps.Keys(s.nodes)) {
		list = append(list, s.nodes[name])
	}
	return nodes.ClusterView(list, func(n *node) nodes.Usage {
		used := s.usedGPUs(n.Name)
		return nodes.Usage{Used: used, Energy: s.energy.NodeView(world{s}, n.Name, used), Last: s.energy.LastReading(n.Name)}
	}, jobs)
}
