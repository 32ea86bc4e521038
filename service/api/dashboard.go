package api

import "time"

// ClusterView is the answer of GET /v1/cluster: what the dashboard's
// cluster view shows — every node with its load and latest power reading,
// the GPUs by type (busy, free, down) and the jobs by state.
type ClusterView struct {
	Nodes []NodeView `json:"nodes"`
	Types []TypeView `json:"types"`
	// Jobs counts the jobs by state.
	Jobs map[State]int `json:"jobs"`
	// PowerW is the sum of the ready nodes' latest readings (0 without).
	PowerW float64 `json:"power_w"`
}

// NodeView is one node of the cluster view: the node (as GET /v1/nodes
// shows it), its load (busy GPUs over GPUs; 0 when down) and its latest
// power reading (absent without one): the node's watts (Redfish) or else
// the sum of its GPUs' (NVML).
type NodeView struct {
	Node
	Load    float64    `json:"load"`
	PowerW  *float64   `json:"power_w,omitempty"`
	PowerAt *time.Time `json:"power_at,omitempty"`
}

// TypeView counts the GPUs of one type: Busy (held by jobs), Free (on
// ready nodes) and Down (on nodes marked down).
type TypeView struct {
	Type string `json:"type"`
	GPUs int    `json:"gpus"`
	Busy int    `json:"busy"`
	Free int    `json:"free"`
	Down int    `json:"down"`
}

// JobSeries is what the dashboard draws for one job (GET
// /v1/jobs/{id}/series): the replicas of its current attempt, and its
// progress and power over time (kept in memory, at most the latest 360
// points each; lost when the server restarts).
type JobSeries struct {
	Job      string          `json:"job"`
	Replicas []ReplicaInfo   `json:"replicas"`
	Progress []ProgressPoint `json:"progress"`
	Power    []PowerPoint    `json:"power"`
}

// ReplicaInfo is one replica of a job's current attempt.
type ReplicaInfo struct {
	ID   string `json:"id"`
	Node string `json:"node"`
	GPUs []int  `json:"gpus"`
	// State is running, exited, lost (with its node) or left (taken out
	// by a resize and being stopped).
	State    string `json:"state"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

// ProgressPoint is one progress report: the steps at At, and the steps/s
// since the previous report of the same attempt (0 for the first).
type ProgressPoint struct {
	At        time.Time `json:"at"`
	Steps     int64     `json:"steps"`
	StepsPerS float64   `json:"steps_per_s"`
	Attempt   int       `json:"attempt"`
}

// PowerPoint is the mean power attributed to a job over the interval
// ending at At.
type PowerPoint struct {
	At    time.Time `json:"at"`
	Watts float64   `json:"watts"`
}
