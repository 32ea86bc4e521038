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
// Stop candidates are the running jobs the round may stop: the jobs of
// Order.Stop (for the leading Order.Claim jobs) and those a preemptive order
// left out. Their GPUs are released only for a job that may claim them and
// does not fit on free GPUs, and a candidate none of whose GPUs a placement
// takes keeps running. Which candidates are stopped, when several sets of
// them would let the job fit, is decided so (checkpoint-aware victims):
//
//   - When no candidate has a checkpoint (model.Job.Checkpoint < 0 for all
//     those not yet released at the round's first claim), every candidate
//     is released at once and the placer's choice of GPUs decides; this is
//     the simulator's case, whose jobs never checkpoint.
//   - Otherwise the candidates are ordered by the work they would lose
//     (model.Job.LostWork: now - max(Checkpoint, LastStart)), least first,
//     ties by the policy's order: the Order.Stop jobs in the policy's order,
//     then the jobs a preemptive order left out, lowest-ranked first. For
//     each claiming job (its requested size, then its minimum) the engine
//     releases the shortest prefix of that order with which the placer fits
//     it, so a candidate that loses more work is stopped only when the job
//     cannot fit without it. A job that fits with no prefix releases none
//     (with a Donor scaler, all, as without checkpoints). A prefix released
//     for one job stays released for the following ones.
//
// A queue policy that is also a Gate (the queue layer, package quota) is
// consulted before every placement, claim and elastic growth: it narrows
// the GPU types a job may take (its queue's limit; for a claim, its
// queue's guaranteed quota), is told what the round gives out, and sees
// the finished plan. Its order may give each job a lane (Order.Lanes: a
// strict order blocks per lane) and ask for Stepwise release of stop
// candidates even without checkpoints; the candidates that can help a
// claiming job (those holding GPUs of its feasible types) are tried first,
// and a shape that cannot be placed even with every candidate released is
// not tried again in the round.
//
// The policy's own order is never overridden: a running job that a
// preemptive order ranks high enough to keep its GPUs is never a candidate,
// whatever its checkpoint.
//
// On a cluster that models resources besides GPUs (CPU, memory, pods,
// named ones: model.Node.Capacity, model.JobSpec.Requests), the pool books
// them beside the GPUs (vector.go), placers see only GPUs a job can use
// (focus.go, place.go: refine, then focus), every placement and every job
// it moves is checked against every resource, nodes that no job of the
// round can use are set aside (starve.go), preemptive policies budget the
// resources per type as they do GPUs, and a job that waits for a resource
// is told which (docs/RESOURCES.md). Without such resources every path is
// the GPU-only one.
//
// The engine keeps scratch buffers between rounds, so one Engine must not be
// used by two goroutines at once; its results depend only on its inputs.
package engine
