package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// lose records that replica i of running job j was lost (why says how):
// with its node (nodeLost), or alone, its agent having reported that its
// exit status is unknown (its shim died, or the node rebooted). An elastic
// job whose other replicas still hold at least its minimum GPUs continues
// without it (shrink), unless the lost replica was its node rank 0, which
// hosts the job's coordination (torchrun's c10d rendezvous, horovodrun's
// driver, the membership signal): the survivors cannot go on without it.
// Any other job, and that one, is stopped and queued again, to restart
// from its last checkpoint as a new attempt. A job that was already
// stopping ends as it was going to.
//
// silentSince is, for a node loss, the node's last heartbeat: when a
// replica of the job failed after it (the job is stopping to fail), the
// failure is the loss's doing — a peer that lost its rendezvous or its
// collective when the node died — and the job is queued again instead.
func (s *Scheduler) lose(b *batch, j *job, i int, why string, nodeLost bool, silentSince, now time.Time) {
	rec := b.edit(j)
	coordinator := rec.RankZero() == i
	rr := &rec.Replicas[i]
	rr.Done, rr.Lost = true, true
	id, nodeName := rr.ID, rr.Node
	rec.Event(now, "replica-lost", "%s on %s: %s", id, nodeName, why)
	b.then(func() { s.forget(nodeName, id) })
	if rr.Left { // a resize had already taken it out of the job
		b.then(func() { s.syncAlloc(j) })
		return
	}
	if rec.Stopping == stopFail && nodeLost && rec.FailedAt != nil && rec.FailedAt.After(silentSince) {
		s.blameLoss(rec, nodeName, why, silentSince, now)
	}
	if rec.Stopping != "" {
		return
	}
	lost := fmt.Sprintf("node %s lost (%s)", nodeName, why)
	if !nodeLost {
		lost = fmt.Sprintf("replica %s on node %s lost (%s)", id, nodeName, why)
	}
	left := rec.LiveGPUs()
	elastic := rec.MinGPUs < rec.MaxGPUs && left > 0 && left >= rec.MinGPUs
	if elastic && !coordinator {
		s.shrink(b, j, lost, now)
		if !nodeLost { // the node stays: give its GPUs back now
			b.then(func() { s.syncAlloc(j) })
		}
		return
	}
	if elastic {
		lost += " with node rank 0, which coordinates the job"
	}
	reason := lost + ": queued again to restart as a new attempt"
	if note := ledger.CheckpointNote(rec, now); note != "" {
		reason += " from its " + note
	}
	s.stopJob(b, j, stopPreempt, reason, now)
}

// blameLoss turns a job that is stopping because a replica failed into one
// that is queued again: the failure came after node nodeName's last
// heartbeat, and that node is now lost.
func (s *Scheduler) blameLoss(rec *record, nodeName, why string, silentSince, now time.Time) {
	rec.Stopping, rec.ExitCode = stopPreempt, nil
	rec.Reason = fmt.Sprintf("node %s lost (%s); the failure %s after its last heartbeat followed from it: queued again to restart as a new attempt",
		nodeName, why, rec.FailedAt.Sub(silentSince).Round(time.Millisecond))
	if note := ledger.CheckpointNote(rec, now); note != "" {
		rec.Reason += " from its " + note
	}
	rec.FailedAt = nil
	rec.Event(now, "stopping", "%s", rec.Reason)
}

// shrink lets running elastic job j continue on the GPUs of its replicas
// that are not gone: its allocation shrinks, its membership generation
// grows, and the surviving replicas get the new host list and environment
// (their agents rewrite the host and environment files and signal node
// rank 0; the processes keep running).
func (s *Scheduler) shrink(b *batch, j *job, why string, now time.Time) {
	rec := b.edit(j)
	rec.Generation++
	rec.Alloc = []string{}
	var hosts []string
	for _, rr := range rec.Replicas {
		if rr.Done || !rr.Member() {
			continue
		}
		hosts = append(hosts, rr.Node)
		for _, g := range rr.GPUs {
			rec.Alloc = append(rec.Alloc, rr.Node+"/"+strconv.Itoa(g))
		}
	}
	n := len(rec.Alloc)
	rec.Event(now, "resized", "%s: continues on %d GPUs (%s) without the lost replicas, generation %d",
		why, n, strings.Join(hosts, ","), rec.Generation)
	t := model.Time(now.UnixMilli())
	b.then(func() {
		// The model drops the lost GPUs when the cluster is rebuilt without
		// the node; close the execution period on the old allocation now.
		if mj := j.Model; mj != nil && mj.State == model.Running && len(mj.Alloc) > 0 && s.tab.Cluster != nil {
			mj.EndPeriod(t, s.tab.Cluster)
			mj.CountResize(t, n)
		}
		s.refreshJob(j)
	})
}

// refreshJob puts running job j's live member replicas, rebuilt from its
// record, into their nodes' work: same IDs, so agents only pick up changes
// (host list, environment, GPUs, generation).
func (s *Scheduler) refreshJob(j *job) {
	reps, err := s.replicas(&j.Rec)
	if err != nil {
		s.log.Error("cannot rebuild the replicas of a running job", "job", j.Rec.ID, "err", err)
		return
	}
	var live []api.Replica
	for _, r := range reps {
		if !j.Rec.Replicas[rankOf(r.ID)].Done {
			live = append(live, r)
		}
	}
	s.assign(live)
}
