// Package sim is gpusched's discrete-event simulator: it replays a trace
// through the core engine on a virtual clock.
//
// The sim/ folder is the simulator shell: this package (pure, like core/:
// no clock, no I/O), and the formats it reads and writes — trace (trace
// readers), eventlog (the event log), audit (the independent auditor of
// event logs), metrics (records and summaries), report (tables, JSON, CSV,
// plots) and synth (synthetic Gavel-style traces). They may import core/
// and each other, never service/ or cli/; the purity test in core/ also
// holds this package, metrics and eventlog to the core's rules.
//
// Events are submissions (from the trace), finishes (computed from each
// running job's speed), and optional periodic rounds. All events at one
// instant are applied together — finishes before submissions — and then the
// engine runs one round if anything that affects what can run changed. The
// plan is carried out through engine.Apply, in the one order every shell
// uses (apply.go implements engine.Applier).
//
// Progress follows DESIGN.md's modelling rules: a job's speed on n GPUs of a
// type comes from its profile (the throughput matrix); on every restart
// after a preemption and on every resize the job makes no progress for the
// restart overhead (its GPUs are held meanwhile). The first start is free.
// A preempted job keeps its progress (it resumes from its checkpoint).
//
// With a power model (Config.Power) the simulator accounts energy
// (Config.Energy: every node's draw integrated exactly between the events
// that change its busy GPUs, and attributed to the jobs on it) and applies
// node contention to job speeds (Config.Contention); energy.go and
// docs/ENERGY.md have the rules. Power-managed nodes (power.NodePower.Sleeps)
// sleep when idle and make the jobs placed on them wait while they wake up
// (sleep.go); a running job grown onto such nodes runs on its old GPUs until
// they are up and then takes its new size (grow.go: a join is an event of
// the loop, not of the log).
//
// With a network model (Config.Network) a job with a dataset waits for its
// staging time at every start (network.go); jobs that a placer holds back
// (engine.Plan.Paused, seed 002's pause) get one pause event per pause
// (pause.go).
//
// On a cluster that models resources besides GPUs (model.Cluster.Vectored)
// the run measures what jobs hold of each and the stranded GPUs
// (resources.go, metrics.Resources, Result.Resources); on a GPU-only
// cluster it measures nothing more, so its outputs stay as they were.
//
// A run may resume from a given state instead of a trace (Config.From, a
// Start: running jobs keep their GPUs and progress, waiting jobs queue at
// its time); the service's forecasts run the live state forward this way
// (resume.go).
//
// Everything is deterministic: the same inputs give the same events in the
// same order. Randomness (assigning job types to jobs that have none) comes
// from an explicit seed.
package sim
