package scheduler

import (
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
)

// Cluster returns the cluster view of the dashboard: every node with its
// load and latest power reading, the GPUs by type and the jobs by state
// (nodes.ClusterView).
func (s *Scheduler) Cluster() api.ClusterView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nodes.ClusterView(s.tab.NodeList(), func(n *node) nodes.Usage {
		used := s.tab.UsedGPUs(n.Name)
		return nodes.Usage{Used: used, Energy: s.energy.NodeView(s.world, n.Name, used), Last: s.energy.LastReading(n.Name)}
	}, s.tab.StateCounts())
}
