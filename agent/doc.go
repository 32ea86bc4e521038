// Package agent is gpusched's node agent: the process on every GPU machine
// that registers the node's GPUs with the server, runs the replicas the
// server assigns to the node, and reports what became of them.
//
// The protocol is the one described in package api (api/agent.go). Run
// registers, then runs three loops until the server is lost or the context
// ends:
//
//   - work: long-polls GET /v1/agents/{name}/work?after=V and reconciles: a
//     listed replica the agent has never seen is started; a running replica
//     no longer listed is stopped (SIGTERM to its process group, its grace
//     period, SIGKILL to the group); the IDs in Work.Acked are forgotten.
//   - status: POST /v1/agents/{name}/status every heartbeat (the server's
//     RegisterReply.HeartbeatS) and at once when a replica starts or exits.
//     An exited replica is reported until the server acknowledges it.
//   - logs: every 250 ms, POST /v1/agents/{name}/logs with the output a
//     replica wrote beyond the length the server acknowledged.
//
// When the server cannot be reached, or answers that it does not know the
// node (404), the agent registers again, with exponential backoff, and keeps
// its replicas running meanwhile: a server restart loses no result.
//
// Every replica has a directory <data>/replicas/<id> that holds its output
// (output.log, the process's stdout and stderr), its host files and a small
// record (replica.json) of what the agent knows about it. The records let a
// restarted agent carry on: a replica that is still running is adopted, one
// that exited is reported until acknowledged, and no replica ID is ever
// started twice. A replica that exits while no agent runs is reported with
// exit code -1, since its exit status is lost.
//
// A running replica whose work entry changes under the same ID (a live
// resize of an elastic job: new GPUs, host list, environment, membership
// generation) keeps running: the agent rewrites its host files and its
// environment file (GPUSCHED_ENV_FILE, <data>/replicas/<id>/env: NAME=value
// lines) atomically and, when the generation changed and the replica is
// node rank 0, sends SIGUSR1 to its process group leader if that process
// handles the signal (envfile.go).
//
// A replica may report its progress and checkpoints by appending lines
// "steps=N [checkpoint=1]" to its progress file (GPUSCHED_PROGRESS_FILE,
// <data>/replicas/<id>/progress). Its supervisor reads the new lines every
// 200 ms and once more after the exit; the latest progress and checkpoint go
// with the replica's status (api.ReplicaStatus.Progress), a new checkpoint
// at once (progress.go).
//
// A replica is a process group: its command runs in a new group
// (Setpgid), signals go to the whole group, and a replica counts as exited
// only once every process of the group is gone — members that outlive the
// group leader get SIGTERM, the grace period, then SIGKILL. On Linux the
// agent makes itself a child subreaper, so it reaps the group's orphans
// itself whatever the machine's init does.
//
// GPUs are declared (ParseGPUs: "v100=4") or discovered through NVML
// (DiscoverGPUs; needs cgo and the NVIDIA driver). The package runs on Unix
// systems; docs/AGENT.md is the user's guide.
package agent
