// Package replay replays the jobs a scheduler service ran through the
// simulator on the same cluster, to say what the same work would have cost
// under another placer (docs/ENERGY.md, "What energy placement saved"):
// Files writes the service's nodes and jobs as a cluster file and a trace
// in the native format — the files `gpusched sim` reads, so that anyone
// can reproduce the figure — and Energy runs them, reading them back the
// way `gpusched sim` does.
package replay
