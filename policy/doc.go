// Package policy holds the queue policies, stage 1 of the engine.
//
// FIFO walks waiting jobs in arrival order (submit time, then arrival rank).
// Strict FIFO stops at the first job that does not fit; with Backfill, later
// jobs that fit start in its place (no reservation is kept for the blocked
// job, so backfill can delay it).
//
// SRTF is an oracle: it knows every job's remaining work and orders running
// and waiting jobs by remaining time at the job's best speed on its
// requested GPU count, shortest first, preempting running jobs that lose
// their place. It is preemptive shortest-remaining-time-first, a lower bound
// on average JCT that no real scheduler can reach (it needs durations), used
// for comparison.
package policy
