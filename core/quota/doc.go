// Package quota is the queue layer of the core: per-team queues with a
// guaranteed quota per GPU type, a weight for sharing what is idle and an
// optional limit, borrowing of idle quota, reclaim by checkpoint-aware
// preemption, and fair share by GPU-hours weighted by each GPU type's speed
// for the job. It is a wrapper around any queue policy (Policy): the inner
// policy orders the jobs within each queue, the queue layer decides which
// queue's job goes next and what each queue may take. Every shell uses it
// the same way: recipe.New wraps the policy when queues are configured.
//
// # The round
//
// Policy.Order, the engine's stage 1, first charges every queue for the
// GPUs its jobs held since the previous round (fair-share usage, below),
// then asks the inner policy for its order and splits it into one lane per
// queue, keeping the inner order within each lane. Two tiers follow:
//
//  1. Guaranteed: for each queue, the leading jobs of its lane that fit in
//     its guaranteed quota — counting what the queue holds, and for a job
//     the GPUs it needs at its minimum on the fastest GPU type where its
//     queue still has quota — up to the first job that does not. These may
//     take idle GPUs and reclaim borrowed ones.
//  2. Borrowing: everything else. They use idle GPUs, and those of their
//     own queue's jobs that the inner policy stops (MayTake below). Under a
//     preemptive inner order (tiresias, srtf), each queue's borrowing part
//     first gets, queue by queue, as many GPUs as its borrowing running
//     jobs hold, for the jobs the inner policy ranks first — so the inner
//     policy preempts within a queue, but no borrowing job displaces
//     another queue's —; then the remaining running jobs, then the
//     remaining waiting ones.
//
// Within each tier the queues go in fair-share order: lowest usage per
// unit of weight first (ties by the order the queues are declared in).
// The engine walks the result; with a strict inner order (fifo without
// backfill) a job that does not fit blocks only its own queue
// (engine.Order.Lanes).
//
// # Reclaim
//
// When a guaranteed job waits, the running jobs of queues that hold more
// than their quota of some GPU type become stop candidates (engine
// Order.Stop, released one at a time: engine.Order.Stepwise): the most
// over-served queue first; within a queue, when some of its jobs have
// checkpoints, those that would lose the least work first (the newest
// checkpoint), then the most recently started; and only as many of each
// queue's jobs as its excess over its quota covers, so that reclaim never
// takes a queue below its own guarantee. The engine releases the fewest
// candidates the guaranteed job needs (by lost work again when they have
// checkpoints) and stops only those whose GPUs it takes.
// Candidates released for one guaranteed job stay free for the next
// guaranteed jobs; those no guaranteed job used are taken back before the
// borrowing jobs are placed, so that nothing is stopped for a borrower. The
// preemption's reason in the plan's trace is ReasonReclaim when a job of
// another queue takes the stopped job's GPUs, and Reclaims counts them.
// With a preemptive inner order the guaranteed tier already ranks every
// borrowing job after every guaranteed one; the engine's preemptive
// selection leaves out the running jobs that lose their place, and only
// guaranteed jobs may take their GPUs (engine.Order.Claim with Stepwise).
//
// # Admission (engine.Gate)
//
// The engine asks the Policy before every placement and elastic growth: a
// job may take n GPUs of a type only while its queue stays within its limit
// on that type, and may take a stop candidate's GPUs only while its queue
// stays within its guaranteed quota there. A job that its queue's limit can
// never hold is rejected with the reason. What the round gives out and
// takes back (starts, growth, shrinks, migrations, released candidates) is
// counted as it happens.
//
// # Fair-share usage
//
// A queue's usage is the GPU-seconds its jobs have held, each weighted by
// the GPU type's speed for the job normalised per job type: the job's speed
// on that type over its speed on the fastest type of the cluster (the
// throughput matrix; for a job without a profile, the types' rated TFLOPS).
// A V100 hour of a job that runs four times faster on V100 than on K80
// counts 1, its K80 hour 0.25; with UsageGPUHours every GPU-hour counts 1.
// Usage is charged at the start of every round for the GPUs held since the
// previous one (the allocation the previous plan left, Gate.Done), so it is
// exact when shells run a round at every event (the simulator does). It
// never decays.
//
// Jobs name their queue in model.JobSpec.Queue; a job whose queue is not
// declared belongs to Config.Default, which exists (weight 1, no quota, no
// limit) even when it is not declared.
//
// The package is pure and deterministic: one Policy serves one engine.
package quota
