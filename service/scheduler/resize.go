package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/membership"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// resize applies a plan's resize of a running elastic job in place, as the
// same attempt (docs/SERVER.md, "Live resizes"): the new allocation gets
// the next membership generation (membership.Next: hosts that stay keep
// their node ranks); a node that stays keeps its replica (same ID, same
// process), whose work entry gets the new GPUs, host list and environment;
// a node that leaves loses its replica, which its agent stops with the
// job's grace period (Left; its GPUs stay held in the model until it is
// gone); a new node gets a new replica, numbered after the attempt's
// existing ones. The model takes the new allocation at once, so a grow's
// GPUs are held and a shrink's GPUs on nodes that stay are free for the
// round's starts. It returns what undoes the model's change if the batch
// cannot be written; nil when nothing changed.
//
// A job that is stopping, still stopping replicas of an earlier resize, or
// one of whose replicas has already ended is not resized.
func (s *Scheduler) resize(b *batch, a engine.Assignment, scaler string, now time.Time) (undo func()) {
	j := s.tab.Active[a.Job.Spec.ID]
	if j == nil || j.Model != a.Job || s.tab.State == nil || len(a.GPUs) == 0 {
		return nil
	}
	cur := b.peek(j)
	if !ledger.Resizable(cur) {
		s.log.Debug("resize skipped: the job is stopping, finishing or still stopping removed replicas", "job", cur.ID)
		return nil
	}
	slots := make([]membership.Slot, len(a.GPUs))
	for i, g := range a.GPUs {
		n := s.tab.Nodes[s.tab.Cluster.Nodes[g.Node].Name]
		slots[i] = membership.Slot{Host: n.Name, GPU: n.GPUs[g.Index].Index}
	}
	old := cur.Membership()
	next, err := old.Next(slots)
	if err != nil {
		s.log.Error("cannot resize job", "job", cur.ID, "err", err)
		return nil
	}
	if next.Generation == old.Generation {
		return nil
	}
	rec, notes := ledger.Resized(cur, next)
	undo = s.resizeModel(j.Model, nodes.ModelAlloc(&rec, s.tab.Nodes, s.tab.Cluster, s.tab.NodeIdx), len(slots), now)
	if undo == nil {
		return nil
	}
	msg := fmt.Sprintf("resized to %d GPUs by the %s scaler, generation %d: %s", len(slots), scaler,
		rec.Generation, strings.TrimSuffix(strings.ReplaceAll(next.HostList(), "\n", ","), ","))
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	rec.Event(now, "resized", "%s", msg)
	*b.edit(j) = rec
	b.then(func() {
		s.refreshJob(j)
		s.drain(j)
	})
	return undo
}

// resizeModel resizes model job mj to alloc (its new GPUs plus those of
// replicas still stopping), n GPUs in the new membership: it closes the
// execution period on the old allocation and counts the resize. It returns
// what undoes all of it, or nil (the model unchanged) when the model
// refuses the allocation.
func (s *Scheduler) resizeModel(mj *model.Job, alloc []model.GPU, n int, now time.Time) (undo func()) {
	saved := struct {
		lastStart, lastExpand, lastShrink model.Time
		resizes, expansions, shrinks      int
	}{mj.LastStart, mj.LastExpand, mj.LastShrink, mj.Resizes, mj.Expansions, mj.Shrinks}
	periods := len(mj.Periods)
	t := model.Time(now.UnixMilli())
	if mj.State == model.Running && len(mj.Alloc) > 0 {
		mj.EndPeriod(t, s.tab.Cluster)
	}
	mj.CountResize(t, n)
	oldAlloc := mj.Alloc
	restore := func() {
		mj.Periods = mj.Periods[:periods]
		mj.LastStart, mj.LastExpand, mj.LastShrink = saved.lastStart, saved.lastExpand, saved.lastShrink
		mj.Resizes, mj.Expansions, mj.Shrinks = saved.resizes, saved.expansions, saved.shrinks
	}
	if err := s.tab.State.Resize(mj, alloc); err != nil {
		restore()
		s.log.Error("cannot resize job in the model", "job", mj.Spec.ID, "err", err)
		return nil
	}
	return func() {
		if err := s.tab.State.Resize(mj, oldAlloc); err != nil {
			s.log.Error("cannot undo a resize in the model", "job", mj.Spec.ID, "err", err)
		}
		restore()
	}
}

// syncAlloc gives running job j's model job the allocation of its record
// (after a replica that a resize took out is gone, its GPUs are free) and
// asks for a round.
func (s *Scheduler) syncAlloc(j *job) {
	mj := j.Model
	if mj == nil || s.tab.State == nil || j.Rec.State != api.Running || mj.State != model.Running {
		return
	}
	alloc := nodes.ModelAlloc(&j.Rec, s.tab.Nodes, s.tab.Cluster, s.tab.NodeIdx)
	if len(alloc) == 0 || slices.Equal(alloc, mj.Alloc) {
		return
	}
	if err := s.tab.State.Resize(mj, alloc); err != nil {
		s.log.Error("model out of step with the job records", "job", j.Rec.ID, "err", err)
		return
	}
	s.notify()
}
