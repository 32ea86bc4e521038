// Package sim is gpusched's discrete-event simulator: it replays a trace
// through the core engine on a virtual clock.
//
// Events are submissions (from the trace), finishes (computed from each
// running job's speed), and optional periodic rounds. All events at one
// instant are applied together — finishes before submissions — and then the
// engine runs one round if anything that affects what can run changed. The
// plan is applied in the order reject, preempt, resize, start.
//
// Progress follows DESIGN.md's modelling rules: a job's speed on n GPUs of a
// type comes from its profile (the throughput matrix); on every restart
// after a preemption and on every resize the job makes no progress for the
// restart overhead (its GPUs are held meanwhile). The first start is free.
// A preempted job keeps its progress (it resumes from its checkpoint).
//
// Everything is deterministic: the same inputs give the same events in the
// same order. Randomness (assigning job types to jobs that have none) comes
// from an explicit seed.
package sim
