package scheduler

import "github.com/gpusched/gpusched/service/logs"

// The replicas' logs (package logs' Room) read the jobs and nodes through
// logJobs, with s.mu held.

// Logs returns the replicas' logs (package logs' Room: append a chunk,
// list a job's files, its status, the signal of a change).
func (s *Scheduler) Logs() *logs.Room { return logs.NewRoom(s.logs, &s.logSignal, &s.mu, logJobs{s}) }

// logJobs is the scheduler as package logs sees it.
type logJobs struct{ s *Scheduler }

// NodeKnown implements logs.Jobs.
func (l logJobs) NodeKnown(name string) bool { return l.s.tab.Nodes[name] != nil }

// Job implements logs.Jobs.
func (l logJobs) Job(id string) (attempt int, final, multi, ok bool) {
	j := l.s.tab.Jobs[id]
	if j == nil {
		return 0, false, false, false
	}
	return j.Rec.Attempt, j.Rec.State.Final(), j.Rec.Attempt > 1 || len(j.Rec.Replicas) > 1, true
}
