// Package placer holds the placers, stage 3 of the engine: given a job, a
// GPU count and the feasible GPU types, each picks GPUs from the engine's
// pool of free GPUs.
//
// Pack puts a job on the fewest nodes, then best fit: the node whose free
// GPUs exceed the demand by the least, so that whole nodes stay free for
// large jobs. Ties go to the lowest node index, and, across GPU types, to the
// type declared first, so that decisions are deterministic.
package placer
