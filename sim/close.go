package sim

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// close ends the run at t, the time of its last event: every job that is
// neither finished nor rejected is reported unfinished, with why, in its
// record and in the event log, so that every job of the trace is accounted
// for. A waiting job's reason is the one the engine gives for it in one more
// round at t (which changes nothing: the state is left as it is).
func (r *run) close(t model.Time) error {
	var waiting map[string]string
	if len(r.state.Waiting()) > 0 {
		waiting = map[string]string{}
		for _, d := range r.cfg.Engine.Schedule(r.state, t).Trace {
			if d.Status == engine.Blocked || d.Status == engine.Paused {
				waiting[d.Job] = d.Reason
			}
		}
	}
	for _, j := range r.jobs {
		var why string
		switch j.State {
		case model.Finished, model.Rejected:
			continue
		case model.Running:
			why = r.runningReason(j)
		default:
			why = "waiting: " + waitingReason(j, waiting)
		}
		r.recs[j.Seq].Reason = why
		r.emit(eventlog.Event{T: t, Kind: eventlog.Unfinished, Job: j.Spec.ID, Reason: why})
	}
	return r.err
}

// runningReason says why running job j has no finish within the run.
func (r *run) runningReason(j *model.Job) string {
	if j.Rate <= 0 {
		return "running: makes no progress (contention has stopped it)"
	}
	return "running: would finish after the simulation horizon"
}

// waitingReason is the engine's reason for waiting job j or, when the last
// round did not get to it (a strict queue stops at the first job that does
// not fit), that it waits behind the jobs ahead of it.
func waitingReason(j *model.Job, reasons map[string]string) string {
	if why, ok := reasons[j.Spec.ID]; ok {
		return why
	}
	return "queued behind jobs that cannot start"
}
