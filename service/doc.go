// Package service holds the scheduler-service shell, one package a folder
// (a room each):
//
//   - api: the wire types, strict decoding, job and replica IDs, the kinds
//     of request error (not found, conflict) and the OpenAPI document;
//   - scheduler: the job lifecycle — the jobs' transactions, the agents'
//     protocol, the scheduling loop that runs the core's engine on the
//     real clock and its Plan applier; no transport;
//   - ledger: the durable form of jobs and nodes (records, their rules,
//     what the lifecycle derives from a record alone — a resized record,
//     notes, the master port — reading them back, retention's pruning);
//   - nodes: the node table (a node's work and views), the cluster
//     model of the ready nodes, and a job read against the table (its
//     GPUs on a node, its GPU type and model allocation, its ran record);
//   - queues: the teams' queues — a submission's queue, the queues' view,
//     their durable fair-share usage;
//   - metrics: the scheduler's Prometheus counters and state gauges;
//   - settings: the scheduler's configuration, its defaults and checks;
//   - access: the lifecycle's rules on behalf of a caller (ownership,
//     queues, job tokens);
//   - energy: live energy — power readings, the nodes' and jobs' energy,
//     learned thresholds, measured distances, the energy placer's inputs,
//     idle nodes, the energy report — behind a narrow World interface, and
//     the Room callers are handed;
//   - learn: online learning — throughput profiles from progress, what
//     forecasts learn (bias, accuracy), the jobs' series, and their Room;
//   - forecast: start and finish forecasts (the live state, handed over as
//     Live jobs, snapshotted and simulated forward), and their Room;
//   - logs: the replicas' output as files, and their Room (appends with
//     their checks, a job's files and status);
//   - server: the HTTP transport (the REST API and the agent protocol);
//   - agent: the node agent that runs replicas under their shims;
//   - shim: a replica's shim and the files of its directory;
//   - machine: what a node has and measures (GPUs, power, accounts, RTTs);
//   - confine: a replica's cgroup (its limits, its devices, its kill);
//   - store: the durable, revisioned store (bbolt or etcd), and the group
//     commit;
//   - auth, leader, edl, replay, client: credentials, leader election,
//     elastic-training state, the energy report's pack replay, and the Go
//     client the CLI uses.
//
// Service packages do I/O and may import core/, each other, sim/ (a
// forecast runs the simulator on the live state), internal/assets and
// config/ (the cluster and scheduler files), never cli/, which sits on top
// of them, nor the test beds of internal/testbed (core/purity_test.go
// checks the layers). Within the service, scheduler imports no transport
// (its TestNoTransport checks it): server imports scheduler, not the
// other way round.
package service
