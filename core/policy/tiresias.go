package policy

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// Tiresias is the discretized two-dimensional least-attained-service
// scheduler (2D-LAS, "dlas-gpu") of Tiresias (Gu et al., NSDI 2019), as its
// simulator implements it (SymbioticLab/Tiresias, simulator/run_sim.py,
// dlas_sim_jobs). A job's attained service is GPUs × seconds run since its
// last promotion, every GPU type weighing 1. Queue k holds the jobs whose
// attained service is below Thresholds[k] and at least Thresholds[k-1]; the
// order is preemptive: higher queues first, and inside a queue running jobs
// first, then jobs preempted since they entered the queue (the most recently
// preempted first), then the other waiting jobs by the time they entered it.
// With PromoteKnob set, a waiting job whose time waited since it first ran
// reaches PromoteKnob times its run time returns to the top queue with its
// history cleared. Its zero value is one queue, never promoted; one
// Tiresias must serve one engine (it keeps a scratch buffer).
type Tiresias struct {
	// Thresholds are the queue limits in GPU-seconds, positive and
	// ascending; there are len(Thresholds)+1 queues. A job whose attained
	// service reaches Thresholds[k] moves from queue k to queue k+1.
	Thresholds []float64
	// PromoteKnob is Tiresias's PROMOTEKNOB (the simulator's
	// solve_starvation): a waiting job below the top queue whose waiting
	// time since it first ran (after its last promotion) is at least
	// PromoteKnob times its run time is promoted to queue 0 and its attained
	// service reset. 0 turns promotion off.
	PromoteKnob float64

	keys []tiresiasKey
	jobs []*model.Job
}

// TiresiasThresholds returns the queue limits of Tiresias's simulator: three
// queues (simulator/jobs.py, _TFJobs.__init__: num_queue = 3 and queue_limit
// = [3250, 7200, 18000], of which the last is unused with three queues), in
// GPU-seconds for --schedule=dlas-gpu, the setting of simulator/sim_runs.sh.
func TiresiasThresholds() []float64 { return []float64{3250, 7200} }

// tiresiasKey sorts jobs by (queue, group, t1, t2, seq); see Tiresias.key.
// It holds no pointer (the job is jobs[idx]), which keeps sorting cheap.
type tiresiasKey struct {
	queue, group int
	t1, t2       model.Time
	seq, idx     int
}

// Groups inside a queue, in the order of Tiresias's per-queue lists.
const (
	tiresiasRunning   = iota // running, by when it began running in the queue
	tiresiasPreempted        // preempted in the queue, most recent first
	tiresiasEntered          // waiting since it entered the queue, FIFO
)

// Name returns "tiresias".
func (*Tiresias) Name() string { return "tiresias" }

