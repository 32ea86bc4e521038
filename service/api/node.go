package api

import "time"

// GPU is one GPU of a node.
type GPU struct {
	// Index is the device index on the node (as NVML and nvidia-smi number
	// them), the value that goes into CUDA_VISIBLE_DEVICES.
	Index int `json:"index"`
	// Type is the lower-case GPU type, e.g. "v100", "h100".
	Type string `json:"type"`
	// MemMiB is the GPU's memory; 0 when unknown.
	MemMiB int `json:"mem_mib,omitempty"`
	// UUID is NVML's identifier, when discovered.
	UUID string `json:"uuid,omitempty"`
}

// NodeState is whether a node's agent is heard from.
type NodeState string

// Node states.
const (
	NodeReady NodeState = "ready"
	NodeDown  NodeState = "down"
)

// Node is a machine with an agent, as GET /v1/nodes reports it.
type Node struct {
	Name string `json:"name"`
	// Addr is the host name or address other nodes reach it by (a
	// multi-node job's MASTER_ADDR).
	Addr          string    `json:"addr"`
	State         NodeState `json:"state"`
	GPUs          []GPU     `json:"gpus"`
	GPUsUsed      int       `json:"gpus_used"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Replicas lists the job replicas the node runs, as "job/rank".
	Replicas []string `json:"replicas,omitempty"`
	// Capacity is what the node offers jobs besides its GPUs, as its agent
	// registered it (Register.Capacity); Used what the jobs running there
	// hold of it (each job's Requests times its GPUs on the node), by
	// resource name in Kubernetes quantity syntax. Used may exceed
	// Capacity when a node came back smaller than what runs there.
	Capacity map[string]string `json:"capacity,omitempty"`
	Used     map[string]string `json:"used,omitempty"`
	// Energy is the node's seed 002 view (docs/ENERGY.md, "Live"): its
	// class, load state, thresholds, measured distances, energy and
	// idleness; nil for a node the server has no class for.
	Energy *NodeEnergy `json:"energy,omitempty"`
}

// NodeEnergy is a node's seed 002 state as the server sees it.
type NodeEnergy struct {
	// Class is the node's type for calibration: its entry in the cluster
	// file, else "GPUTYPExGPUS" (e.g. "v100x8"). Nodes of one class share
	// their learned thresholds.
	Class string `json:"class"`
	// LoadState is the node's load state (1, 2 or 3) for the default
	// algorithm type under the thresholds in use; 0 when down.
	LoadState int `json:"load_state,omitempty"`
	// Thresholds are the thresholds in use, per algorithm type, the
	// default type first.
	Thresholds []Thresholds `json:"thresholds"`
	// RTTs are the node's measured distances to storage devices.
	RTTs []EndpointRTT `json:"rtts,omitempty"`
	// EnergyKWh is what the node drew since the server began to account
	// it, EnergyModelledKWh the part of it taken from the power model
	// (no readings).
	EnergyKWh         float64 `json:"energy_kwh"`
	EnergyModelledKWh float64 `json:"energy_modelled_kwh,omitempty"`
	// IdleSince is when the node last became idle (no GPU held); nil
	// while it runs work.
	IdleSince *time.Time `json:"idle_since,omitempty"`
	// PowerDownCandidate: with --suspend-idle, the node has been idle for
	// the configured time and was reported as a candidate for power-down.
	PowerDownCandidate bool `json:"power_down_candidate,omitempty"`
}

// Threshold sources (Thresholds.Source).
const (
	// ThresholdsLearned: fitted from the class's power samples.
	ThresholdsLearned = "learned"
	// ThresholdsClusterFile: from the power model of the node's entry in
	// the cluster file.
	ThresholdsClusterFile = "cluster-file"
	// ThresholdsCatalog: from the power defaults of the node's GPU type.
	ThresholdsCatalog = "catalog"
	// ThresholdsNone: no power figures for the node's GPU type; the node
	// is always in state 1.
	ThresholdsNone = "none"
)

// Thresholds are a node class's load thresholds for one algorithm type
// (seed 002, claim 3) and where they come from.
type Thresholds struct {
	Family string  `json:"family"`
	Th1    float64 `json:"th1"`
	Th2    float64 `json:"th2"`
	// Source is ThresholdsLearned, ThresholdsClusterFile,
	// ThresholdsCatalog or ThresholdsNone.
	Source string `json:"source"`
	// Samples, Noise and Level describe the learned fit: the rows (one
	// per load) it used, the relative scatter of energy per unit of work
	// around its curve (its quality: lower is better) and the curve's
	// stable level; FittedAt is when it was made.
	Samples  int        `json:"samples,omitempty"`
	Noise    float64    `json:"noise,omitempty"`
	Level    float64    `json:"level,omitempty"`
	FittedAt *time.Time `json:"fitted_at,omitempty"`
	// NewSamples counts the samples the class collected since its last fit
	// attempt.
	NewSamples int `json:"new_samples"`
	// Error is why the latest fit attempt failed (the thresholds above
	// stay); empty after a success.
	Error string `json:"error,omitempty"`
}

// Calibration is the answer of GET and POST /v1/calibration: the
// thresholds in use for every node class and algorithm type, by class and
// type.
type Calibration struct {
	Classes []ClassThresholds `json:"classes"`
}

// ClassThresholds are one class's thresholds for one algorithm type, with
// the class's nodes and the samples behind them.
type ClassThresholds struct {
	Class string   `json:"class"`
	Nodes []string `json:"nodes"`
	Thresholds
	// Rows is the number of distinct loads with usable samples (at most
	// one row per busy-GPU count), the fit's input.
	Rows int `json:"rows"`
}

// NodeList is the answer of GET /v1/nodes.
type NodeList struct {
	Nodes []Node `json:"nodes"`
}
