package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/service/metrics"
)

// newMetrics registers the scheduler's Prometheus metrics (package
// metrics: its gauges count the job table under s.mu) and the live
// energy's on reg.
func newMetrics(s *Scheduler, reg prometheus.Registerer) (*metrics.Set, error) {
	return metrics.New(reg, func() metrics.Counts {
		s.mu.Lock()
		defer s.mu.Unlock()
		return metrics.CountsOf(&s.tab)
	}, s.energy.Collector(&s.mu, s.world))
}
