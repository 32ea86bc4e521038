package scheduler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/membership"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// Key prefixes in the store.
const (
	jobPrefix  = "jobs/"
	nodePrefix = "nodes/"
)

// maxEvents bounds a job's history; the oldest events after the first
// (the submission) are dropped.
const maxEvents = 100

// Why a running job's replicas are being stopped (record.Stopping).
const (
	stopCancel  = "cancel"  // the user cancelled it: cancelled when gone
	stopPreempt = "preempt" // the plan preempted, moved or resized it: queued again
	stopFail    = "fail"    // a replica failed or a node was lost: failed
)

// record is a job as the store keeps it under "jobs/<id>": the API's job
// plus what the scheduler needs to rebuild its replicas after a restart.
type record struct {
	api.Job
	// Port is the current attempt's MASTER_PORT.
	Port int `json:"port,omitempty"`
	// Replicas are the current attempt's replicas in node-rank order.
	Replicas []replicaRec `json:"replicas,omitempty"`
	// Stopping says why the replicas are being stopped; empty otherwise.
	Stopping string `json:"stopping,omitempty"`
	// FailedAt is when a replica's failure set the job stopping (stopFail
	// by exit): a node of the job lost later, that had been silent since
	// before, takes the blame (lose).
	FailedAt *time.Time `json:"failed_at,omitempty"`
	// ResumeSteps is the checkpoint's steps when the current attempt
	// started (its GPUSCHED_CHECKPOINT_STEPS).
	ResumeSteps int64 `json:"resume_steps,omitempty"`
	// Ran is what the job's ended attempts ran: the energy report's
	// replay (energyreport.go).
	Ran ranRecord `json:"ran,omitzero"`
}

// ranRecord sums a job's ended attempts: their running time, and the GPU
// count and type of the latest.
type ranRecord struct {
	Seconds float64 `json:"seconds,omitempty"`
	GPUs    int     `json:"gpus,omitempty"`
	Type    string  `json:"type,omitempty"`
}

// replicaRec is one replica of a job's current attempt.
type replicaRec struct {
	ID   string `json:"id"`
	Node string `json:"node"`
	// GPUs are the node's device indices in local-rank order.
	GPUs []int `json:"gpus"`
	// Done: the replica is gone (exited, stopped, or its node lost).
	Done     bool `json:"done,omitempty"`
	ExitCode int  `json:"exit_code,omitempty"`
	// Lost: its node was lost. An elastic job may continue without it; it
	// then leaves the job's host list and allocation.
	Lost bool `json:"lost,omitempty"`
	// Left: a live resize took its node out of the job. It is no longer in
	// the host list or the allocation; it is stopped (SIGTERM, grace) and
	// its GPUs stay held in the model until it is gone (Done).
	Left bool `json:"left,omitempty"`
}

// member reports whether the replica belongs to the job's current
// membership: neither lost with its node nor taken out by a resize.
func (rr *replicaRec) member() bool { return !rr.Lost && !rr.Left }

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

// clone returns a copy of r whose slices may be changed without touching r.
func (r *record) clone() record {
	c := *r
	c.Replicas = slices.Clone(r.Replicas)
	c.Events = slices.Clip(r.Events)
	c.Alloc = slices.Clip(r.Alloc)
	return c
}

// event appends a history entry, dropping old ones beyond maxEvents.
func (r *record) event(t time.Time, kind, format string, a ...any) {
	if len(r.Events) >= maxEvents {
		r.Events = append(slices.Clone(r.Events[:1]), r.Events[2:]...)
	}
	r.Events = append(r.Events, api.JobEvent{Time: t.UTC(), Event: kind, Message: fmt.Sprintf(format, a...)})
}

// liveGPUs returns the GPUs of the attempt's member replicas that are not
// gone.
func (r *record) liveGPUs() int {
	n := 0
	for _, rr := range r.Replicas {
		if !rr.Done && rr.member() {
			n += len(rr.GPUs)
		}
	}
	return n
}

// membership returns the attempt's current membership: its member
// replicas' hosts in node-rank order.
func (r *record) membership() membership.Membership {
	m := membership.Membership{Job: r.ID, Generation: r.Generation}
	for _, rr := range r.Replicas {
		if rr.member() {
			m.Hosts = append(m.Hosts, membership.Host{Name: rr.Node, GPUs: slices.Clone(rr.GPUs)})
		}
	}
	return m
}

// master returns the node of the current node rank 0 (the first member
// replica's), "" when there is none.
func (r *record) master() string {
	if i := r.rankZero(); i >= 0 {
		return r.Replicas[i].Node
	}
	return ""
}

// rankZero returns the index of the replica of the current node rank 0
// (the first member replica, as master), -1 when there is none.
func (r *record) rankZero() int {
	for i, rr := range r.Replicas {
		if rr.member() {
			return i
		}
	}
	return -1
}

// draining reports whether a replica that a resize took out still runs.
func (r *record) draining() bool {
	for _, rr := range r.Replicas {
		if rr.Left && !rr.Done {
			return true
		}
	}
	return false
}

// allDone reports whether every replica of the attempt is gone.
func (r *record) allDone() bool {
	for _, rr := range r.Replicas {
		if !rr.Done {
			return false
		}
	}
	return true
}

// replica returns the index of the current attempt's replica id, or -1.
func (r *record) replica(id string) int {
	for i := range r.Replicas {
		if r.Replicas[i].ID == id {
			return i
		}
	}
	return -1
}

// newRecord returns the record of a job just submitted; reqs are its
// spec's requests (api.JobSpec.Requests).
func newRecord(id string, spec api.JobSpec, reqs model.Resources, now time.Time) record {
	r := record{Job: api.Job{
		ID: id, Name: spec.Name, User: spec.User, Queue: spec.Queue, State: api.Queued,
		GPUsRequested: spec.GPUs, MinGPUs: spec.Min(), MaxGPUs: spec.Max(),
		GPUType: strings.ToLower(spec.GPUType), Model: spec.Model, Priority: spec.Priority,
		Command: spec.Command, Env: spec.Env, Workdir: spec.Workdir, GracePeriodS: spec.Grace(),
		Alloc: []string{}, SubmittedAt: now.UTC(), TimeLimitS: spec.TimeLimitS, TotalSteps: spec.TotalSteps,
		DataEndpoint: spec.DataEndpoint, Requests: api.FormatResources(reqs),
	}}
	if r.Name == "" {
		r.Name = id
	}
	if len(reqs) > 0 {
		r.event(now, "submitted", "%d GPUs requested, each with %s", spec.GPUs, config.FormatResources(reqs))
	} else {
		r.event(now, "submitted", "%d GPUs requested", spec.GPUs)
	}
	return r
}

// jobKey returns the store key of job id.
func jobKey(id string) string { return jobPrefix + id }

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

func marshalRecord(r *record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", r.ID, err)
	}
	return data, nil
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
