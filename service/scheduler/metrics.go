package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/metrics"
)

// newMetrics registers the scheduler's Prometheus metrics (package
// metrics) and the live energy's on reg.
func newMetrics(s *Scheduler, reg prometheus.Registerer) (*metrics.Set, error) {
	return metrics.New(reg, s.counts, s.energy.Collector(&s.mu, s.world))
}

// counts returns the scheduler's state as the gauges show it.
func (s *Scheduler) counts() metrics.Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := metrics.Counts{Jobs: map[api.State]int{}, Queues: map[int]int{}, Used: map[string]int{}, Total: map[string]int{},
		Nodes: map[api.NodeState]int{api.NodeReady: 0, api.NodeDown: 0}}
	for _, j := range s.tab.Jobs {
		n.Jobs[s.tab.ViewState(j)]++
		if j.Model != nil && j.Rec.State != api.Running {
			n.Queues[j.Model.Queue]++
		}
	}
	for name, nd := range s.tab.Nodes {
		if !nd.Ready {
			n.Nodes[api.NodeDown]++
			continue
		}
		n.Nodes[api.NodeReady]++
		n.Total[nd.Type] += len(nd.GPUs)
		n.Used[nd.Type] += s.tab.UsedGPUs(name)
	}
	return n
}
