package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// The durable records are package ledger's.
type (
	record     = ledger.Record
	replicaRec = ledger.Replica
	nodeRecord = ledger.Node
)

// Why a running job's replicas are being stopped (record.Stopping).
const (
	stopCancel  = "cancel"  // the user cancelled it: cancelled when gone
	stopPreempt = "preempt" // the plan preempted, moved or resized it: queued again
	stopFail    = "fail"    // a replica failed or a node was lost: failed
)

// job is the scheduler's view of one job.
type job struct {
	rec record
	seq int
	// mj is the job in the model, nil once the job is final.
	mj *model.Job
	// waitReason explains why a queued job did not start in round
	// waitRound; not persisted. In other rounds the round's default reason
	// applies (Scheduler.waitDefault).
	waitReason string
	waitRound  int64
	// pauseRound is the latest round in which the placer paused the job
	// (pause.go).
	pauseRound int64
	// progressSaved is when the record with the job's progress was last
	// written; plain progress newer than that is in rec only (not
	// persisted yet) while the job is in Scheduler.unsaved.
	progressSaved time.Time
}

// view returns the job as the API shows it; events only when asked.
func (s *Scheduler) view(j *job, events bool) api.Job {
	out := j.rec.Job
	if out.Alloc == nil {
		out.Alloc = []string{}
	}
	if !events {
		out.Events = nil
	}
	out.State = s.viewState(j)
	w := s.waitDefault
	if j.waitRound == s.rounds && j.waitReason != "" {
		w = j.waitReason
	}
	if w != "" && (out.State == api.Queued || out.State == api.Preempted || out.State == api.Paused) {
		if out.Reason == "" {
			out.Reason = w
		} else {
			out.Reason += "; " + w
		}
	}
	return out
}

// bySeq returns the jobs of m in order of submission.
func bySeq(m map[string]*job) []*job {
	list := make([]*job, 0, len(m))
	for _, j := range m {
		list = append(list, j)
	}
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
	return list
}

func ptr[T any](v T) *T { return &v }
