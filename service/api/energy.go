package api

import "time"

// EnergyReport is the answer of GET /v1/energy (`gpusched energy`): what
// the cluster drew, by node, by job, by user and by load state, and the
// modelled energy of the same jobs under the pack placer
// (docs/ENERGY.md, "What energy placement saved"). Energies are in kWh;
// "measured" parts come from power readings, the rest from the power
// model.
type EnergyReport struct {
	// Since is when the server began to account the nodes' energy; At is
	// the report's time.
	Since  time.Time `json:"since"`
	At     time.Time `json:"at"`
	Policy string    `json:"policy"`
	Placer string    `json:"placer"`
	// TotalKWh is what the nodes drew since Since; MeasuredKWh the part
	// from readings, ModelledKWh the rest.
	TotalKWh    float64 `json:"total_kwh"`
	MeasuredKWh float64 `json:"measured_kwh"`
	ModelledKWh float64 `json:"modelled_kwh"`
	// JobsKWh is the part attributed to jobs, IdleKWh the rest (idle GPUs
	// and the share of idle nodes).
	JobsKWh float64 `json:"jobs_kwh"`
	IdleKWh float64 `json:"idle_kwh"`
	// PackKWh is the modelled energy of the same jobs (each with the GPUs
	// and GPU type it ran on and the time it ran) replayed through the
	// simulator under the pack placer and the server's policy on the same
	// cluster and power model; Replay says how, PackError why it is
	// missing.
	PackKWh   *float64       `json:"pack_kwh"`
	PackError string         `json:"pack_error,omitempty"`
	Replay    *ReplaySummary `json:"replay,omitempty"`
	// States splits TotalKWh by the nodes' load state: "idle", "1", "2"
	// and "3".
	States []StateEnergy   `json:"states"`
	Nodes  []NodeEnergyUse `json:"nodes"`
	Jobs   []JobEnergyUse  `json:"jobs"`
	// Users sums the jobs' energy by user (the job's owner; "" for jobs
	// without one). Queues will be added the same way.
	Users []GroupEnergyUse `json:"users"`
}

// ReplaySummary describes the pack replay of an EnergyReport.
type ReplaySummary struct {
	// Jobs is the number of jobs replayed; From and To bound them (the
	// first submission, the last end or now).
	Jobs int       `json:"jobs"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// PackJobsKWh and PackIdleKWh split PackKWh like JobsKWh and IdleKWh.
	PackJobsKWh float64 `json:"pack_jobs_kwh"`
	PackIdleKWh float64 `json:"pack_idle_kwh"`
	// ModelKWh is the same power model's energy of the run as it went —
	// the nodes' modelled draw at their actual busy GPUs, from the first
	// submission to the latest end (or now) —, and SavedKWh is PackKWh −
	// ModelKWh: what the placement saved against pack, model against
	// model (negative: it cost more).
	ModelKWh float64 `json:"model_kwh"`
	SavedKWh float64 `json:"saved_kwh"`
	// Command reproduces the figure from the files of GET
	// /v1/energy/replay (`gpusched energy --replay DIR` writes them).
	Command string `json:"command"`
}

// StateEnergy is the energy drawn in one load state.
type StateEnergy struct {
	State string  `json:"state"`
	KWh   float64 `json:"kwh"`
}

// NodeEnergyUse is one node's energy.
type NodeEnergyUse struct {
	Name        string  `json:"name"`
	Class       string  `json:"class,omitempty"`
	KWh         float64 `json:"kwh"`
	ModelledKWh float64 `json:"modelled_kwh,omitempty"`
	// Measured: all of KWh comes from readings.
	Measured bool `json:"measured"`
}

// JobEnergyUse is one job's energy.
type JobEnergyUse struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	User        string  `json:"user,omitempty"`
	State       State   `json:"state"`
	KWh         float64 `json:"kwh"`
	ModelledKWh float64 `json:"modelled_kwh,omitempty"`
	// Measured: all of KWh comes from readings.
	Measured bool `json:"measured"`
}

// GroupEnergyUse is the energy of a group of jobs (a user).
type GroupEnergyUse struct {
	Name        string  `json:"name"`
	Jobs        int     `json:"jobs"`
	KWh         float64 `json:"kwh"`
	ModelledKWh float64 `json:"modelled_kwh,omitempty"`
	Measured    bool    `json:"measured"`
}

// EnergyReplay is the answer of GET /v1/energy/replay: the inputs of the
// pack replay as the files `gpusched sim` reads.
type EnergyReplay struct {
	// Cluster is a cluster file (YAML) of the nodes the jobs ran on, with
	// their power model.
	Cluster string `json:"cluster"`
	// Trace is the jobs in the native trace format (JSON lines).
	Trace string `json:"trace"`
	// Policy is the server's queue policy, for `gpusched sim --policy`.
	Policy string `json:"policy"`
}