// Order implements engine.QueuePolicy: running and waiting jobs, highest
// queue first, preemptive. Updates record every queue change and, with a
// reset, every promotion.
func (p *Tiresias) Order(s *model.State, now model.Time, buf []*model.Job) engine.Order {
	var ups []engine.Update
	p.keys, p.jobs = p.keys[:0], p.jobs[:0]
	for _, list := range [][]*model.Job{s.Running(), s.Waiting()} {
		for _, j := range list {
			k, promoted := p.key(s.Cluster, j, now)
			if promoted || k.queue != j.Queue {
				ups = append(ups, engine.Update{Job: j, Queue: k.queue, Reset: promoted})
			}
			k.seq, k.idx = j.Seq, len(p.jobs)
			p.keys, p.jobs = append(p.keys, k), append(p.jobs, j)
		}
	}
	slices.SortFunc(p.keys, func(a, b tiresiasKey) int {
		if a.queue != b.queue {
			return cmp.Compare(a.queue, b.queue)
		}
		if a.group != b.group {
			return cmp.Compare(a.group, b.group)
		}
		if a.t1 != b.t1 {
			return cmp.Compare(a.t1, b.t1)
		}
		if a.t2 != b.t2 {
			return cmp.Compare(a.t2, b.t2)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, k := range p.keys {
		buf = append(buf, p.jobs[k.idx])
	}
	clear(p.jobs) // hold no job past the call
	return engine.Order{Jobs: buf, Preemptive: true, Updates: ups}
}

// key places job j: its queue level and its place inside the queue, which
// reproduces the order of the simulator's per-queue lists. Jobs are appended
// to a queue when they enter it (arrival, demotion, promotion), and after
// every pass the waiting jobs of each queue are moved behind its running
// ones, keeping their order ("#sort based on the job start time" in
// dlas_sim_jobs). So running jobs come first, by the later of when they
// entered the queue and when their current run began; then jobs preempted
// while in the queue, the most recent first (they were ahead of every job
// already waiting); then the rest by the time they entered the queue.
func (p *Tiresias) key(c *model.Cluster, j *model.Job, now model.Time) (tiresiasKey, bool) {
	k := tiresiasKey{queue: p.level(j.Attained(now, c, unitWeight))}
	if j.State == model.Waiting && k.queue > 0 && p.starving(j, now) {
		k.queue, k.group, k.t1 = 0, tiresiasEntered, now
		return k, true
	}
	entered := p.entered(c, j, now, k.queue)
	switch {
	case j.State == model.Running:
		k.group, k.t1 = tiresiasRunning, max(entered, runStart(j, max(j.LastStart, j.ResetAt)))
	case j.Queued > entered:
		k.group, k.t1, k.t2 = tiresiasPreempted, -j.Queued, max(entered, runStart(j, j.Queued))
	default:
		k.group, k.t1 = tiresiasEntered, entered
	}
	return k, false
}

func unitWeight(int) float64 { return 1 }

// level returns the queue of a job with attained service a: the number of
// thresholds it has reached (dlas_sim_jobs demotes when
// "j_gt >= JOBS.queue_limit[cur_qid]").
func (p *Tiresias) level(a float64) int {
	for i, t := range p.Thresholds {
		if a < t {
			return i
		}
	}
	return len(p.Thresholds)
}

// starving reports whether waiting job j is due for promotion: it has run
// since its last promotion, and the time it has waited since it first ran
// then is at least PromoteKnob times its run time (dlas_sim_jobs:
// "rjob['last_pending_time'] >= int(rjob['executed_time'] *
// solve_starvation)", where last_pending_time counts only once
// executed_time > 0 and both are zeroed by a promotion).
func (p *Tiresias) starving(j *model.Job, now model.Time) bool {
	if p.PromoteKnob <= 0 || len(j.Periods) == 0 {
		return false
	}
	ran := j.RunTime(now)
	waited := now - j.Periods[0].Start - ran
	return ran > 0 && float64(waited) >= p.PromoteKnob*float64(ran)
}

// entered returns when job j entered queue level: its arrival or last
// promotion for the top queue, else the moment its attained service reached
// the queue's lower threshold (the simulator wakes up then to demote it).
func (p *Tiresias) entered(c *model.Cluster, j *model.Job, now model.Time, level int) model.Time {
	if level == 0 {
		return max(j.Spec.Submit, j.ResetAt)
	}
	limit := p.Thresholds[level-1]
	var acc float64
	reach := func(start, end model.Time, gpus int) (model.Time, bool) {
		g := float64(gpus)
		span := (end - start).Seconds() * g
		if acc+span < limit {
			acc += span
			return 0, false
		}
		return min(start+model.FromSeconds((limit-acc)/g), end), true
	}
	for _, q := range j.Periods {
		if t, ok := reach(q.Start, q.End, q.GPUs); ok {
			return t
		}
	}
	if start := max(j.LastStart, j.ResetAt); j.State == model.Running && now > start {
		if t, ok := reach(start, now, len(j.Alloc)); ok {
			return t
		}
	}
	return now
}

// runStart returns when the run that is open at (or ended at) t began: t
// walked back over the contiguous closed periods that end there (a resize
// or migration splits a run into periods).
func runStart(j *model.Job, t model.Time) model.Time {
	for i := len(j.Periods) - 1; i >= 0 && j.Periods[i].End == t; i-- {
		t = j.Periods[i].Start
	}
	return t
}
