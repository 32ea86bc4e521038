// Package server is the scheduler service's server side (`gpusched server`):
// the REST API under /v1 (jobs, nodes, logs), the agent protocol
// (registration, work long-poll, status reports, log upload), the durable job
// records and the scheduling loop that runs the pure core (engine.Schedule)
// on the real clock and applies its plans to the live cluster.
//
// State lives in two places. The store (package store, bbolt on disk) holds
// every job under "jobs/<id>" and every node under "nodes/<name>" as JSON;
// memory holds the same jobs plus a model.State of the active ones and the
// work list of every node. One mutex guards memory; every change of a job's
// life-cycle is written to the store (one transaction per batch of changes)
// before memory changes and before any agent or client learns of it:
//
//   - a submission is answered 201 only after its record is durable;
//   - a job is recorded running, with its allocation and replica IDs, before
//     its replicas appear in any node's work;
//   - a replica's exit is recorded before the agent is told (Work.Acked) that
//     it may forget it;
//   - a checkpoint report is recorded before it is answered. Plain progress
//     reports are the one exception: they change memory at once and reach
//     the store with the job's next record write, within 5 s (progress.go).
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
// A server restarted on the same store reloads every job; it waits (at most
// the heartbeat timeout) for the nodes of the previous run to register again
// before it schedules, reconciles the replicas the agents report, and loses
// the nodes that do not come back as above.
//
// Two learned things live beside the jobs. Progress reports of jobs with a
// model teach a profile.Online the throughput per (model, GPU type, GPU
// count); its estimates are stored under "profiles/online" and merged over
// the embedded matrix for the engine (profiles.go). Agents' power readings
// become gauges, each job's energy_kwh (written with its progress) and a
// bounded ring of calibration samples per node under "power/<node>"
// (power.go). Both are written at most every few seconds, not per report.
//
// See docs/SERVER.md for the API, the states, the restart semantics and the
// metrics.
package server
