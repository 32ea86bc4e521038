package sim

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/gpusched/gpusched/engine"
	"github.com/gpusched/gpusched/eventlog"
	"github.com/gpusched/gpusched/metrics"
	"github.com/gpusched/gpusched/model"
)

func (r *run) emit(e eventlog.Event) {
	if r.cfg.Events != nil {
		r.cfg.Events.Emit(e)
	}
}

func (r *run) emitCluster() {
	if r.cfg.Events == nil {
		return
	}
	c := r.cfg.Cluster
	var gpus []eventlog.GPUInfo
	for ni, n := range c.Nodes {
		for i := 0; i < n.GPUs; i++ {
			g := model.GPU{Node: int32(ni), Index: int32(i)}
			gpus = append(gpus, eventlog.GPUInfo{ID: c.GPUName(g), Node: n.Name,
				Type: c.Types[n.Type].Name, MemMiB: c.Types[n.Type].MemMiB})
		}
	}
	var t model.Time
	if len(r.jobs) > 0 {
		t = r.jobs[0].Spec.Submit
	}
	r.emit(eventlog.Event{T: t, Kind: eventlog.Cluster, GPUs: gpus})
}

// applyFinishes ends every running job whose finish falls at t.
func (r *run) applyFinishes(t model.Time) bool {
	changed := false
	for len(r.queue) > 0 && r.queue[0].t <= t {
		e := heap.Pop(&r.queue).(finishEvent)
		if e.version != r.version[e.job] {
			continue
		}
		j := r.jobs[e.job]
		r.holdUntil(j, t)
		j.Done = j.Work
		if err := r.state.End(j, model.Finished); err != nil {
			panic("sim: " + err.Error()) // the queue only holds running jobs
		}
		r.meter.leave(e.job, t)
		r.version[e.job]++
		r.recs[e.job].Finish = t
		r.ended++
		r.emit(eventlog.Event{T: t, Kind: eventlog.Finish, Job: j.Spec.ID})
		changed = true
	}
	return changed
}

// applySubmits queues every trace job submitted at or before t.
func (r *run) applySubmits(t model.Time) bool {
	changed := false
	for ; r.next < len(r.jobs) && r.jobs[r.next].Spec.Submit <= t; r.next++ {
		j := r.jobs[r.next]
		r.state.Submit(j)
		s := &j.Spec
		r.emit(eventlog.Event{T: t, Kind: eventlog.Submit, Job: s.ID, Request: &eventlog.Request{
			GPUs: s.GPUs, MinGPUs: s.MinGPUs, MaxGPUs: s.MaxGPUs, Model: s.Model, Steps: s.Steps,
			Duration: s.Duration, GPUType: s.GPUType, Priority: s.Priority}})
		changed = true
	}
	return changed
}

// round runs the engine at t and applies its plan.
func (r *run) round(t model.Time) error {
	r.rounds++
	if r.cfg.Round > 0 {
		r.nextRnd = t + r.cfg.Round
	}
	plan := r.cfg.Engine.Schedule(r.state, t)
	if plan.Wake >= t && (r.nextRnd < 0 || plan.Wake < r.nextRnd) {
		r.nextRnd = plan.Wake
	}
	for _, u := range plan.Updates {
		u.Job.Queue = u.Queue
		if u.Reset {
			u.Job.ResetHistory(t)
		}
	}
	for _, rej := range plan.Reject {
		if err := r.state.End(rej.Job, model.Rejected); err != nil {
			return fmt.Errorf("sim: apply plan at %ss: %w", t.SecondsString(), err)
		}
		r.recs[rej.Job.Seq].Rejected = true
		r.ended++
		r.emit(eventlog.Event{T: t, Kind: eventlog.Reject, Job: rej.Job.Spec.ID, Reason: rej.Reason})
	}
	for _, j := range plan.Preempt {
		if err := r.preempt(j, t); err != nil {
			return err
		}
	}
	if err := r.resizes(plan.Resize, t, true); err != nil {
		return err
	}
	for _, a := range plan.Migrate {
		if err := r.migrate(a, t); err != nil {
			return err
		}
	}
	if err := r.resizes(plan.Resize, t, false); err != nil {
		return err
	}
	for _, a := range plan.Start {
		if err := r.start(a, t); err != nil {
			return err
		}
	}
	r.notePauses(plan.Paused, t)
	r.roundEnd(t)
	return nil
}

func (r *run) preempt(j *model.Job, t model.Time) error {
	r.holdUntil(j, t)
	j.Done, j.Mark, j.Rate, j.Queued = j.DoneAt(t), t, 0, t
	if err := r.state.Stop(j); err != nil {
		return fmt.Errorf("sim: apply plan at %ss: %w", t.SecondsString(), err)
	}
	r.meter.leave(j.Seq, t)
	j.Preemptions++
	r.recs[j.Seq].Preemptions++
	r.version[j.Seq]++
	r.emit(eventlog.Event{T: t, Kind: eventlog.Preempt, Job: j.Spec.ID})
	return nil
}

