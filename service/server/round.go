package server

import (
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// Reasons shown for queued jobs.
const (
	waitNoNodes   = "no node is registered"
	waitSettling  = "the server restarted: waiting for the nodes of its previous run to register again"
	waitBehind    = "waiting behind jobs ahead in the queue"
	waitBlocked   = "waiting for free GPUs"
	waitHeld      = "placed; waiting for the GPUs of a job whose replicas are being stopped"
	waitNeverFits = "does not fit on the cluster as it is now (GPU count, type or memory); stays queued until a fitting node registers"
)

// schedule runs one scheduling round and records its latency.
func (s *Server) schedule() {
	t0 := time.Now()
	if s.round(s.now()) {
		s.metrics.round.Observe(time.Since(t0).Seconds())
	}
}

// round runs the engine on the current state and applies its plan. It
// reports whether the engine ran.
func (s *Server) round(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirty {
		s.rebuild()
	}
	if s.state == nil {
		s.waitDefault = waitNoNodes
		return false
	}
	if s.settling(now) {
		s.waitDefault = waitSettling
		return false
	}
	t := model.Time(now.UnixMilli())
	plan := s.engine.Schedule(s.state, t)
	s.wake = plan.Wake
	s.apply(plan, now)
	return true
}

// apply applies a plan in the order engine.Plan gives: queue updates, wait
// reasons, stops (preemptions and migrations stop the job and queue it
// again), the resizes that shrink a job, the migrations, the resizes that
// grow one (both live: the job keeps running, Server.resize), then starts;
// all record changes in one durable transaction.
func (s *Server) apply(plan engine.Plan, now time.Time) {
	t := model.Time(now.UnixMilli())
	for _, u := range plan.Updates {
		u.Job.Queue = u.Queue
		if u.Reset {
			u.Job.ResetHistory(t)
		}
	}
	s.noteWaits(plan)
	pol, pla, sca := s.engine.Names()
	b := s.newBatch()
	var undo []func()
	grows := make([]bool, len(plan.Resize)) // decided before any resize changes an allocation
	for i, a := range plan.Resize {
		grows[i] = len(a.GPUs) > len(a.Job.Alloc)
	}
	resize := func(grow bool) {
		for i, a := range plan.Resize {
			if grows[i] == grow {
				if u := s.resize(b, a, sca, now); u != nil {
					undo = append(undo, u)
				}
			}
		}
	}
	for _, mj := range plan.Preempt {
		s.preempt(b, mj, "preempted by the "+pol+" policy", now)
	}
	resize(false)
	for _, a := range plan.Migrate {
		s.preempt(b, a.Job, "moved to other GPUs by the "+pla+" placer (restarts)", now)
	}
	resize(true)
	var started []*model.Job
	for _, a := range plan.Start {
		if s.startOne(b, a, now) {
			started = append(started, a.Job)
		}
	}
	if err := b.run("apply plan"); err != nil {
		for _, mj := range started {
			_ = s.state.Stop(mj) // undo the model's start; the job waits
		}
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// startOne takes an assignment's GPUs in the model and records the start
// in b; it skips the start when the GPUs are still held (by a job whose
// replicas are being stopped).
func (s *Server) startOne(b *batch, a engine.Assignment, now time.Time) bool {
	j := s.active[a.Job.Spec.ID]
	if j == nil || j.rec.State == api.Running {
		return false
	}
	if err := s.state.Start(a.Job, a.GPUs); err != nil {
		s.log.Debug("start deferred", "job", j.rec.ID, "why", err)
		return false
	}
	if err := s.start(b, j, a.GPUs, now); err != nil {
		s.log.Error("cannot start job", "job", j.rec.ID, "err", err)
		_ = s.state.Stop(a.Job)
		return false
	}
	return true
}

// preempt stops a running job that the plan preempts or moves (its
// replicas get SIGTERM and their grace period; it is queued again
// once they are gone); a job already stopping is left alone.
func (s *Server) preempt(b *batch, mj *model.Job, reason string, now time.Time) {
	j := s.active[mj.Spec.ID]
	if j == nil {
		return
	}
	r := b.peek(j)
	if r.State != api.Running || r.Stopping != "" {
		return
	}
	if note := checkpointNote(r, now); note != "" {
		reason += " (" + note + ")"
	}
	s.stopJob(b, j, stopPreempt, reason, now)
}

// noteWaits sets the wait reason of every waiting job from the round's
// trace.
func (s *Server) noteWaits(plan engine.Plan) {
	s.rounds++
	s.waitDefault = waitBehind
	for _, d := range plan.Trace {
		j := s.active[d.Job]
		if j == nil {
			continue
		}
		j.waitRound = s.rounds
		switch d.Status {
		case engine.Placed: // shown only when the start had to wait
			j.waitReason = waitHeld
		case engine.Blocked:
			j.waitReason = waitBlocked
		case engine.Unschedulable:
			j.waitReason = waitNeverFits
		case engine.Paused:
			j.waitReason = "held back by the placer: " + d.Reason
		}
	}
}

// settling reports whether a restarted server still waits for nodes of
// its previous run.
func (s *Server) settling(now time.Time) bool {
	if now.Sub(s.started) >= s.cfg.HeartbeatTimeout {
		return false
	}
	for _, n := range s.nodes {
		if n.pending {
			return true
		}
	}
	return false
}
