package sim

import (
	"container/heap"
	"fmt"
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
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
	switch {
	case r.cfg.From != nil:
		t = r.cfg.From.Now
	case len(r.jobs) > 0:
		t = r.jobs[0].Spec.Submit
	}
	r.emit(eventlog.Event{T: t, Kind: eventlog.Cluster, GPUs: gpus, Nodes: nodeInfos(c)})
}

// nodeInfos lists every node's capacity of the resources besides GPUs that
// c models, for the cluster event; nil when it models none.
func nodeInfos(c *model.Cluster) []eventlog.NodeInfo {
	if !c.Vectored() {
		return nil
	}
	names := c.Resources()
	out := make([]eventlog.NodeInfo, len(c.Nodes))
	for ni, n := range c.Nodes {
		capa := make(map[string]int64, len(names))
		for r, v := range c.Capacity(ni) {
			capa[names[r]] = v
		}
		out[ni] = eventlog.NodeInfo{Node: n.Name, Capacity: capa}
	}
	return out
}

// replicaGPUs is s's replica size for the submit event where c models
// other resources (it matters there only), else 0: a GPU-only log stays
// as it was.
func replicaGPUs(c *model.Cluster, s *model.JobSpec) int {
	if !c.Vectored() {
		return 0
	}
	return s.ReplicaGPUs
}

// requestOf is what one replica of j asks of c's resources besides GPUs,
// by name, as the engine books it (Cluster.Request); nil when nothing.
func requestOf(c *model.Cluster, s *model.JobSpec) map[string]int64 {
	v := c.Request(s)
	if v == nil {
		return nil
	}
	names, out := c.Resources(), map[string]int64{}
	for r, q := range v {
		if q != 0 {
			out[names[r]] = q
		}
	}
	return out
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
		r.fair.hold(r, j)
		r.meter.leave(e.job, t)
		r.forget(e.job)
		r.version[e.job]++
		r.recs[e.job].Finish = t
		r.ended++
		r.emit(eventlog.Event{T: t, Kind: eventlog.Finish, Job: j.Spec.ID})
		changed = true
	}
	return changed
}

// applySubmits queues every trace job submitted at or before t; a job that
// could not finish within model.Horizon even at its best speed is rejected
// at once (tooLong).
func (r *run) applySubmits(t model.Time) bool {
	changed := false
	first := r.next
	defer func() { r.meter.submitted(t, r.next-first) }()
	for ; r.next < len(r.jobs) && r.jobs[r.next].Spec.Submit <= t; r.next++ {
		j := r.jobs[r.next]
		r.state.Submit(j)
		r.fair.wait(j, 1)
		s := &j.Spec
		r.emit(eventlog.Event{T: t, Kind: eventlog.Submit, Job: s.ID, Request: &eventlog.Request{
			GPUs: s.GPUs, MinGPUs: s.MinGPUs, MaxGPUs: s.MaxGPUs, Model: s.Model, Steps: s.Steps,
			Duration: s.Duration, GPUType: s.GPUType, Priority: s.Priority,
			ReplicaGPUs: replicaGPUs(r.cfg.Cluster, s), Requests: requestOf(r.cfg.Cluster, s)}})
		if why := r.tooLong(j, t); why != "" {
			if err := r.reject(j, why, t); err != nil {
				r.fail(err)
			}
			continue
		}
		changed = true
	}
	return changed
}

// tooLong says why waiting job j, submitted at t, could not finish within
// model.Horizon even on its fastest feasible GPU type at its minimum,
// requested or maximum size (contention only slows a job down); "" when it
// could, or when no type can run it at all (the engine rejects it then).
func (r *run) tooLong(j *model.Job, t model.Time) string {
	best := 0.0
	sizes := [...]int{j.Spec.MinGPUs, j.Spec.GPUs, j.Spec.MaxGPUs}
	for i, n := range sizes {
		if slices.Contains(sizes[:i], n) {
			continue // a rigid job's three sizes are one
		}
		v, _ := engine.BestSpeed(r.state, j, n, engine.Feasible(r.state, j, n))
		best = max(best, v)
	}
	if best <= 0 {
		return ""
	}
	if d, ok := model.WorkTime(j.Work, best); ok && d <= model.Horizon-t {
		return ""
	}
	return fmt.Sprintf("it would run past the simulation horizon (%.0f years after the start) even at its best speed",
		model.Horizon.Seconds()/secondsPerYear)
}

