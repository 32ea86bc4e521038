// Package service holds the scheduler-service shell, one package a folder
// (a room each):
//
//   - api: the wire types, strict decoding, job and replica IDs, request errors, the OpenAPI document;
//   - scheduler: the job lifecycle — transactions, the agents' protocol, the loop and its Plan applier;
//   - jobs: the scheduler's in-memory table (jobs, nodes, model) and the reads the rooms share;
//   - ledger: the durable records of jobs and nodes, what derives from a record alone, pruning;
//   - nodes: the node table, the cluster model of the ready nodes, a job read against the table;
//   - queues: the teams' queues — a submission's queue, the queues' view, their fair-share usage;
//   - metrics: the scheduler's Prometheus counters and the gauges counted from the job table;
//   - settings: the scheduler's configuration, its defaults and checks;
//   - access: the lifecycle's rules on behalf of a caller (ownership, queues, job tokens);
//   - energy: live energy (readings, accounts, thresholds, distances, the report) behind World, and its Room;
//   - learn: online learning (profiles from progress, forecast bias, series), its loop hooks and Room;
//   - forecast: start and finish forecasts of the Live jobs, simulated forward, and their Room;
//   - logs: the replicas' output as files, and their Room (appends, a job's files and status);
//   - server: the HTTP transport (the REST API and the agent protocol);
//   - agent: the node agent that runs replicas under their shims;
//   - shim: a replica's shim and the files of its directory;
//   - machine: what a node has and measures (GPUs, power, accounts, RTTs);
//   - confine: a replica's cgroup (its limits, its devices, its kill);
//   - store: the durable, revisioned store (bbolt or etcd), and the group commit;
//   - auth: bearer tokens, job tokens, identities, the audit log, self-signed TLS;
//   - leader: leader election among servers sharing an etcd store;
//   - edl: seed 001's fault-tolerance primitives for a job's processes (master lock, data tasks);
//   - replay: the jobs a service ran replayed through the simulator (the energy report's pack replay);
//   - client: the Go client the CLI uses.
//
// Each room that reads the scheduler's memory does so through an adapter
// of its own over package jobs' Table (energy.Table, learn.Table,
// logs.Table, metrics.CountsOf), called with the scheduler's lock held.
// What the Kubernetes shell shares with the service is pure and lives in
// core/ (profile.Online.Advance for profiles from progress,
// model.CheckpointNote, engine's wait reasons, model.State.Load for putting
// jobs back into a rebuilt state).
//
// Service packages do I/O and may import core/, each other, sim/ (a
// forecast runs the simulator on the live state), internal/assets and
// config/ (the cluster and scheduler files), never cli/, which sits on top
// of them, nor the test beds of internal/testbed (core/purity_test.go
// checks the layers). Within the service, scheduler imports no transport
// (its TestNoTransport checks it): server imports scheduler, not the
// other way round.
package service
