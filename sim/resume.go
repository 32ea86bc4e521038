package sim

import (
	"fmt"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
)

// Start is a state a run resumes from (Config.From) instead of an empty
// cluster and a trace: the live state of a scheduler service, which a
// forecast runs forward (service/forecast).
//
// Jobs are the active jobs at Now; job i has Seq i. A waiting job is
// queued at Now (in the order of its Spec.Submit and Seq, as always); a
// running one holds its Alloc from Now on, with Done of its Work behind it,
// and continues at its workload speed on that allocation without a restart
// pause. Every other field (Queue, Periods, Checkpoint, Preemptions, ...)
// is the policy's history and is kept as it is. A job's record starts at
// its FirstStart: set it to -1 for a waiting job whose next start the
// run should report. The run owns the jobs and changes them.
type Start struct {
	Now  model.Time
	Jobs []*model.Job
}

// adopt takes the jobs of a Start; resume places them when the loop
// begins. A resumed run draws no energy and has no sleeping nodes: the
// time before Now was not simulated.
func (r *run) adopt(from *Start) error {
	if from.Now < 0 || from.Now > model.Horizon {
		return fmt.Errorf("sim: resume at %ss, outside [0, %ss] (model.Horizon)",
			from.Now.SecondsString(), model.Horizon.SecondsString())
	}
	if r.cfg.Energy || r.cfg.Power != nil {
		return fmt.Errorf("sim: a resumed run has no power model (the time before %ss was not simulated)",
			from.Now.SecondsString())
	}
	r.jobs = from.Jobs
	r.recs = make([]metrics.JobRecord, len(r.jobs))
	r.version = make([]int, len(r.jobs))
	for i, j := range r.jobs {
		switch {
		case j.Seq != i:
			return fmt.Errorf("sim: resume: job %s has Seq %d at index %d", j.Spec.ID, j.Seq, i)
		case j.State == model.Running && len(j.Alloc) == 0:
			return fmt.Errorf("sim: resume: running job %s holds no GPU", j.Spec.ID)
		case j.State != model.Running && j.State != model.Waiting:
			return fmt.Errorf("sim: resume: job %s is %s, want waiting or running", j.Spec.ID, j.State)
		case !(j.Work >= 0) || !(j.Done >= 0) || j.Done > j.Work:
			return fmt.Errorf("sim: resume: job %s has done %g of work %g", j.Spec.ID, j.Done, j.Work)
		}
		r.recs[i] = metrics.JobRecord{ID: j.Spec.ID, Submit: j.Spec.Submit, Start: j.FirstStart, Finish: -1}
	}
	r.next = len(r.jobs)
	return nil
}

// resume places the adopted jobs at now, predicts the running ones'
// finishes and runs the first round.
func (r *run) resume(now model.Time) error {
	for _, j := range r.jobs {
		alloc := j.Alloc
		running := j.State == model.Running
		j.Alloc = nil
		r.state.Submit(j)
		if !running {
			continue
		}
		if err := r.state.Start(j, alloc); err != nil {
			return fmt.Errorf("sim: resume: %w", err)
		}
		r.recs[j.Seq].GPUs = len(alloc)
		r.recs[j.Seq].GPUType = r.cfg.Cluster.Types[r.cfg.Cluster.TypeOf(alloc[0])].Name
		r.meter.join(j, now)
		last := j.LastStart // its open period counts from its real start (attained service)
		r.setSpeed(j, now, false)
		j.LastStart = last
		r.emit(eventlog.Event{T: now, Kind: eventlog.Start, Job: j.Spec.ID, Alloc: r.names(alloc)})
	}
	if r.err != nil {
		return r.err
	}
	return r.round(now)
}
