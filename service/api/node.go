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
}

// NodeList is the answer of GET /v1/nodes.
type NodeList struct {
	Nodes []Node `json:"nodes"`
}
