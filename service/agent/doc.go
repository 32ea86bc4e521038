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
// (output.log, the process's stdout and stderr), its host files, a small
// record (replica.json) of what the agent knows about it, and the files of
// its shim. The records let a restarted agent carry on: a replica that is
// still running is adopted, one that exited is reported until
// acknowledged, and no replica ID is ever started twice.
//
// # Shims
//
// Every replica runs under a shim (shim.go, RunShim: the hidden command
// `gpusched shim`, this program's own executable, Config.Shim), the
// pattern of containerd-shim and conmon. The agent starts the shim in a
// session of its own (setsid; stdin /dev/null, output to the replica's
// log), so that it survives the agent, a kill -9 included. The shim starts
// the replica's command in a new process group, writes shim.json (its own
// PID and start time, the command's PID, the boot ID) and sends the PID to
// the agent over a pipe; it makes itself a child subreaper, reaps the
// group's orphans, waits until the main process has exited and the whole
// group is gone (leftovers get SIGTERM, the grace period, SIGKILL) and
// writes exit.json (exit code, signal, end time) atomically and durably
// (temporary file, fsync, rename, fsync of the directory). The files are
// the contract between a shim and whichever agent watches it (shimfile.go).
//
// The agent, not the shim, sends the stop signals (SIGTERM to the group,
// grace period, SIGKILL): it knows the group's ID from the record, so a
// restarted agent can stop a replica it did not start. The agent that
// started a shim waits for it; a restarted agent is not the shim's parent
// (the shim was re-parented to init or a subreaper), so its supervisor
// looks at the shim every progress poll: while the shim's PID (with its
// start time, against PID reuse, and not a zombie) runs, so does the
// replica; once it is gone, exit.json — written before the shim exits —
// says how the replica ended. A shim gone without exit.json (killed), or
// records of an earlier boot without exit.json (the node rebooted), make
// the replica lost: processes of its group that still run are stopped
// (SIGTERM, grace, SIGKILL; never across a reboot), then it is reported
// exited with api.ReplicaStatus.Lost, which the server handles like the
// loss of the replica's node (queued again from its checkpoint, or an
// elastic job shrinks), not as a failure. A record of an older agent,
// without a shim, is adopted by its process group as before, and ends with
// exit code -1, its status unknown (supervise.go).
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
// at once (progress.go). Progress, log shipping and live resizes work the
// same for adopted replicas: they go through files and the group's PID.
//
// A replica counts as exited only once every process of its group is gone
// (zombies do not count: they hold no memory and no GPU, and orphans of a
// killed shim may be left to an init that never reaps them). On Linux the
// agent is a child subreaper too: it reaps the orphans that escaped their
// group once their shim has exited.
//
// Under RunAsOwner (an agent running as root) each replica's command runs
// as its job owner's Unix account (api.Replica.User, through
// Config.UserMap): its shim stays root and starts the command with that
// account's uid, gid and groups (shim --uid/--gid/--groups); the replica's
// directory is the agent's (0711) with records only root reads, and its
// working directory (work/), output, progress and environment files belong
// to the account. An owner without an account on the node fails to start
// there; root only when the map names it (identity.go).
//
// GPUs are declared (ParseGPUs: "v100=4") or discovered through NVML
// (DiscoverGPUs; needs cgo and the NVIDIA driver). The package runs on Unix
// systems; docs/AGENT.md is the user's guide.
package agent
