package api

// QueueStatus is one team's queue as GET /v1/queues reports it
// (docs/QUEUES.md).
type QueueStatus struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	// Quota and Limit are the guaranteed and the largest GPU counts per GPU
	// type.
	Quota map[string]int `json:"quota,omitempty"`
	Limit map[string]int `json:"limit,omitempty"`
	// Users may submit to the queue and see its jobs (none listed: every
	// user may).
	Users []string `json:"users,omitempty"`
	// Used are the GPUs its running jobs hold, per type; Borrowed those
	// beyond its quota.
	Used     map[string]int `json:"used"`
	Borrowed int            `json:"borrowed"`
	// RunningJobs, PendingJobs and PendingGPUs count its active jobs and
	// the GPUs its waiting jobs ask for (at their minimum).
	RunningJobs int `json:"running_jobs"`
	PendingJobs int `json:"pending_jobs"`
	PendingGPUs int `json:"pending_gpus"`
	// UsageGPUHours is its fair-share usage (GPU-hours, type-weighted
	// unless the configuration says gpu-hours; decayed when it sets a
	// half-life); Share is its usage per unit of weight over all queues'.
	UsageGPUHours float64 `json:"usage_gpu_hours"`
	Share         float64 `json:"share"`
}

// QueueList answers GET /v1/queues.
type QueueList struct {
	// FairShare is how usage is measured: type-weighted or gpu-hours.
	FairShare string        `json:"fair_share"`
	Queues    []QueueStatus `json:"queues"`
}
