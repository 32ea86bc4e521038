// Package scheduler is the scheduler service's job lifecycle: the job
// records' transactions, the work of the nodes' agents (their protocol),
// the scheduling loop that runs the pure core (engine.Schedule) on the
// real clock and carries its plans out (engine.Apply with this package's
// engine.Applier). Its memory is package jobs' Table (the jobs, the
// nodes, the scheduling model), guarded by its mutex; the rooms beside it
// read and charge that table through adapters of their own, with the
// mutex held, and rooms.go hands them to its callers:
//
//   - jobs: the in-memory table and its reads (a job's view and state by
//     round, the jobs by sequence, the GPUs a node's jobs hold);
//   - ledger: the records' durable form and retention (prune.go), and
//     what is derived from a record alone (a resize's record, the
//     history's notes, the master port);
//   - nodes: the node table's rules and the cluster model (node.go,
//     cluster.go), and a job read against the table (its GPUs and GPU
//     type, its model allocation, its ran record);
//   - queues: a submission's queue, the queues' view and usage;
//   - metrics: the Prometheus metrics, the gauges from metrics.CountsOf;
//   - settings: Config, its defaults and checks (New takes a
//     settings.Config; callers name settings' defaults and ErrConfig);
//   - energy: live energy, reading the table through energy.Table;
//     callers are handed its Room (Energy: the report, the replay, the
//     calibration, the power samples);
//   - learn: online learning through learn.Table (its hooks: Observe,
//     Started, Ended, the ticks; learn.go installs the learned matrix);
//     callers are handed its Room (Learning: the profiles, the forecasts'
//     accuracy, the jobs' series);
//   - forecast: forecasts, from the Live jobs, with learn.Table as their
//     World; callers are handed its Room (Forecasts: ETA, ETAs);
//   - logs: the replicas' logs; callers are handed its Room (Logs: append
//     a chunk, a job's files and status, the signal of a change), which
//     reads the table through logs.Table.
//
// The access rules on behalf of callers are package access's.
// It knows no transport: package
// server serves it over HTTP (the REST API and the agent protocol); another
// transport, or a shell arranged differently, uses the same methods.
//
// # The API
//
// New builds a Scheduler from a Config (it opens the store unless given
// one and loads every job and node); Run runs the scheduling loop; Close
// stops it. Its methods are safe for concurrent use:
//
//   - jobs: Submit, Jobs, Job, Cancel, Progress, Hostfile;
//   - the agent protocol: Register, Work (the long poll), Status, and
//     Logs().Append;
//   - what the service shows: Nodes, Queues, the rooms (Energy, Learning,
//     Logs, Forecasts), and the Prometheus registry (Gatherer);
//   - forecasts (package forecast takes, runs and serves them): the
//     Forecasts room; the dashboard's view: Cluster;
//   - notifications: Logs().Changed (a log grew or a job changed state)
//     and Done (the scheduler stops).
//
// A request that cannot be carried out as asked fails with an error of a
// kind (errors.Is; package api's, which the rooms return too, under the
// same names here): ErrNotFound, ErrConflict, ErrNotRegistered (a node
// that must register again, also an ErrNotFound), or an *api.FieldError
// for an invalid request, all with messages meant for the user. Anything
// else is a failure (of the store: store.ErrClosed while the scheduler
// shuts down). Wire types are package api's.
//
// # Imports
//
// The package may import core/, config/, internal/assets and the
// service's api, store, jobs, ledger, nodes, queues, metrics, settings,
// energy, learn, logs, forecast and replay; never
// net/http, server, client, agent or cli (TestNoTransport checks it).
// Transports and shells import it.
//
// # Durability
//
// State lives in two places. The store (package store: bbolt on disk, or
// etcd shared by several servers, of which the leader runs a scheduler on
// the store behind its fence and the others read it: ledger.ReadJob)
// holds every job under "jobs/<id>" and every node under "nodes/<name>" as
// JSON; memory holds the same jobs plus a model.State of the active ones
// and the work list of every node. One mutex guards memory; every change
// of a job's life-cycle is written to the store (one transaction per batch
// of changes, batch.go; a round's whole plan is one batch) before memory
// changes and before any agent or client learns of it:
//
//   - a submission is acknowledged only after its record is durable;
//   - a job is recorded running, with its allocation and replica IDs, before
//     its replicas appear in any node's work;
//   - a replica's exit is recorded before the agent is told (Work.Acked) that
//     it may forget it;
//   - a checkpoint report is recorded before it is answered. Plain progress
//     reports are the one exception: they change memory at once and reach
//     the store with the job's next record write, within 5 s (progress.go).
//
// # Life-cycle
//
// Stopping a running job (cancel, a preemption, a migration or a resize from
// the plan, a failed replica, a lost node) is asynchronous: the job's record
// says why it stops, its replicas leave the nodes' work, and its GPUs stay
// held in the model until every replica is gone (reported exited, or absent
// from a report of an agent that has applied the work without it, or on a
// node that was lost). Then the job becomes cancelled, failed, or preempted
// (queued again, to restart from its latest checkpoint as a new attempt).
//
// A node silent for the heartbeat timeout is marked down and its replicas
// are lost (lost.go): an elastic job that keeps its minimum GPUs without
// them continues, shrunk, with a new membership generation; any other job
// is stopped and queued again.
//
// A scheduler restarted on the same store reloads every job; it waits (at
// most the heartbeat timeout) for the nodes of the previous run to register
// again before it schedules, reconciles the replicas the agents report, and
// loses the nodes that do not come back as above.
//
// A job's time limit (time_limit_s) is enforced every round tick
// (limit.go): an attempt past it is stopped and the job fails.
//
// Forecasts snapshot the active jobs and the cluster under the mutex and
// run the simulator outside it, at most once per change of the jobs or
// nodes; what they learn (the spread of each class of lengths, users' run
// times, the accuracy of the predictions served) is written under
// "forecast/history" at most every few seconds.
//
// Two learned things live beside the jobs. Progress reports of jobs with a
// model teach a profile.Online the throughput per (model, GPU type, GPU
// count); its estimates are stored under "profiles/online" and merged over
// the embedded matrix for the engine (package learn). Agents' power
// readings become gauges, each job's energy_kwh (written with its
// progress) and a bounded ring of calibration samples per node under
// "power/<node>" (package energy). Both are written at most every few
// seconds, not per report.
//
// See docs/SERVER.md for the API, the states, the restart semantics and the
// metrics.
package scheduler