// secondsPerYear is a year of 365.25 days.
const secondsPerYear = 365.25 * 24 * 3600

// reject ends waiting job j at t as one that can never run here, for why.
func (r *run) reject(j *model.Job, why string, t model.Time) error {
	if err := r.state.End(j, model.Rejected); err != nil {
		return fmt.Errorf("sim: reject at %ss: %w", t.SecondsString(), err)
	}
	r.fair.wait(j, -1)
	rec := &r.recs[j.Seq]
	rec.Rejected, rec.Reason = true, why
	r.ended++
	r.emit(eventlog.Event{T: t, Kind: eventlog.Reject, Job: j.Spec.ID, Reason: why})
	return nil
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
	r.reclaimed = r.fair.noteReclaims(plan)
	if err := engine.Apply(plan, applier{r, t}); err != nil {
		return fmt.Errorf("sim: apply plan at %ss: %w", t.SecondsString(), err)
	}
	r.notePauses(plan.Paused, t)
	r.roundEnd(t)
	return nil
}

// applier carries a round's plan out on the run at t (engine.Apply calls
// it in the canonical order).
type applier struct {
	r *run
	t model.Time
}

func (a applier) Update(u engine.Update) error {
	u.Apply(a.t)
	return nil
}
func (a applier) Reject(x engine.Rejection) error   { return a.r.reject(x.Job, x.Reason, a.t) }
func (a applier) Preempt(j *model.Job) error        { return a.r.preempt(j, a.t) }
func (a applier) Resize(x engine.Assignment) error  { return a.r.resize(x, a.t) }
func (a applier) Migrate(x engine.Assignment) error { return a.r.migrate(x, a.t) }
func (a applier) Start(x engine.Assignment) error   { return a.r.start(x, a.t) }

func (r *run) preempt(j *model.Job, t model.Time) error {
	r.holdUntil(j, t)
	j.Done, j.Mark, j.Rate, j.Queued = j.DoneAt(t), t, 0, t
	if err := r.state.Stop(j); err != nil {
		return err
	}
	r.fair.hold(r, j)
	r.fair.wait(j, 1)
	r.meter.leave(j.Seq, t)
	r.forget(j.Seq)
	j.Preemptions++
	r.recs[j.Seq].Preemptions++
	if r.reclaimed[j.Spec.ID] {
		r.recs[j.Seq].Reclaimed++
	}
	r.version[j.Seq]++
	r.emit(eventlog.Event{T: t, Kind: eventlog.Preempt, Job: j.Spec.ID})
	return nil
}

func (r *run) start(a engine.Assignment, t model.Time) error {
	j := a.Job
	restart := j.FirstStart >= 0
	if err := r.state.Start(j, a.GPUs); err != nil {
		return err
	}
	r.fair.wait(j, -1)
	r.fair.hold(r, j)
	r.meter.join(j, t)
	rec := &r.recs[j.Seq]
	if !restart {
		j.FirstStart = t
		rec.Start, rec.GPUs = t, len(a.GPUs)
		rec.GPUType = r.cfg.Cluster.Types[r.cfg.Cluster.TypeOf(a.GPUs[0])].Name
	}
	if !r.startOnUp(j, t, restart) {
		r.setSpeed(j, t, restart)
	}
	r.stage(j)
	r.emit(eventlog.Event{T: t, Kind: eventlog.Start, Job: j.Spec.ID, Alloc: r.names(a.GPUs)})
	return nil
}

// migrate moves a running job to new GPUs: in the log a preempt and a start;
// the job pays the restart pause and counts one preemption and migration.
func (r *run) migrate(a engine.Assignment, t model.Time) error {
	if err := r.reallocate(a, t); err != nil {
		return err
	}
	j := a.Job
	j.Preemptions++
	r.recs[j.Seq].Preemptions++
	r.recs[j.Seq].Migrations++
	r.emit(eventlog.Event{T: t, Kind: eventlog.Preempt, Job: j.Spec.ID, Reason: "migrate"})
	r.emit(eventlog.Event{T: t, Kind: eventlog.Start, Job: j.Spec.ID, Alloc: r.names(a.GPUs)})
	return nil
}

