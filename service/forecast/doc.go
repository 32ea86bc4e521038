// Package forecast predicts when the jobs of a scheduler service will
// start and finish by running the simulator (package sim) forward from a
// snapshot of the live state: the ready nodes, the running jobs on their
// GPUs with the work they have left, the queue, and the same policy,
// placer and scaler the service runs (docs/ETA.md).
//
// # Lengths
//
// The service does not know how long a job runs; Estimate picks, for each
// job, the best length it has (Length.Kind):
//
//   - steps: the job declared its total steps (total_steps) and a speed is
//     known — its own, measured from its progress reports in this attempt,
//     or its model's in the throughput matrix (online profiles laid over
//     the pre-run matrix); the simulator then also knows its speed on the
//     other GPU types and counts;
//   - time-limit: its time limit (time_limit_s, Slurm's --time), the most
//     it can run;
//   - user-history: the median run time of its user's recent successful
//     jobs;
//   - history: the median run time of all recent successful jobs;
//   - default: one hour, when nothing at all is known.
//
// A length from steps never exceeds the time limit.
//
// # Ranges
//
// Run simulates the snapshot once with every job's length corrected by the
// bias learned for its class (the point forecast), then Options.Runs more
// times with each length multiplied by a log-normal factor whose spread is
// learned from finished jobs, and reports the P10, P50 and P90 of every
// start and finish over those runs. A class is a kind, with steps split by
// the source of the speed (Class): History keeps, per class, the log of
// each successful job's run time over its length as first estimated in
// that class. Until a class has enough finished jobs, a prior spread
// applies (Prior). The perturbations
// come from a PCG generator seeded by Options.Seed: the same snapshot and
// seed give the same forecast.
//
// # Serving
//
// A shell hands its callers a Room (room.go): ETA and ETAs take a
// forecast of the live state (Take, from the World the shell implements:
// its Live jobs, its nodes' key, its model) at most once per change and
// at least every MaxAge (Cache), and record the predictions served for
// waiting jobs. Package scheduler's Forecasts returns one.
//
// # Accuracy
//
// Accuracy keeps the predictions served for each waiting job and, when the
// job starts, their errors (Outcome); Summarize reports how good the
// forecasts have been, by how far ahead they were made.
//
// The package does no I/O and reads no clock: times are arguments. It runs
// the simulations of one forecast on several goroutines.
package forecast
