// Package learn is what a shell learns online from the jobs it runs:
//
//   - Profiles (profiles.go): throughputs measured from progress reports
//     (two reports of one execution of a job with a model give a steps/s
//     for its model, GPU type and GPU count), kept by profile.Online under
//     "profiles/online" and merged over the pre-run matrix for the engine
//     (docs/PROFILES.md, "Online profiles");
//   - ETA (eta.go): what the forecasts learn — the accuracy of the start
//     forecasts served, and the history of run times that gives each class
//     of lengths its bias and spread and each user their median — under
//     "forecast/history" (docs/ETA.md);
//   - Series (series.go): every job's progress and power over time (memory
//     only), for the dashboard and the measured speeds of the forecasts;
//   - Room (room.go): the three under the shell's lock, as the shell's
//     callers are handed them (package scheduler's Learning);
//   - Table (table.go): the service's job table (package jobs) as online
//     learning reads it: the hooks the scheduling loop calls (Observe,
//     Started, Ended, TickProfiles, TickETA) and forecast.World.
//
// Profiles keep each job's progress mark and pace the matrix's rebuilds
// with core/profile (Mark, Online.Advance, Rebuilds), as the Kubernetes
// shell does.
//
// The shell feeds them (ObserveProgress, Started, Estimate, Ended,
// Series.Progress and Power) and calls Tick every tick; they write to the
// store at most every few seconds. They are not safe for concurrent use:
// the shell serializes the calls (package scheduler holds its mutex).
package learn
