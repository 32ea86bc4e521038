// Package placer holds the placers, stage 3 of the engine: given a job, a
// GPU count and the feasible GPU types, each picks GPUs from the engine's
// pool of free GPUs.
//
// Pack puts a job on the fewest nodes, then best fit: the node whose free
// GPUs exceed the demand by the least, so that whole nodes stay free for
// large jobs. Ties go to the lowest node index, and, across GPU types, to the
// type declared first, so that decisions are deterministic.
//
// Spread is the opposite (least-loaded node first): the job's GPUs come from
// the nodes with the most free GPUs, the baseline of seed 002's energy
// experiments.
//
// Fit is the multi-resource best fit (fit.go): where jobs ask for CPU,
// memory or other resources besides GPUs, it picks the node that strands
// the fewest GPUs behind an exhausted resource, then best fit on GPUs and
// on the dominant share; otherwise it is Pack.
//
// Every placer sees only the GPUs that the job being placed can use: the
// engine hides the free GPUs of nodes that lack the job's other resources
// (engine.Pool) while the placer runs.
//
// Hetero is seed 003's placer: the fastest type with free GPUs, then a swap
// with a running job when that raises total throughput (hetero.go).
//
// Energy is seed 002's placer (energy.go): nodes in load states from their
// calibrated thresholds (EnergyTable, LoadThresholds), ordered state 1, 2,
// 3 and by latency to the job's data (package network), idle power-managed
// nodes between states 2 and 3, claim the job's GPUs up to their headroom; a
// job whose best node is in state 3 is paused. With Upgrades it also moves
// running jobs: to a type at least MinUpgrade times faster (MinIdleUpgrade
// onto an idle type) once that type has room after the round's placements
// (Upgrade, engine.Upgrader), and back to a
// slower type when the head of a strict queue fits on no type, or, elastic,
// on none at its requested size (Target and Yield, engine.Yielder).
package placer
