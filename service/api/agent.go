package api

import (
	"fmt"
	"time"
)

// The agent protocol. An agent registers (POST /v1/agents/register), then
// loops: it long-polls its work (GET /v1/agents/{name}/work?after=V, which
// answers when the work's version exceeds V or after a timeout, with the
// full list of replicas the node must run), starts the replicas it does not
// run, stops the ones no longer listed (SIGTERM, the replica's grace period,
// SIGKILL of the process group), and reports (POST /v1/agents/{name}/status,
// also its heartbeat) every replica it runs or has seen exit. An exited
// replica is reported until the server acknowledges it in Work.Acked, so a
// result survives a server restart and is recorded once. A report also
// carries what each replica last wrote to its progress file
// (ReplicaStatus.Progress); the agent reports at once when a replica
// announces a checkpoint. A replica whose exit status the agent cannot know
// (its shim died, or the node rebooted) is reported exited with Lost set,
// and the server handles it like a replica of a lost node.

// Register is an agent's registration (and re-registration after the server
// restarted or forgot it).
type Register struct {
	// Name is the node's name, unique in the cluster; a valid host-list
	// entry (no ':', ',', white space).
	Name string `json:"name"`
	// Addr is the host name or address other nodes reach it by.
	Addr string `json:"addr"`
	GPUs []GPU  `json:"gpus"`
	// Replicas are the replicas the agent still runs or has seen exit.
	Replicas []ReplicaStatus `json:"replicas,omitempty"`
	// Capacity is what the node offers jobs besides its GPUs, by resource
	// name in Kubernetes quantity syntax (FormatResources): its CPUs
	// ("cpu": "62") and memory ("memory": "500Gi") less what the admin
	// reserves, and named resources ("rdma/hca": "4"). A resource the node
	// does not report is one it has none of; nil (an older agent): none.
	Capacity map[string]string `json:"capacity,omitempty"`
}

// RegisterReply answers a registration.
type RegisterReply struct {
	// HeartbeatS is how often the agent must report, in seconds.
	HeartbeatS float64 `json:"heartbeat_s"`
	// Credential is the node's own credential, issued when it registered
	// with a join token (docs/SECURITY.md): the agent keeps it and
	// authenticates with it from then on. Empty otherwise.
	Credential string `json:"credential,omitempty"`
}

// Status is an agent's periodic report, also its heartbeat.
type Status struct {
	Replicas []ReplicaStatus `json:"replicas"`
	// Version is the version of the newest Work the agent had applied
	// (started and stopped replicas for) when it wrote this report; 0 when
	// unknown. A replica the server has taken out of the work is gone once
	// a report with a Version at least the work's version without it does
	// not list it (it was stopped before it ever started).
	Version int64 `json:"version,omitempty"`
	// Power is the node's latest power reading; nil when the agent has
	// none (no NVML, no Redfish endpoint).
	Power *PowerReading `json:"power,omitempty"`
	// Probes are the round-trip times to data endpoints (Work.Probes)
	// measured since the agent's previous report.
	Probes []ProbeResult `json:"probes,omitempty"`
}

// ReplicaPhase is where a replica is on its node.
type ReplicaPhase string

// Replica phases.
const (
	// ReplicaRunning: the process group is alive.
	ReplicaRunning ReplicaPhase = "running"
	// ReplicaExited: the process exited (ExitCode) or could not start
	// (ExitCode -1 and Error).
	ReplicaExited ReplicaPhase = "exited"
)

