package api

import "time"

// State is a job's life-cycle state as users see it.
type State string

// Job states. queued, paused, running and preempted are active; the rest
// final.
const (
	Queued State = "queued"
	// Paused is a queued (or preempted) job that the energy placer holds
	// back although it would fit: the best node for it is in load state 3
	// (seed 002, claim 8). Its reason names the node; it is placed as
	// soon as a node leaves state 3. The server shows it; a job record
	// stays queued underneath.
	Paused    State = "paused"
	Running   State = "running"
	Preempted State = "preempted"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Final reports whether s is an end state.
func (s State) Final() bool { return s == Succeeded || s == Failed || s == Cancelled }

// States lists every state in life-cycle order.
func States() []State {
	return []State{Queued, Paused, Running, Preempted, Succeeded, Failed, Cancelled}
}

// Job is a submitted job as the server reports it: the spec's fields plus
// its status. POST /v1/jobs answers with one; GET /v1/jobs with a list.
type Job struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	User          string            `json:"user,omitempty"`
	Queue         string            `json:"queue,omitempty"`
	State         State             `json:"state"`
	GPUsRequested int               `json:"gpus_requested"`
	MinGPUs       int               `json:"min_gpus"`
	MaxGPUs       int               `json:"max_gpus"`
	GPUType       string            `json:"gpu_type,omitempty"`
	Model         string            `json:"model,omitempty"`
	Priority      int               `json:"priority"`
	Command       []string          `json:"command"`
	Env           map[string]string `json:"env,omitempty"`
	Workdir       string            `json:"workdir,omitempty"`
	GracePeriodS  int               `json:"grace_period_s"`
	// TimeLimitS and TotalSteps are the spec's (0: none, unknown).
	TimeLimitS int   `json:"time_limit_s,omitempty"`
	TotalSteps int64 `json:"total_steps,omitempty"`
	// Alloc is the job's GPUs as "node/index", empty unless it runs.
	Alloc []string `json:"alloc"`
	// ExitCode is the first non-zero exit code of a failed job, 0 for a
	// succeeded one, absent otherwise.
	ExitCode *int `json:"exit_code"`
	// Reason explains the current state (why it failed, who cancelled it,
	// why it is still queued).
	Reason      string     `json:"reason,omitempty"`
	SubmittedAt time.Time  `json:"submitted_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	// Attempt counts the job's starts (1 on the first start).
	Attempt int `json:"attempt"`
	// Generation is the membership generation of the current attempt: one
	// per attempt, plus one whenever an elastic job is resized in place (a
	// scaler) or continues without the replicas of a lost node.
	Generation int `json:"generation,omitempty"`
	// Steps is the latest progress the job reported (POST
	// /v1/jobs/{id}/progress or its progress file), at ProgressAt; nil
	// ProgressAt when it never reported any.
	Steps      int64      `json:"steps,omitempty"`
	ProgressAt *time.Time `json:"progress_at,omitempty"`
	// CheckpointSteps is the steps of the job's latest checkpoint, reported
	// at LastCheckpointAt (nil when it never reported one). A restarted
	// job gets it as GPUSCHED_CHECKPOINT_STEPS.
	CheckpointSteps  int64      `json:"checkpoint_steps,omitempty"`
	LastCheckpointAt *time.Time `json:"last_checkpoint_at,omitempty"`
	// EnergyKWh is the energy attributed to the job so far from its nodes'
	// power readings (docs/ENERGY.md, power readings) and, on nodes without
	// readings, from their power model; 0 when neither is known.
	EnergyKWh float64 `json:"energy_kwh,omitempty"`
	// EnergyModelledKWh is the part of EnergyKWh that comes from the power
	// model rather than from readings (docs/ENERGY.md, "What energy
	// placement saved").
	EnergyModelledKWh float64 `json:"energy_modelled_kwh,omitempty"`
	// DataEndpoint is the spec's data endpoint.
	DataEndpoint string `json:"data_endpoint,omitempty"`
	// Requests are what each GPU of the job asks of its node besides the
	// GPU, from the spec's cpus, memory and resources, by resource name
	// ("cpu", "memory", "rdma/hca") in Kubernetes quantity syntax ("2",
	// "500m", "64Gi"; FormatResources); absent when it asks for nothing.
	Requests map[string]string `json:"requests,omitempty"`
	// Events is the job's history, oldest first (only in GET /v1/jobs/{id}).
	Events []JobEvent `json:"events,omitempty"`
}

// JobEvent is one step of a job's history.
type JobEvent struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"`
	Message string    `json:"message,omitempty"`
}

// JobList is the answer of GET /v1/jobs.
type JobList struct {
	Jobs []Job `json:"jobs"`
}
