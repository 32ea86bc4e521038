// Package shim is the process that runs one replica for a node agent (the
// hidden command `gpusched shim`: Run, Main), the pattern of
// containerd-shim and conmon, and the files of the replica's directory
// that the replica, its shim and the agents share:
//
//   - shim.json (Started) and exit.json (Exit), written durably by the
//     shim (WriteDurable): which processes to watch and how the replica
//     ended — the contract between a shim and whichever agent watches it;
//   - cgroup.json (BoxFile): the replica's cgroup, written by the agent;
//   - the host files (hosts.go: hostfile, hosts, discover-hosts.sh) and the
//     progress file the replica appends to (progress.go: ProgressWatch);
//   - the process helpers both sides need (proc*.go: boot ID, a process's
//     start time, live members of a process group, child subreaping).
//
// docs/AGENT.md, "Shims", describes the protocol; package agent starts
// the shims and watches them.
package shim