// ReplicaStatus is one replica as its agent sees it.
type ReplicaStatus struct {
	ID       string       `json:"id"`
	Job      string       `json:"job"`
	Phase    ReplicaPhase `json:"phase"`
	PID      int          `json:"pid,omitempty"`
	ExitCode int          `json:"exit_code"`
	// Signal names the signal that ended the process, if one did.
	Signal     string     `json:"signal,omitempty"`
	Error      string     `json:"error,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Progress is what the replica last wrote to its progress file
	// (GPUSCHED_PROGRESS_FILE); nil when it wrote nothing.
	Progress *ReplicaProgress `json:"progress,omitempty"`
	// Lost (with Phase exited, ExitCode -1 and the reason in Error): the
	// replica's processes are gone and its exit status is unknown — its
	// shim died without recording it, or the node rebooted. The server
	// handles it like the loss of the replica's node: an elastic job
	// continues without it if it can, any other job is queued again to
	// restart from its checkpoint; the job does not fail.
	Lost bool `json:"lost,omitempty"`
	// OutOfMemory (with the limit in Error, e.g. "out of memory
	// (memory.max 256Mi)"): the kernel killed a process of the replica
	// because its cgroup ran out of memory, and the replica failed.
	OutOfMemory bool `json:"out_of_memory,omitempty"`
}

// Work is the complete list of replicas a node must run now.
type Work struct {
	// Version increases whenever the node's work changes.
	Version  int64     `json:"version"`
	Replicas []Replica `json:"replicas"`
	// Acked lists exited replicas whose result the server has stored; the
	// agent may forget them.
	Acked []string `json:"acked,omitempty"`
	// Probes lists the data endpoints whose round-trip time the agent
	// measures, periodically and with jitter, and reports in
	// Status.Probes ("host:port" or an http(s) URL; docs/AGENT.md, "RTT
	// probes"). Status replies carry it too.
	Probes []string `json:"probes,omitempty"`
}

// Replica is one process group to run on a node: the part of a job on that
// node (one per node; it holds all the job's GPUs there).
type Replica struct {
	// ID is unique per job attempt and node, e.g. "j12.1.0" (job j12,
	// attempt 1, node rank 0 at the attempt's start). A replica never
	// changes its ID. A live resize sends a running replica again under
	// the same ID with new GPUs, Env and HostFile: the agent rewrites its
	// host and environment files (GPUSCHED_ENV_FILE), signals node rank 0
	// (SIGUSR1) on a new GPUSCHED_GENERATION, and never restarts it.
	ID      string   `json:"id"`
	Job     string   `json:"job"`
	Command []string `json:"command"`
	// Env is the complete extra environment: the spec's env plus the
	// membership variables (CUDA_VISIBLE_DEVICES, MASTER_ADDR, MASTER_PORT,
	// WORLD_SIZE, NNODES, NODE_RANK, LOCAL_WORLD_SIZE, GPUSCHED_JOB_ID,
	// GPUSCHED_GENERATION, GPUSCHED_RESTART_COUNT,
	// GPUSCHED_CHECKPOINT_STEPS, ...). The agent adds GPUSCHED_HOSTFILE,
	// GPUSCHED_PROGRESS_FILE and the other variables of docs/AGENT.md.
	Env     map[string]string `json:"env"`
	Workdir string            `json:"workdir,omitempty"`
	// GPUs are the node's device indices the replica uses.
	GPUs []int `json:"gpus"`
	// HostFile is the job's Horovod host list ("host:slots" lines); the
	// agent writes it to a file named by GPUSCHED_HOSTFILE.
	// That file is in the hostfile syntax of horovodrun --hostfile and
	// mpirun ("host slots=N" lines); the agent also sets GPUSCHED_HOSTS
	// ("host:slots,...") and GPUSCHED_HOST_DISCOVERY_SCRIPT (prints the list
	// as sent), docs/AGENT.md.
	HostFile     string `json:"host_file"`
	GracePeriodS int    `json:"grace_period_s"`
	// User is the job's owner (the authenticated user who submitted it):
	// an agent running as root starts the replica as that user's Unix
	// account (docs/SECURITY.md, "On the nodes"). Empty in work sent by
	// older servers and in older agents' records.
	User string `json:"user,omitempty"`
	// Limits are what the replica may use of its node besides its GPUs:
	// its GPUs' requests summed ("cpu", "memory"; Kubernetes quantity
	// syntax, FormatResources). An agent that confines replicas gives each
	// a cgroup with these limits (docs/SECURITY.md, "On the nodes"). Absent
	// when the job asks for neither, and in work sent by older servers.
	Limits map[string]string `json:"limits,omitempty"`
}

// LogChunk carries replica output from an agent to the server (POST
// /v1/agents/{name}/logs). Offset is where Data starts in the replica's
// log; the server appends only at its current length, so a resent chunk is
// harmless.
type LogChunk struct {
	Replica string `json:"replica"`
	Job     string `json:"job"`
	Offset  int64  `json:"offset"`
	// Data is the raw output (base64 in JSON).
	Data []byte `json:"data"`
}

// LogAck answers a log chunk with the server's length of that replica's log,
// from which the agent sends next.
type LogAck struct {
	Length int64 `json:"length"`
}

// Failed reports whether a replica's exit is a failure.
func (rs ReplicaStatus) Failed() bool { return rs.ExitCode != 0 || rs.Signal != "" || rs.Error != "" }

// Describe says how a replica ended.
func (rs ReplicaStatus) Describe() string {
	switch {
	case rs.Error != "" && rs.ExitCode == -1 && rs.PID == 0:
		return "could not start: " + rs.Error
	case rs.OutOfMemory && rs.Error != "":
		return "was killed: " + rs.Error
	case rs.Error != "":
		return fmt.Sprintf("ended (exit code %d): %s", rs.ExitCode, rs.Error)
	case rs.Signal != "":
		return fmt.Sprintf("was killed by %s (exit code %d)", rs.Signal, rs.ExitCode)
	}
	return fmt.Sprintf("exited with code %d", rs.ExitCode)
}
