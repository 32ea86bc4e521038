package logs

import (
	"fmt"
	"sync"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
)

// Jobs is what a Room reads of its shell, called with the shell's lock
// held: whether node name is registered, and job id's latest attempt,
// whether it has ended and whether it has had more than one replica (over
// all its attempts); false for an unknown job.
type Jobs interface {
	NodeKnown(name string) bool
	Job(id string) (attempt int, final, multi, ok bool)
}

// Room is the replicas' logs as a shell's callers reach them: the Store,
// the Signal that fires when a log grows or a job changes state, and the
// shell's jobs under its lock. Package scheduler's Scheduler.Logs returns
// it; its methods are safe for concurrent use.
type Room struct {
	store  *Store
	signal *Signal
	mu     sync.Locker
	jobs   Jobs
}

// NewRoom returns the room of store and signal, reading jobs with mu held.
func NewRoom(store *Store, signal *Signal, mu sync.Locker, jobs Jobs) *Room {
	return &Room{store: store, signal: signal, mu: mu, jobs: jobs}
}

// Append stores a chunk of a replica's output that node name uploads and
// returns the log's length (Store.Append: a chunk resent or overlapping
// what is there appends only what is new, one beyond the end is dropped).
// The chunk must name a replica of its job and a non-negative offset (an
// *api.FieldError otherwise); api.ErrNotRegistered for a node the shell
// does not know; api.ErrNotFound for a replica of an unknown job or of an
// attempt that has not started.
func (r *Room) Append(name string, c api.LogChunk) (api.LogAck, error) {
	job, attempt, _, ok := api.ParseReplicaID(c.Replica)
	if !ok || job != c.Job {
		return api.LogAck{}, &api.FieldError{Field: "replica",
			Message: fmt.Sprintf("replica %q is not a replica ID of job %q", c.Replica, c.Job)}
	}
	if c.Offset < 0 {
		return api.LogAck{}, &api.FieldError{Field: "offset", Message: fmt.Sprintf("offset %d is negative", c.Offset)}
	}
	r.mu.Lock()
	known := r.jobs.NodeKnown(name)
	latest, _, _, found := r.jobs.Job(job)
	ok = found && attempt <= latest
	r.mu.Unlock()
	switch {
	case !known:
		return api.LogAck{}, api.NotRegistered(name)
	case !ok:
		return api.LogAck{}, api.NotFound("no replica %q", c.Replica)
	}
	n, err := r.store.Append(job, c.Replica, c.Offset, c.Data)
	if err != nil {
		return api.LogAck{}, err
	}
	r.signal.Fire()
	return api.LogAck{Length: n}, nil
}

// Files lists the replica logs of job id, in order of attempt and node
// rank (none yet: an empty list).
func (r *Room) Files(id string) ([]File, error) { return r.store.Files(id) }

// Status says whether job id has ended and whether it has had more than
// one replica (over all its attempts); api.ErrNotFound.
func (r *Room) Status(id string) (final, multi bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, final, multi, ok := r.jobs.Job(id)
	if !ok {
		return false, false, api.NotFound("no job %q", id)
	}
	return final, multi, nil
}

// Changed returns a channel closed the next time a log grows or a job
// changes state (what a log follower waits for).
func (r *Room) Changed() <-chan struct{} { return r.signal.Wait() }

// Table is the service's Jobs: the scheduler's job table (package jobs),
// read with the scheduler's lock held.
type Table struct{ T *jobs.Table }

// NodeKnown implements Jobs.
func (t Table) NodeKnown(name string) bool { return t.T.Nodes[name] != nil }

// Job implements Jobs.
func (t Table) Job(id string) (attempt int, final, multi, ok bool) {
	j := t.T.Jobs[id]
	if j == nil {
		return 0, false, false, false
	}
	return j.Rec.Attempt, j.Rec.State.Final(), j.Rec.Attempt > 1 || len(j.Rec.Replicas) > 1, true
}
