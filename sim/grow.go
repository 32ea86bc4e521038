package sim

import (
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// Growing onto nodes that are not up yet (issue 28): when a resize grows a
// running job onto GPUs of nodes that are asleep or still waking up, the
// job goes on running on the GPUs it ran on, at their speed, as an elastic
// framework's workers do (Horovod elastic, torchrun elastic) while new
// hosts boot; when the last of its nodes is up the added workers join and
// the job runs at its new size from then, after the restart pause (the
// workers' new rendezvous). Until then the job holds its whole new
// allocation: the engine, the event log (the resize event, at the resize)
// and GPU time held count the added GPUs from the resize, and the meter
// counts them as it counts a job placed on a waking node (their node's
// draw while it wakes is the static draw of the jobs on it; their busy draw
// starts when it is up).
//
//   - A growth waits only when the new allocation keeps every GPU the job
//     runs on and the job would make progress before the nodes are up;
//     otherwise the resize stops the job as before (it makes no progress
//     until its nodes are up and its restart pause is over).
//   - A second resize before the join: a shrink back to the GPUs the job
//     runs on cancels the growth, and the job never stopped (no pause); one
//     that still keeps them and adds GPUs on nodes not up waits anew, for
//     the new allocation's nodes; any other stops the job as a resize does.
//   - A job that finishes, is preempted or migrates before the join leaves
//     the growth behind.

// Starting on the nodes that are up: an elastic job started (or restarted)
// on nodes not all up starts on the GPUs of those that are, when they are
// at least its minimum (whole replicas), as elastic frameworks start with
// the workers they have; the rest join as a growth's do. It does so only
// when that gets more work done by the join than waiting would: a first
// start pays no restart pause when it waits for its nodes, but its join
// does.

// growth is a job's growth waiting for its nodes: the job runs on from
// until at, when it takes its whole allocation.
type growth struct {
	from []model.GPU
	at   model.Time
}

// runsOn returns the GPUs job j makes progress on: its allocation, or,
// while a growth waits for its nodes, the allocation before it.
func (r *run) runsOn(j *model.Job) []model.GPU {
	if g, ok := r.grows[j.Seq]; ok {
		return g.from
	}
	return j.Alloc
}

// keepRunning applies the resize at t of running job j, which ran on from
// and now holds j.Alloc (its work done so far is j.Done), when the job can
// go on running on from: back to exactly those GPUs, or grown onto nodes
// not up yet before it would make progress on them. It reports false when
// the resize must stop the job (setSpeed with the restart pause).
func (r *run) keepRunning(j *model.Job, from []model.GPU, t model.Time) bool {
	if !containsAll(j.Alloc, from) {
		return false
	}
	if len(j.Alloc) > len(from) {
		at := r.meter.readyAt(j, t)
		if at <= t || at <= j.Resume {
			return false
		}
		r.wait(j.Seq, growth{from: slices.Clone(from), at: at})
	} else {
		delete(r.grows, j.Seq)
	}
	j.Mark, j.Resume = t, max(j.Resume, t)
	r.rate(j, t)
	return true
}

// startOnUp starts elastic job j, placed at t on j.Alloc (pause: a restart,
// which pays the restart pause), on the GPUs of its nodes that are up, the
// others joining when they are up. It reports false when the job must wait
// for all its nodes (setSpeed).
func (r *run) startOnUp(j *model.Job, t model.Time, pause bool) bool {
	at := r.meter.readyAt(j, t)
	if at <= t || !j.Spec.Elastic() {
		return false
	}
	up := r.meter.upGPUs(j.Alloc, t)
	up = up[:len(up)-len(up)%j.Spec.Replica()]
	if len(up) == 0 || len(up) < j.Spec.MinGPUs {
		return false
	}
	resume := t
	if pause {
		resume += r.cfg.RestartOverhead
	}
	// Waiting resumes at at (a restart: at plus the pause); starting on up
	// runs from resume to at and pauses at the join.
	v := r.speedOn(j, up)
	if resume >= at || !(v > 0) ||
		(!pause && v*(at-resume).Seconds() <= r.speedOn(j, j.Alloc)*r.cfg.RestartOverhead.Seconds()) {
		return false
	}
	r.wait(j.Seq, growth{from: up, at: at})
	j.Mark, j.Resume, j.LastStart = t, resume, t
	r.rate(j, t)
	return true
}

// containsAll reports whether every GPU of sub is in set.
func containsAll(set, sub []model.GPU) bool {
	for _, g := range sub {
		if !slices.Contains(set, g) {
			return false
		}
	}
	return true
}

// wait records job seq's growth g, waiting for its nodes.
func (r *run) wait(seq int, g growth) {
	if r.grows == nil {
		r.grows = map[int]growth{}
	}
	r.grows[seq] = g
}

// forget drops job seq's waiting growth, if any: it finished, stopped or
// moved.
func (r *run) forget(seq int) { delete(r.grows, seq) }

// nextJoin returns the earliest time a waiting growth joins, or ok false.
func (r *run) nextJoin() (model.Time, bool) {
	var t model.Time
	ok := false
	for _, g := range r.grows {
		if !ok || g.at < t {
			t, ok = g.at, true
		}
	}
	return t, ok
}

// applyJoins lets every waiting growth due at or before t join, in job
// order: the job's work so far is kept, and it runs at the speed of its
// whole allocation after the restart pause. A join changes no allocation,
// so it calls for no round.
func (r *run) applyJoins(t model.Time) {
	if len(r.grows) == 0 {
		return
	}
	var due []int
	for seq, g := range r.grows {
		if g.at <= t {
			due = append(due, seq)
		}
	}
	slices.Sort(due)
	for _, seq := range due {
		j := r.jobs[seq]
		delete(r.grows, seq)
		j.Done, j.Mark = j.DoneAt(t), t
		j.Resume = max(j.Resume, r.meter.readyAt(j, t)) + r.cfg.RestartOverhead
		r.rate(j, t)
	}
}