func (r *run) start(a engine.Assignment, t model.Time) error {
	j := a.Job
	restart := j.FirstStart >= 0
	if err := r.state.Start(j, a.GPUs); err != nil {
		return fmt.Errorf("sim: apply plan at %ss: %w", t.SecondsString(), err)
	}
	r.meter.join(j, t)
	rec := &r.recs[j.Seq]
	if !restart {
		j.FirstStart = t
		rec.Start, rec.GPUs = t, len(a.GPUs)
		rec.GPUType = r.cfg.Cluster.Types[r.cfg.Cluster.TypeOf(a.GPUs[0])].Name
	}
	r.setSpeed(j, t, restart)
	r.stage(j)
	r.emit(eventlog.Event{T: t, Kind: eventlog.Start, Job: j.Spec.ID, Alloc: r.names(a.GPUs)})
	return nil
}

// migrate moves a running job to new GPUs: in the log a preempt and a start;
// the job pays the restart pause and counts one preemption and migration.
func (r *run) migrate(a engine.Assignment, t model.Time) error {
	if err := r.reallocate(a, t); err != nil {
		return fmt.Errorf("sim: apply plan at %ss: migrate: %w", t.SecondsString(), err)
	}
	j := a.Job
	j.Preemptions++
	r.recs[j.Seq].Preemptions++
	r.recs[j.Seq].Migrations++
	r.emit(eventlog.Event{T: t, Kind: eventlog.Preempt, Job: j.Spec.ID, Reason: "migrate"})
	r.emit(eventlog.Event{T: t, Kind: eventlog.Start, Job: j.Spec.ID, Alloc: r.names(a.GPUs)})
	return nil
}

// resizes applies the resizes that shrink a job (shrink) or those that
// grow it (a resize always changes the size).
func (r *run) resizes(as []engine.Assignment, t model.Time, shrink bool) error {
	for _, a := range as {
		if n, cur := len(a.GPUs), len(a.Job.Alloc); (shrink && n >= cur) || (!shrink && n <= cur) {
			continue
		}
		if err := r.resize(a, t); err != nil {
			return err
		}
	}
	return nil
}

// resize gives a running job a new allocation; it pays the restart pause.
func (r *run) resize(a engine.Assignment, t model.Time) error {
	a.Job.CountResize(t, len(a.GPUs))
	if err := r.reallocate(a, t); err != nil {
		return fmt.Errorf("sim: apply plan at %ss: resize: %w", t.SecondsString(), err)
	}
	j := a.Job
	r.recs[j.Seq].Resizes++
	r.emit(eventlog.Event{T: t, Kind: eventlog.Resize, Job: j.Spec.ID, Alloc: r.names(a.GPUs)})
	return nil
}

// reallocate closes a running job's period, moves it to its new GPUs and
// restarts its progress after the restart pause.
func (r *run) reallocate(a engine.Assignment, t model.Time) error {
	j := a.Job
	if j.State != model.Running {
		return fmt.Errorf("job %s is %s", j.Spec.ID, j.State)
	}
	r.holdUntil(j, t)
	j.Done = j.DoneAt(t)
	if err := r.state.Resize(j, a.GPUs); err != nil {
		return err
	}
	r.meter.move(j, t)
	r.setSpeed(j, t, true)
	return nil
}

// setSpeed sets a job's speed on its (new) allocation from t and predicts its
// finish; pause adds the restart overhead first.
func (r *run) setSpeed(j *model.Job, t model.Time, pause bool) {
	j.Mark, j.Resume, j.LastStart = t, t, t
	if pause {
		j.Resume += r.cfg.RestartOverhead
	}
	j.Rate = r.speed(j) * r.meter.factor(j)
	r.version[j.Seq]++
	left := (j.Work - j.Done) / j.Rate
	finish := j.Resume + model.Time(math.Ceil(max(left, 0)*1000))
	heap.Push(&r.queue, finishEvent{t: finish, job: j.Seq, version: r.version[j.Seq]})
}

// speed is the job's speed on its allocation: that of its slowest GPU type.
func (r *run) speed(j *model.Job) float64 {
	c, n := r.cfg.Cluster, len(j.Alloc)
	v := math.Inf(1)
	seen := engine.TypeSet(0)
	for _, g := range j.Alloc {
		t := c.TypeOf(g)
		if !seen.Has(t) {
			seen |= 1 << uint(t)
			v = min(v, r.cfg.Workload.Speed(j, t, n))
		}
	}
	return v
}

// holdUntil closes j's current execution period at t and adds its GPU time.
func (r *run) holdUntil(j *model.Job, t model.Time) {
	r.recs[j.Seq].GPUTime += j.EndPeriod(t, r.cfg.Cluster)
}

func (r *run) names(gpus []model.GPU) []string {
	if r.cfg.Events == nil {
		return nil
	}
	out := make([]string, len(gpus))
	for i, g := range gpus {
		out[i] = r.cfg.Cluster.GPUName(g)
	}
	return out
}

// sample records busy GPUs, queue length and the cluster's draw at t when
// they changed.
func (r *run) sample(t model.Time) {
	busy := r.cfg.Cluster.TotalGPUs() - r.state.FreeGPUs()
	queued := len(r.state.Waiting())
	watts := r.meter.watts()
	if n := len(r.samples); n > 0 {
		last := r.samples[n-1]
		if last.BusyGPUs == busy && last.Queued == queued && last.PowerW == watts {
			return
		}
		if last.T == t {
			r.samples = r.samples[:n-1]
		}
	}
	r.samples = append(r.samples, metrics.Sample{T: t, BusyGPUs: busy, Queued: queued, PowerW: watts})
}
