package api

import "time"

// PowerReading is a node's power draw as its agent measured it, sent with
// its status reports (Status.Power). The server ignores a reading that is
// not newer than the node's previous one.
type PowerReading struct {
	// At is when the agent took the reading.
	At time.Time `json:"at"`
	// GPUs are the per-GPU readings (NVML), one per device index; empty
	// when the node has no NVML.
	GPUs []GPUPower `json:"gpus,omitempty"`
	// NodeW is the whole node's draw in watts (the BMC's Redfish
	// PowerConsumedWatts); 0 when no Redfish endpoint is configured.
	NodeW float64 `json:"node_w,omitempty"`
	// Load is the node's load when the reading was taken: the GPUs its
	// running replicas hold divided by its GPUs, in [0, 1].
	Load float64 `json:"load"`
}

// GPUPower is one GPU's power draw.
type GPUPower struct {
	// Index is the GPU's device index on the node (api.GPU.Index).
	Index int     `json:"index"`
	Watts float64 `json:"watts"`
}

// Profile sources (ProfileEntry.Source).
const (
	// ProfileOnline: learned from the progress reports of running jobs.
	ProfileOnline = "online"
	// ProfilePreRun: the pre-run throughput matrix embedded in the binary.
	ProfilePreRun = "pre-run"
)

// ProfileEntry is one point of the throughput matrix the scheduler uses:
// a job type's speed on a GPU count of a GPU type.
type ProfileEntry struct {
	Model   string `json:"model"`
	GPUType string `json:"gpu_type"`
	GPUs    int    `json:"gpus"`
	// StepsPerS is the throughput in training steps per second.
	StepsPerS float64 `json:"steps_per_s"`
	// Samples is the number of measurements behind an online entry; 0 for
	// a pre-run one.
	Samples int64 `json:"samples,omitempty"`
	// Source is ProfileOnline or ProfilePreRun.
	Source string `json:"source"`
}

// ProfileList is the answer of GET /v1/profiles: online entries first,
// each source sorted by job type, GPU type and GPU count.
type ProfileList struct {
	Profiles []ProfileEntry `json:"profiles"`
}
