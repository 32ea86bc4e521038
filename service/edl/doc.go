// Package edl offers seed 001's fault-tolerance primitives (PaddlePaddle
// EDL) to the processes of a training job, as a service of the scheduler:
//
//   - the master lock: at most one process of a job holds the master role
//     at a time, with a lease it renews; when its holder dies (stops
//     renewing) another process takes it, under a new epoch (seed 001: the
//     master takes a unique lock in etcd and writes its address to
//     /master/addr);
//   - the data task queue: the job registers its data chunks as tasks;
//     trainers lease the next task with a TTL and report it done or
//     failed. An expired lease counts as a failure and the task returns to
//     the queue; a task that failed MaxFailures times is marked failed. A
//     pass ends when no task is left to do or leased; the next pass starts
//     with every task that has not failed (seed 001: the master hands out
//     tasks and records progress in the queue). Tasks done feed the job's
//     progress;
//   - pserver slots: a pserver claims the smallest free index below the
//     desired count (/ps/<i>), with a lease; the slot keeps the checkpoint
//     path its holders record, so a restarted pserver that reclaims the
//     index finds its parameters.
//
// The state lives in the scheduler's store under "edl/<job>/" — on etcd
// when several servers share it, written by the leader behind its fence —
// and in memory, where each job's state is loaded on first use; a leader
// elected after a failover loads it again. Every change is durable before
// it is answered; concurrent changes share store transactions (batch.go).
// Leases are deadlines on the leader's clock, kept in the records (not etcd
// leases), so they hold the same way on every backend and survive a
// failover; the servers' clocks should agree (NTP).
//
// A task is reported done only under its current lease: a trainer whose
// lease expired and was handed on cannot report it, so every task is done
// once per pass. See docs/EDL.md.
package edl