// resize gives a running job a new allocation; it pays the restart pause,
// unless it grows onto nodes that are not up yet or gives back GPUs it has
// not run on yet, and keeps running meanwhile (grow.go).
func (r *run) resize(a engine.Assignment, t model.Time) error {
	j := a.Job
	if j.State != model.Running {
		return fmt.Errorf("job %s is %s", j.Spec.ID, j.State)
	}
	from := r.runsOn(j)
	j.CountResize(t, len(a.GPUs))
	if err := r.moveTo(a, t); err != nil {
		return err
	}
	if !r.keepRunning(j, from, t) {
		r.forget(j.Seq)
		r.setSpeed(j, t, true)
	}
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
	if err := r.moveTo(a, t); err != nil {
		return err
	}
	r.forget(j.Seq)
	r.setSpeed(j, t, true)
	return nil
}

// moveTo closes running job a.Job's period at t, keeps its work done so far
// and gives it its new GPUs; its speed is left to the caller.
func (r *run) moveTo(a engine.Assignment, t model.Time) error {
	j := a.Job
	r.holdUntil(j, t)
	j.Done = j.DoneAt(t)
	if err := r.state.Resize(j, a.GPUs); err != nil {
		return err
	}
	r.fair.hold(r, j)
	r.meter.move(j, t)
	return nil
}

// setSpeed sets a job's speed on its (new) allocation from t and predicts its
// finish; it waits for its nodes to wake up (sleep.go) and pause adds the
// restart overhead. The engine starts and resizes jobs only on GPUs where
// their profile gives them a speed, so a job without one is a broken
// invariant: the run fails rather than letting the job hold its GPUs
// forever.
func (r *run) setSpeed(j *model.Job, t model.Time, pause bool) {
	j.Mark, j.Resume, j.LastStart = t, r.meter.readyAt(j, t), t
	if pause {
		j.Resume += r.cfg.RestartOverhead
	}
	r.rate(j, t)
}

// rate sets running job j's rate from its speed on the GPUs it runs on
// (runsOn) and its contention factor, and predicts its finish; j's Done,
// Mark and Resume are already set.
func (r *run) rate(j *model.Job, t model.Time) {
	v := r.speed(j)
	if !(v > 0) {
		on := r.runsOn(j)
		r.fail(fmt.Errorf("sim: at %ss job %s was given %d GPU(s) of type %s, on which its profile gives it no speed",
			t.SecondsString(), j.Spec.ID, len(on), r.cfg.Cluster.Types[r.cfg.Cluster.TypeOf(on[0])].Name))
	}
	j.Rate = v * r.meter.factor(j)
	r.predictFinish(j)
}

// predictFinish schedules running job j's finish as its rate predicts it,
// through model.WorkTime (rounded up to the millisecond); earlier
// predictions become stale. A job that makes no progress now (a contention
// factor of 0) or would finish after model.Horizon gets no finish: it runs
// on until something changes its rate, or is still running when the run
// ends (reported unfinished).
func (r *run) predictFinish(j *model.Job) {
	r.version[j.Seq]++
	left, ok := model.WorkTime(j.Work-j.Done, j.Rate)
	if !ok || j.Resume > model.Horizon-left {
		return
	}
	heap.Push(&r.queue, finishEvent{t: j.Resume + left, job: j.Seq, version: r.version[j.Seq]})
}

// fail records the run's first error; the event loop stops at it.
func (r *run) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// speed is the job's speed on the GPUs it runs on (runsOn: its allocation
// unless a growth waits for its nodes): that of its slowest GPU type.
func (r *run) speed(j *model.Job) float64 {
	return r.speedOn(j, r.runsOn(j))
}

// speedOn is job j's speed on the GPUs on: that of its slowest GPU type.
func (r *run) speedOn(j *model.Job, on []model.GPU) float64 {
	c, n := r.cfg.Cluster, len(on)
	v := math.Inf(1)
	seen := engine.TypeSet(0)
	for _, g := range on {
		t := c.TypeOf(g)
		if !seen.Has(t) {
			seen |= 1 << uint(t)
			v = min(v, r.cfg.Workload.Speed(j, t, n))
		}
	}
	return v
}

// holdUntil closes j's current execution period at t and adds its GPU
// time, plain and weighted by the GPU type's speed for the job
// (quota.Weight).
func (r *run) holdUntil(j *model.Job, t model.Time) {
	c := r.cfg.Cluster
	w := quota.Weight(c, r.cfg.Workload, j, c.TypeOf(j.Alloc[0]), len(j.Alloc))
	held := j.EndPeriod(t, c)
	rec := &r.recs[j.Seq]
	rec.GPUTime += held
	rec.Service += held.Seconds() * w
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
