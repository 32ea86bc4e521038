// Package profile holds job profiles: how fast each job type runs on each GPU
// type and GPU count. The source is a throughput matrix in Gavel's JSON
// format (stanford-futuredata/gavel, scheduler/simulation_throughputs.json):
//
//	{"v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 12.3, ...}, ...}, ...}
//
// Only the "null" entry (the job alone on its GPUs) is used; co-location
// entries are ignored. A 0 entry means the job cannot run there.
//
// Speeds between measured GPU counts are interpolated linearly and capped at
// linear scaling from the nearest measured count below; above the largest
// measured count they scale linearly from it (an optimistic bound: the matrix
// holds no data there). A GPU type on which a job type has no measurements
// (missing from the matrix, or from the job type's entries) runs it at the
// reference type's speed scaled by the ratio of rated TFLOPS; when the job
// type has no measurements on the reference type either, the first cluster
// type that has some takes its place.
//
// Online learns the matrix while jobs run instead (docs/PROFILES.md, online
// profiles): it keeps an exponentially weighted mean of the measured steps/s
// per (job type, GPU type, GPU count), lays it over a pre-run matrix
// (Online.Merge: measured points replace or extend the matrix's) and gives
// its estimates as plain data for the shell to store (Online.State,
// Online.Restore).
//
// Shells feed Online from progress reports alike (marks.go): a Mark is a
// job's latest report, Online.Advance turns two reports of one execution
// into a Sample, and Rebuilds paces the merged matrices a shell installs.
//
// Profiles (docs/PROFILES.md) let users give their own job types:
// ParseProfiles decodes a profile file (in its JSON form; the shell converts
// YAML), Matrix.Merge applies profiles to a matrix, replacing its points per
// (job type, GPU type), and Matrix.PeakMemMiB and Matrix.FillPeakMem carry a
// job type's peak memory per GPU to its jobs, so that feasibility never
// places a job on GPUs with less memory. A job given in steps needs its job
// type's steps/s: without them Table.Work is an error.
//
// Jobs given as a duration run at 1 work unit per second on the reference GPU
// type at their requested GPU count (DESIGN.md, modelling rules). On other
// types and counts they scale by the matrix's ratio for their job type when
// they have one, otherwise by the ratio of rated TFLOPS and linearly in the
// GPU count.
//
// The package is part of the pure core: it parses bytes and never reads files.
package profile
