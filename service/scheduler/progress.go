package scheduler

import (
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// progressPersist bounds how long plain progress (no checkpoint) may stay
// in memory only: a job's record is written at most once per period for
// it. A checkpoint is written before it is acknowledged.
const progressPersist = 5 * time.Second

// progressReport is one report of a job's progress, from the progress
// endpoint or an agent's status report.
type progressReport struct {
	steps int64
	at    time.Time
	// ckpt: a checkpoint of ckptSteps was reported at ckptAt.
	ckpt      bool
	ckptSteps int64
	ckptAt    time.Time
}

// Progress records a progress report of job id, timed by the scheduler's
// clock, and returns the job. A checkpoint is durable when Progress
// returns; plain progress reaches the store within progressPersist. An
// invalid report (api.Progress.Validate) is an *api.FieldError;
// ErrNotFound; ErrConflict for a job that has ended.
func (s *Scheduler) Progress(id string, p api.Progress) (api.Job, error) {
	if err := p.Validate(); err != nil {
		return api.Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.tab.Jobs[id]
	if j == nil {
		return api.Job{}, noJob(id)
	}
	if j.Rec.State.Final() {
		return api.Job{}, ended(s.tab.View(j, false))
	}
	now := s.now()
	rep := progressReport{steps: p.Steps, at: now}
	if p.Checkpoint {
		rep.ckpt, rep.ckptSteps, rep.ckptAt = true, p.Steps, now
	}
	b := s.newBatch()
	s.applyProgress(b, j, rep, now)
	if err := b.run("record the progress of " + id); err != nil {
		return api.Job{}, err
	}
	return s.tab.View(j, false), nil
}

// replicaProgress turns what an agent read from a replica's progress file
// into a report; times in the future (another clock) count as now.
func replicaProgress(rp *api.ReplicaProgress, now time.Time) progressReport {
	rep := progressReport{steps: rp.Steps, at: minTime(rp.At, now)}
	if rp.CheckpointAt != nil {
		rep.ckpt, rep.ckptSteps, rep.ckptAt = true, rp.CheckpointSteps, minTime(*rp.CheckpointAt, now)
	}
	return rep
}

// applyProgress records rep for active job j: the parts newer than what the
// job has. A new checkpoint goes into b (durable with it) and into the
// model; plain progress goes into b when j's record is written anyway or
// was last written progressPersist ago, else into memory, for flushProgress.
func (s *Scheduler) applyProgress(b *batch, j *job, rep progressReport, now time.Time) {
	cur := b.peek(j)
	newSteps := cur.ProgressAt == nil || rep.at.After(*cur.ProgressAt)
	newCkpt := rep.ckpt && (cur.LastCheckpointAt == nil || rep.ckptAt.After(*cur.LastCheckpointAt))
	if !newSteps && !newCkpt {
		return
	}
	var rec *record
	if newCkpt || b.touched(j) || now.Sub(j.ProgressSaved) >= progressPersist {
		rec = b.edit(j)
		b.then(func() {
			j.ProgressSaved = now
			delete(s.tab.Unsaved, j)
		})
	} else {
		rec = &j.Rec // memory only until flushProgress writes it
		s.tab.Unsaved[j] = true
	}
	if newSteps {
		s.learner.Observe(cur, rep.steps, rep.at)
		rec.Steps, rec.ProgressAt = rep.steps, ptr(rep.at.UTC())
	}
	if newCkpt {
		rec.CheckpointSteps, rec.LastCheckpointAt = rep.ckptSteps, ptr(rep.ckptAt.UTC())
		t := model.Time(rep.ckptAt.UnixMilli())
		b.then(func() {
			if j.Model != nil {
				j.Model.Checkpoint = t
			}
		})
	}
}

// flushProgress writes the records of the jobs whose plain progress (or
// energy) has been in memory only for progressPersist or more; run every
// round tick, it also ticks the online profiles and the power samples.
func (s *Scheduler) flushProgress() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	b := s.newBatch()
	for j := range s.tab.Unsaved {
		if j.Rec.State.Final() {
			delete(s.tab.Unsaved, j)
			continue
		}
		if now.Sub(j.ProgressSaved) >= progressPersist {
			b.edit(j)
			b.then(func() {
				j.ProgressSaved = now
				delete(s.tab.Unsaved, j)
			})
		}
	}
	_ = b.run("write job progress")  // logged; retried next time
	if s.learner.TickProfiles(now) { // a rebuild of the matrix comes with the next round
		s.dirty = true
		s.notify()
	}
	s.energy.SaveSamples(now)
}

func minTime(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}
