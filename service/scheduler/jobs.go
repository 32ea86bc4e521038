package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/store"
)

// Submit stores a new job durably, queues it and wakes the scheduling loop;
// the job it returns is durable. An invalid spec (api.JobSpec.Validate) is
// an *api.FieldError and stores nothing. Concurrent submissions share
// store transactions (store.GroupCommit); once started, the write runs to its
// end whatever ctx does: a job in the store is a job the scheduler runs.
func (s *Scheduler) Submit(ctx context.Context, spec api.JobSpec) (api.Job, error) {
	if err := spec.Validate(); err != nil {
		return api.Job{}, err
	}
	if err := s.checkQueue(&spec); err != nil {
		return api.Job{}, err
	}
	reqs, err := spec.Requests()
	if err != nil {
		return api.Job{}, err
	}
	if err := s.checkFits(&spec, reqs); err != nil {
		return api.Job{}, err
	}
	seq := s.nextSeq.Add(1)
	id := "j" + strconv.FormatInt(seq, 10)
	rec := ledger.NewRecord(id, spec, reqs, s.now())
	data, err := ledger.MarshalRecord(&rec)
	if err != nil {
		return api.Job{}, err
	}
	ops := []store.Op{store.IfAbsent(ledger.JobKey(id)), store.OpPut(ledger.JobKey(id), data)}
	if with, ok := ctx.Value(submitOpKey{}).(func(string) (store.Op, error)); ok {
		op, err := with(id)
		if err != nil {
			return api.Job{}, err
		}
		ops = append(ops, op)
	}
	if err := s.commits.Commit(s.store, s.stopped, ops...); err != nil {
		return api.Job{}, fmt.Errorf("store job %s: %w", id, err)
	}
	j := &job{Rec: rec, Seq: int(seq)}
	s.mu.Lock()
	s.addJob(j)
	s.energy.NoteJob(j.Rec.Model, j.Rec.DataEndpoint)
	s.energy.NoteSubmit(s.world, rec.SubmittedAt)
	if s.tab.State != nil {
		s.tab.State.Submit(j.Model)
		if s.tab.Cluster.Unmodelled(&j.Model.Spec) != "" {
			s.dirty = true // model what it asks for before it is placed (declareRequested)
		}
	}
	v := s.tab.View(j, false)
	s.mu.Unlock()
	s.metrics.Submissions.Inc()
	s.notify()
	return v, nil
}

// Jobs returns the jobs in one of states (every job when none is given),
// oldest first, without their events.
func (s *Scheduler) Jobs(states ...api.State) []api.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*job, 0, len(s.tab.Jobs))
	for _, j := range s.tab.Jobs {
		if len(states) == 0 || slices.Contains(states, s.tab.ViewState(j)) {
			list = append(list, j)
		}
	}
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.Seq, b.Seq) })
	out := make([]api.Job, len(list))
	for i, j := range list {
		out[i] = s.tab.View(j, false)
	}
	return out
}

// Job returns job id with its history (events); ErrNotFound.
func (s *Scheduler) Job(id string) (api.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.tab.Jobs[id]
	if j == nil {
		return api.Job{}, noJob(id)
	}
	return s.tab.View(j, true), nil
}

// noJob is the ErrNotFound of job id.
func noJob(id string) error { return api.NotFound("no job %q", id) }

// ended is the ErrConflict of a request about job v that has ended.
func ended(v api.Job) error { return api.Conflict("job %s is already %s", v.ID, v.State) }

// Cancel cancels job id durably and returns it: a queued job at once, a
// running one by stopping its replicas (it stays running, its Reason
// saying that it is being cancelled, until they are gone; then it is
// cancelled). ErrNotFound; ErrConflict for a job that has ended.
func (s *Scheduler) Cancel(id string) (api.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.tab.Jobs[id]
	if j == nil {
		return api.Job{}, noJob(id)
	}
	now := s.now()
	b := s.newBatch()
	switch rec := &j.Rec; {
	case rec.State.Final():
		return api.Job{}, ended(s.tab.View(j, false))
	case rec.State == api.Running && (rec.Stopping == stopCancel || rec.Stopping == stopFail):
		return s.tab.View(j, true), nil
	case rec.State == api.Running:
		s.stopJob(b, j, stopCancel, "cancelled by the user: stopping its replicas", now)
	default:
		nr := b.edit(j)
		nr.State, nr.Reason, nr.FinishedAt = api.Cancelled, "cancelled by the user", ptr(now.UTC())
		nr.Event(now, "cancelled", "cancelled by the user while %s", rec.State)
		b.then(func() { s.release(j, api.Cancelled, 0) })
	}
	if err := b.run("cancel " + id); err != nil {
		return api.Job{}, err
	}
	return s.tab.View(j, true), nil
}

// Hostfile returns the current host list of running job id, one
// "host:slots" line per member replica in node-rank order (what a
// horovodrun --host-discovery-script prints; empty when every replica is
// gone). ErrNotFound; ErrConflict for a job that is not running.
func (s *Scheduler) Hostfile(id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.tab.Jobs[id]
	switch {
	case j == nil:
		return "", noJob(id)
	case j.Rec.State != api.Running:
		return "", api.Conflict("job %s is %s: only a running job has hosts", id, j.Rec.State)
	}
	return j.Rec.Membership().HostList(), nil
}

// submitOpKey is the context key of WithSubmitOp.
type submitOpKey struct{}

// WithSubmitOp returns a context with which Submit writes op(jobID) in the
// same transaction as the new job's record (a transport's audit entry: one
// durable write instead of two).
func WithSubmitOp(ctx context.Context, op func(jobID string) (store.Op, error)) context.Context {
	return context.WithValue(ctx, submitOpKey{}, op)
}
