// Package engine is the heart of gpusched's pure core: Engine.Schedule takes
// the State and the current time and returns a Plan (jobs to start, resize,
// preempt or reject) together with a decision trace, as data. Shells (the
// simulator, the server, the Kubernetes mode) apply the plan.
//
// A round runs four stages, each behind a small interface:
//
//  1. QueuePolicy orders the candidate jobs (fifo, srtf, ...).
//  2. Feasibility keeps the GPU types a job can ever use: its type
//     constraint, per-GPU memory at least its peak memory, a non-zero speed
//     in its profile, and enough GPUs of that type in the cluster for its
//     minimum (gang). A job with no feasible type is rejected.
//  3. Placer picks GPUs from the Pool of free GPUs.
//  4. Scaler resizes elastic jobs (none by default).
//
// A non-preemptive order is walked once: each waiting job is placed if it
// fits; strict order stops at the first job that does not, backfill goes on.
// A preemptive order (running jobs included) is first selected by GPU counts
// as if the cluster were empty, running jobs left out are preempted, the
// selected waiting jobs are placed, and a preemption whose GPUs nobody took
// is cancelled again. Gang allocation is all-or-nothing: a job gets its
// whole allocation (at least its minimum GPUs) or none.
//
// The engine keeps scratch buffers between rounds, so one Engine must not be
// used by two goroutines at once; its results depend only on its inputs.
package engine
