package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/energy"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/logs"
	"github.com/gpusched/gpusched/service/metrics"
	"github.com/gpusched/gpusched/service/nodes"
	"github.com/gpusched/gpusched/service/queues"
)

// The rooms beside the scheduler (the package doc of service/ lists them)
// read and charge its job table (package jobs) through adapters of their
// own, with s.mu held: live energy through energy.Table (s.world),
// forecasts and online learning through learn.Table (s.learner, learn.go),
// the replicas' logs through logs.Table, the gauges through
// metrics.CountsOf, the teams' queues (package queues: the queue of a
// submission, the queues' view, their durable usage s.usage) through
// jobs.Table.Models. This file hands the rooms to the scheduler's callers.

// newWorld returns the job table as live energy reads it.
func (s *Scheduler) newWorld() energy.Table {
	return energy.Table{T: &s.tab, Rate: func(id string) float64 { return s.learner.Rate(id) }, Queue: s.defaultQueue(),
		Power: func(id string, joules float64, d time.Duration, at time.Time) {
			s.learner.ETA.Series.Power(id, joules, d, at)
		}}
}

// Energy returns live energy (package energy's Room: the report, the
// replay's inputs, the calibration, the power samples).
func (s *Scheduler) Energy() *energy.Room { return s.room }

// Forecasts returns the forecasts of the active jobs (package forecast's
// Room: ETA, ETAs).
func (s *Scheduler) Forecasts() *forecast.Room { return s.forecasts }

// Logs returns the replicas' logs (package logs' Room: append a chunk,
// list a job's files, its status, the signal of a change), reading the
// job table (logs.Table) with s.mu held.
func (s *Scheduler) Logs() *logs.Room {
	return logs.NewRoom(s.logs, &s.logSignal, &s.mu, logs.Table{T: &s.tab})
}

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

// checkQueue resolves and checks the queue of a spec (queues.Check).
func (s *Scheduler) checkQueue(spec *api.JobSpec) error {
	return queues.Check(s.quota, s.cfg.Queues, spec)
}

// defaultQueue names the queue of jobs that name none.
func (s *Scheduler) defaultQueue() string { return queues.Default(s.cfg.Queues) }

// QueueSpec returns the teams' queues the scheduler was configured with
// (nil: none).
func (s *Scheduler) QueueSpec() *config.QueuesSpec { return s.cfg.Queues }

// Queues returns every queue with what it holds and waits for, its
// fair-share usage and share (GET /v1/queues); an empty list without
// queues.
func (s *Scheduler) Queues() api.QueueList {
	if s.quota == nil {
		return queues.View(nil, nil, "", nil, nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return queues.View(s.quota, s.cfg.Queues, s.cfg.Options.Queues.Usage.String(), s.tab.Models(), s.tab.Cluster)
}

// saveUsage writes the queues' usage at most every queues.UsageEvery
// (always with force), when there are queues.
func (s *Scheduler) saveUsage(force bool) {
	s.mu.Lock()
	data := s.usage.Due(s.now(), force)
	s.mu.Unlock()
	s.usage.Write(writeCtx(), data)
}
