package scheduler

import (
	"fmt"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/logs"
)

// LogFile is one replica's log (logs.File).
type LogFile = logs.File

// AppendLog stores a chunk of a replica's output that node name uploads
// and returns the log's length (logs.Store.Append: a chunk resent or
// overlapping what is there appends only what is new, one beyond the end
// is dropped). The chunk must name a replica of its job and a
// non-negative offset (an *api.FieldError otherwise); ErrNotRegistered
// for a node the scheduler does not know; ErrNotFound for a replica of an
// unknown job or of an attempt that has not started.
func (s *Scheduler) AppendLog(name string, c api.LogChunk) (api.LogAck, error) {
	job, attempt, _, ok := api.ParseReplicaID(c.Replica)
	if !ok || job != c.Job {
		return api.LogAck{}, &api.FieldError{Field: "replica",
			Message: fmt.Sprintf("replica %q is not a replica ID of job %q", c.Replica, c.Job)}
	}
	if c.Offset < 0 {
		return api.LogAck{}, &api.FieldError{Field: "offset", Message: fmt.Sprintf("offset %d is negative", c.Offset)}
	}
	s.mu.Lock()
	known, j := s.nodes[name] != nil, s.jobs[job]
	ok = j != nil && attempt <= j.rec.Attempt
	s.mu.Unlock()
	switch {
	case !known:
		return api.LogAck{}, api.NotRegistered(name)
	case !ok:
		return api.LogAck{}, api.NotFound("no replica %q", c.Replica)
	}
	n, err := s.logs.Append(job, c.Replica, c.Offset, c.Data)
	if err != nil {
		return api.LogAck{}, err
	}
	s.logSignal.Fire()
	return api.LogAck{Length: n}, nil
}

// LogFiles lists the replica logs of job id, in order of attempt and node
// rank (none yet: an empty list).
func (s *Scheduler) LogFiles(id string) ([]LogFile, error) { return s.logs.Files(id) }

// LogStatus says whether job id has ended and whether it has had more than
// one replica (over all its attempts); ErrNotFound.
func (s *Scheduler) LogStatus(id string) (final, multi bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return false, false, noJob(id)
	}
	return j.rec.State.Final(), j.rec.Attempt > 1 || len(j.rec.Replicas) > 1, nil
}

// LogsChanged returns a channel closed the next time a log grows or a job
// changes state (what a log follower waits for).
func (s *Scheduler) LogsChanged() <-chan struct{} { return s.logSignal.Wait() }
