package ledger

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
	JobPrefix  = "jobs/"
	NodePrefix = "nodes/"
)

// MaxEvents bounds a job's history; the oldest events after the first
// (the submission) are dropped.
const MaxEvents = 100

// Record is a job as the store keeps it under "jobs/<id>": the API's job
// plus what the scheduler needs to rebuild its replicas after a restart.
type Record struct {
	api.Job
	// Port is the current attempt's MASTER_PORT.
	Port int `json:"port,omitempty"`
	// Replicas are the current attempt's replicas in node-rank order.
	Replicas []Replica `json:"replicas,omitempty"`
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
	Ran Ran `json:"ran,omitzero"`
}

// Ran sums a job's ended attempts: their running time, and the GPU
// count and type of the latest.
type Ran struct {
	Seconds float64 `json:"seconds,omitempty"`
	GPUs    int     `json:"gpus,omitempty"`
	Type    string  `json:"type,omitempty"`
}

// Replica is one replica of a job's current attempt.
type Replica struct {
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

// Member reports whether the replica belongs to the job's current
// membership: neither lost with its node nor taken out by a resize.
func (rr *Replica) Member() bool { return !rr.Lost && !rr.Left }

// Clone returns a copy of r whose slices may be changed without touching r.
func (r *Record) Clone() Record {
	c := *r
	c.Replicas = slices.Clone(r.Replicas)
	c.Events = slices.Clip(r.Events)
	c.Alloc = slices.Clip(r.Alloc)
	return c
}

// Event appends a history entry, dropping old ones beyond MaxEvents.
func (r *Record) Event(t time.Time, kind, format string, a ...any) {
	if len(r.Events) >= MaxEvents {
		r.Events = append(slices.Clone(r.Events[:1]), r.Events[2:]...)
	}
	r.Events = append(r.Events, api.JobEvent{Time: t.UTC(), Event: kind, Message: fmt.Sprintf(format, a...)})
}

// LiveGPUs returns the GPUs of the attempt's member replicas that are not
// gone.
func (r *Record) LiveGPUs() int {
	n := 0
	for _, rr := range r.Replicas {
		if !rr.Done && rr.Member() {
			n += len(rr.GPUs)
		}
	}
	return n
}

// Membership returns the attempt's current membership: its member
// replicas' hosts in node-rank order.
func (r *Record) Membership() membership.Membership {
	m := membership.Membership{Job: r.ID, Generation: r.Generation}
	for _, rr := range r.Replicas {
		if rr.Member() {
			m.Hosts = append(m.Hosts, membership.Host{Name: rr.Node, GPUs: slices.Clone(rr.GPUs)})
		}
	}
	return m
}

// Master returns the node of the current node rank 0 (the first member
// replica's), "" when there is none.
func (r *Record) Master() string {
	if i := r.RankZero(); i >= 0 {
		return r.Replicas[i].Node
	}
	return ""
}

// RankZero returns the index of the replica of the current node rank 0
// (the first member replica, as master), -1 when there is none.
func (r *Record) RankZero() int {
	for i, rr := range r.Replicas {
		if rr.Member() {
			return i
		}
	}
	return -1
}

// Draining reports whether a replica that a resize took out still runs.
func (r *Record) Draining() bool {
	for _, rr := range r.Replicas {
		if rr.Left && !rr.Done {
			return true
		}
	}
	return false
}

// AllDone reports whether every replica of the attempt is gone.
func (r *Record) AllDone() bool {
	for _, rr := range r.Replicas {
		if !rr.Done {
			return false
		}
	}
	return true
}

// ReplicaIndex returns the index of the current attempt's replica id, or -1.
func (r *Record) ReplicaIndex(id string) int {
	for i := range r.Replicas {
		if r.Replicas[i].ID == id {
			return i
		}
	}
	return -1
}

// NewRecord returns the record of a job just submitted; reqs are its
// spec's requests (api.JobSpec.Requests).
func NewRecord(id string, spec api.JobSpec, reqs model.Resources, now time.Time) Record {
	r := Record{Job: api.Job{
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
		r.Event(now, "submitted", "%d GPUs requested, each with %s", spec.GPUs, config.FormatResources(reqs))
	} else {
		r.Event(now, "submitted", "%d GPUs requested", spec.GPUs)
	}
	return r
}

// JobKey returns the store key of job id.
func JobKey(id string) string { return JobPrefix + id }

// MarshalRecord encodes r as the store keeps it.
func MarshalRecord(r *Record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", r.ID, err)
	}
	return data, nil
}
