package scheduler

import (
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/queues"
)

// apply carries out a plan through engine.Apply, in the canonical order
// (queue updates, rejections, preemptions, shrinking resizes, migrations,
// growing resizes, starts), with the applier below: every record change
// goes into one batch, written in one durable transaction at the end. If
// that write fails, nothing of the plan reaches memory or an agent, and
// the model's part is undone: the starts are stopped again (the jobs wait)
// and the resizes are reverted, last first. Call it with s.mu held.
func (s *Scheduler) apply(plan engine.Plan, now time.Time) {
	s.noteWaits(plan)
	pol, pla, sca := s.engine.Names()
	a := &applier{s: s, b: s.newBatch(), now: now, policy: pol, placer: pla, scaler: sca}
	for _, d := range plan.Trace {
		if d.Status == engine.Preempted && d.Reason == quota.ReasonReclaim {
			if a.reclaimed == nil {
				a.reclaimed = map[string]bool{}
			}
			a.reclaimed[d.Job] = true
		}
	}
	s.notePauses(plan, a.b, now)
	_ = engine.Apply(plan, a) // the applier's steps never fail: it skips what it cannot do
	if err := a.b.run("apply plan"); err != nil {
		for _, mj := range a.started {
			_ = s.tab.State.Stop(mj) // undo the model's start; the job waits
		}
		for i := len(a.undo) - 1; i >= 0; i-- {
			a.undo[i]()
		}
	}
}

// applier is the service's engine.Applier: it records a round's plan in
// batch b at now. A step it cannot carry out (a start whose GPUs are still
// held, a resize of a job that is stopping) is skipped and left to a later
// round.
type applier struct {
	s   *Scheduler
	b   *batch
	now time.Time
	// policy, placer and scaler are the engine's stage names, for the
	// jobs' histories.
	policy, placer, scaler string
	// started are the model jobs started in the model; undo reverts the
	// model's resizes.
	started []*model.Job
	undo    []func()
	// reclaimed holds the jobs the plan stops to give another queue its
	// guaranteed quota back (quota.ReasonReclaim).
	reclaimed map[string]bool
}

// Update sets a waiting job's queue (and resets its attained service when
// the policy says so).
func (a *applier) Update(u engine.Update) error {
	u.Apply(model.Time(a.now.UnixMilli()))
	return nil
}

// Reject leaves the job queued: a node on which it fits may register
// later. The round's trace (noteWaits) tells the user why it waits.
func (a *applier) Reject(engine.Rejection) error { return nil }

// Preempt stops a running job to queue it again.
func (a *applier) Preempt(mj *model.Job) error {
	why := "preempted by the " + a.policy + " policy"
	if a.reclaimed[mj.Spec.ID] {
		why = "reclaimed: its queue " + queues.Name(mj.Spec.Queue) + " ran beyond its quota and another queue needs its guaranteed GPUs"
	}
	a.s.preempt(a.b, mj, why, a.now)
	return nil
}

// Resize resizes a running elastic job in place (Scheduler.resize).
func (a *applier) Resize(x engine.Assignment) error {
	if u := a.s.resize(a.b, x, a.scaler, a.now); u != nil {
		a.undo = append(a.undo, u)
	}
	return nil
}

// Migrate stops a running job that the placer moves; it restarts on its
// new GPUs as a new attempt once its replicas are gone.
func (a *applier) Migrate(x engine.Assignment) error {
	a.s.preempt(a.b, x.Job, "moved to other GPUs by the "+a.placer+" placer (restarts)", a.now)
	return nil
}

// Start starts a waiting job (startOne).
func (a *applier) Start(x engine.Assignment) error {
	if a.s.startOne(a.b, x, a.now) {
		a.started = append(a.started, x.Job)
	}
	return nil
}

// startOne takes an assignment's GPUs in the model and records the start
// in b; it skips the start when the GPUs are still held (by a job whose
// replicas are being stopped).
func (s *Scheduler) startOne(b *batch, a engine.Assignment, now time.Time) bool {
	j := s.tab.Active[a.Job.Spec.ID]
	if j == nil || j.Rec.State == api.Running {
		return false
	}
	if err := s.tab.State.Start(a.Job, a.GPUs); err != nil {
		s.log.Debug("start deferred", "job", j.Rec.ID, "why", err)
		return false
	}
	if err := s.start(b, j, a.GPUs, now); err != nil {
		s.log.Error("cannot start job", "job", j.Rec.ID, "err", err)
		_ = s.tab.State.Stop(a.Job)
		return false
	}
	return true
}

// preempt stops a running job that the plan preempts or moves (its
// replicas get SIGTERM and their grace period; it is queued again
// once they are gone); a job already stopping is left alone.
func (s *Scheduler) preempt(b *batch, mj *model.Job, reason string, now time.Time) {
	j := s.tab.Active[mj.Spec.ID]
	if j == nil {
		return
	}
	r := b.peek(j)
	if r.State != api.Running || r.Stopping != "" {
		return
	}
	if note := ledger.CheckpointNote(r, now); note != "" {
		reason += " (" + note + ")"
	}
	s.stopJob(b, j, stopPreempt, reason, now)
}
