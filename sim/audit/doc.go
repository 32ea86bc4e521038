// Package audit checks simulator event logs (DESIGN.md, "Event log") without
// trusting the simulator's own bookkeeping.
//
// Check reads a log line by line with its own types, verifies its invariants
// (the first line describes the cluster; time never goes back; every job is
// submitted once before anything else happens to it; jobs start, resize,
// stop and are rejected only from states where that makes sense; no GPU is
// held by two jobs; allocations exist, have no duplicates, respect the job's
// [min_gpus, max_gpus] and gpu_type) and recomputes the run's figures from
// the log alone. Compare then holds a `gpusched sim --json` summary against
// those figures.
//
// The package deliberately imports nothing from the simulator (sim, metrics,
// model, eventlog): an auditor that shared their code would share their bugs.
package audit
