package scheduler

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
)

// peek returns j's pending record in b, or its committed one.
func (b *batch) peek(j *job) *record {
	if r, ok := b.recs[j]; ok {
		return r
	}
	return &j.Rec
}

// stopJob starts stopping running job j: why is stopCancel, stopPreempt or
// stopFail. Its replicas leave the work after the commit; the job ends when
// all are gone.
func (s *Scheduler) stopJob(b *batch, j *job, why, reason string, now time.Time) {
	rec := b.edit(j)
	rec.Stopping, rec.Reason = why, reason
	rec.Event(now, "stopping", "%s", reason)
	b.then(func() { s.unassign(j) })
	if rec.AllDone() {
		s.finalize(b, j, now)
	}
}

// exit records that replica i of j exited as rs says. A failure stops the
// other replicas and fails the job.
func (s *Scheduler) exit(b *batch, j *job, i int, rs api.ReplicaStatus, now time.Time) {
	rec := b.edit(j)
	rr := &rec.Replicas[i]
	rr.Done, rr.ExitCode = true, rs.ExitCode
	how := rs.Describe()
	rec.Event(now, "replica-exited", "%s on %s %s", rr.ID, rr.Node, how)
	id, nodeName := rr.ID, rr.Node
	b.then(func() { s.forget(nodeName, id) })
	if rr.Left { // stopped by a live resize: its GPUs are free now
		b.then(func() { s.syncAlloc(j) })
		return
	}
	if rec.Stopping != "" || !rs.Failed() {
		return
	}
	code := rs.ExitCode
	if code == 0 {
		code = -1
	}
	rec.ExitCode, rec.FailedAt = ptr(code), ptr(now)
	s.stopJob(b, j, stopFail, fmt.Sprintf("replica %s on node %s %s", id, nodeName, how), now)
}

// gone records that replica i of j no longer runs: it was stopped before
// it started (why says so). Replicas lost with their node go through lose.
func (s *Scheduler) gone(b *batch, j *job, i int, why string, now time.Time) {
	rec := b.edit(j)
	rr := &rec.Replicas[i]
	rr.Done = true
	rec.Event(now, "replica-gone", "%s on %s: %s", rr.ID, rr.Node, why)
	id, nodeName := rr.ID, rr.Node
	b.then(func() { s.forget(nodeName, id) })
	if rr.Left {
		b.then(func() { s.syncAlloc(j) })
		return
	}
	if rec.Stopping == "" {
		s.stopJob(b, j, stopFail, fmt.Sprintf("replica %s: %s", id, why), now)
	}
}

// settle ends every job of the batch that is running and whose replicas
// are all gone.
func (s *Scheduler) settle(b *batch, now time.Time) {
	for _, j := range b.order {
		if r := b.recs[j]; r.State == api.Running && len(r.Replicas) > 0 && r.AllDone() {
			s.finalize(b, j, now)
		}
	}
}

// finalize ends running job j whose replicas are all gone: succeeded,
// failed, cancelled, or preempted (queued again), by why it was stopping.
func (s *Scheduler) finalize(b *batch, j *job, now time.Time) {
	rec := b.edit(j)
	var st api.State
	switch rec.Stopping {
	case "":
		st, rec.ExitCode = api.Succeeded, ptr(0)
	case stopFail:
		st = api.Failed
	case stopCancel:
		st, rec.Reason = api.Cancelled, "cancelled by the user"
	default:
		st = api.Preempted
	}
	nodes.NoteRan(rec, s.tab.Nodes, now)
	s.energy.NoteEnd(s.world, now)
	rec.State, rec.Stopping, rec.Alloc, rec.Replicas, rec.Port = st, "", []string{}, nil, 0
	if st.Final() {
		rec.FinishedAt = ptr(now.UTC())
	}
	rec.Event(now, string(st), "%s", rec.Reason)
	t := model.Time(now.UnixMilli())
	b.then(func() {
		s.release(j, st, t)
		s.learner.Ended(j, st, now)
	})
}

// release updates the model for a job that stopped running or was
// cancelled while queued.
func (s *Scheduler) release(j *job, st api.State, t model.Time) {
	mj := j.Model
	if mj == nil {
		return
	}
	inState := s.tab.State != nil
	if mj.State == model.Running && len(mj.Alloc) > 0 && inState {
		mj.EndPeriod(t, s.tab.Cluster)
	}
	var err error
	switch {
	case st == api.Preempted:
		if inState && mj.State == model.Running {
			err = s.tab.State.Stop(mj)
		}
		mj.Preemptions++
		mj.Queued = t
	case inState && (mj.State == model.Running || mj.State == model.Waiting):
		err = s.tab.State.End(mj, model.Finished)
	}
	if err != nil {
		s.log.Error("model out of step with the job records", "job", j.Rec.ID, "err", err)
	}
	if st.Final() {
		j.Model = nil
		delete(s.tab.Active, j.Rec.ID)
		if j.Rec.DataEndpoint != "" {
			s.energy.NoteEndpointGone()
		}
	}
	s.notify()
}
