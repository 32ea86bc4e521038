// Package model holds gpusched's vocabulary as plain data: the cluster (nodes
// of GPUs with a type, memory and rated performance), jobs (spec and run-time
// status), allocations, and the State that the engine schedules; and the
// words every shell uses for a job's latest checkpoint (CheckpointNote).
//
// The package is part of the pure core: it does no I/O, reads no clock and
// holds no globals. Time is a Time value (milliseconds) passed in by the
// shell. Resources (GPU counts, memory) are integers.
package model
