// Package confine keeps a replica's processes in a box of the kernel's
// making: a cgroup of its own per replica, which limits its CPU (the
// CFS quota: cpu.max, cpu.cfs_quota_us), memory (memory.max,
// memory.limit_in_bytes) and number of tasks (pids.max), and lets it open
// only the devices it was given (a BPF device filter on cgroup v2, the
// devices controller on v1) — the way Slurm's task/cgroup plugin
// (ConstrainCores, ConstrainRAMSpace, ConstrainDevices) and runc confine
// their jobs and containers.
//
// The cgroup files are written by github.com/opencontainers/cgroups, the
// cgroup managers of runc (fs for v1, fs2 for v2 with its eBPF device
// filter); this package chooses the version (Detect), says which limits a
// replica gets (Limits, DeviceRules), puts a command into its box (Box.Start:
// CLONE_INTO_CGROUP on v2; on v1 the starting process steps into the box
// for the fork and out again), and kills (Box.Kill: cgroup.kill, or freeze,
// SIGKILL every member, thaw), measures (Box.Stats, Box.OOMKills) and
// removes boxes.
//
// A Box is plain data (its version and directories) that an agent writes
// into a replica's directory, so that the replica's shim, and a restarted
// agent, act on the same cgroup.
package confine
