package scheduler

import "github.com/gpusched/gpusched/service/logs"

// Logs returns the replicas' logs (package logs' Room: append a chunk,
// list a job's files, its status, the signal of a change), reading the
// job table (logs.Table) with s.mu held.
func (s *Scheduler) Logs() *logs.Room {
	return logs.NewRoom(s.logs, &s.logSignal, &s.mu, logs.Table{T: &s.tab})
}
