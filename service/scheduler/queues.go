package scheduler

import (
	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/queues"
)

// The teams' queues (package queues): the queue of a submission, the
// queues' view and their durable usage (s.usage).

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
