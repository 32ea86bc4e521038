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
//
// Tiresias is the discretized two-dimensional LAS of Tiresias (Gu et al.,
// NSDI 2019), a heterogeneity-blind baseline, following its simulator
// (SymbioticLab/Tiresias, simulator/run_sim.py, dlas_sim_jobs with
// --schedule=dlas-gpu). Attained service is GPUs × seconds run (j_gt =
// executed_time × num_gpu); a job enters queue 0 and moves down one queue
// when its attained service reaches the queue's limit ("j_gt >=
// queue_limit[cur_qid]"); the limits default to the simulator's 3250 and
// 7200 GPU-seconds (simulator/jobs.py: num_queue = 3, queue_limit). Higher
// queues go first and may preempt lower ones. Inside a queue the simulator
// keeps a list: jobs are appended when they enter it, and after each pass its
// waiting jobs are moved behind its running ones; so running jobs come
// first (never preempted by a job of their own queue), then jobs preempted
// in the queue (latest first), then the others in order of entry. With a
// PROMOTEKNOB (the simulator's solve_starvation; 0, off, for dlas-gpu), a
// waiting job below queue 0 whose waiting time since it first ran reaches
// the knob times its run time ("last_pending_time >= executed_time ×
// solve_starvation") returns to queue 0 with both counters, and so its
// attained service, reset. gpusched's simulator schedules on arrivals,
// finishes and --round ticks, whereas Tiresias's also wakes when a job
// crosses a limit or becomes due for promotion; a short --round comes close.
package policy
