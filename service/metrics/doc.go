// Package metrics is the scheduler service's own Prometheus metrics
// (docs/SERVER.md, "Metrics"): the counters and the histogram it updates
// as things happen (Set: submissions, round latency) and the gauges
// computed from its state at every scrape (Counts: jobs by state, the
// policy's queue lengths, GPUs used and offered by type, nodes by state),
// registered together with the collectors of the rooms beside it (the
// live energy's), and the registry a shell's configuration selects
// (Registry). Package scheduler hands it a func that counts its job table
// (CountsOf, package jobs) under its lock.
package metrics
