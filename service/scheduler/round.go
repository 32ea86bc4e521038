package scheduler

import (
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Reasons shown for queued jobs.
const (
	waitNoNodes   = engine.WaitNoNodes
	waitSettling  = "the server restarted: waiting for the nodes of its previous run to register again"
	waitBehind    = engine.WaitBehind
	waitBlocked   = engine.WaitBlocked
	waitHeld      = engine.WaitHeld
	waitNeverFits = engine.WaitNeverFits
)

// schedule runs one scheduling round and records its latency.
func (s *Scheduler) schedule() {
	t0 := time.Now()
	if s.round() {
		s.metrics.Round.Observe(time.Since(t0).Seconds())
	}
}

// round runs the engine on the current state and applies its plan. It
// reports whether the engine ran. It reads the clock once it holds the
// lock: a time read before could be older than an event applied while it
// waited for the lock (a job's exit), and the round would then apply its
// plan (the starts on the freed GPUs) before that event.
func (s *Scheduler) round() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.energy.Integrate(s.world, now) // before the busy counts change
	if s.dirty {
		s.rebuild()
	}
	s.energy.Refresh(s.world)
	if s.tab.State == nil {
		s.tab.WaitDefault = waitNoNodes
		return false
	}
	if s.settling(now) {
		s.tab.WaitDefault = waitSettling
		return false
	}
	t := model.Time(now.UnixMilli())
	plan := s.engine.Schedule(s.tab.State, t)
	s.wake = plan.Wake
	s.apply(plan, now)
	return true
}

// noteWaits sets the wait reason of every waiting job from the round's
// trace.
func (s *Scheduler) noteWaits(plan engine.Plan) {
	s.tab.Rounds++
	s.tab.WaitDefault = waitBehind
	for _, d := range plan.Trace {
		j := s.tab.Active[d.Job]
		if j == nil {
			continue
		}
		j.WaitRound = s.tab.Rounds
		switch d.Status {
		case engine.Placed: // shown only when the start had to wait
			j.WaitReason = waitHeld
		case engine.Unschedulable:
			j.WaitReason = waitNeverFits
			if strings.HasPrefix(d.Reason, "its queue") {
				j.WaitReason = d.Reason + "; stays queued" // the queue layer's limit
			} else if d.Reason != "" {
				j.WaitReason += ": " + d.Reason // which GPU type lacks what (engine.Unfit)
			}
		default: // the words of every shell (Blocked, Paused); none for the others
			if why, ok := engine.WaitReason(d); ok {
				j.WaitReason = why
			}
		}
		if ep := j.Rec.DataEndpoint; ep != "" && d.Status != engine.Placed {
			if why := s.energy.UnreachableReason(s.world, ep); why != "" {
				j.WaitReason = why
			}
		}
	}
}

// settling reports whether a restarted server still waits for nodes of
// its previous run.
func (s *Scheduler) settling(now time.Time) bool {
	if now.Sub(s.started) >= s.cfg.HeartbeatTimeout {
		return false
	}
	for _, n := range s.tab.Nodes {
		if n.Pending {
			return true
		}
	}
	return false
}
