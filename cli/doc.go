// Package cli implements gpusched's command line (DESIGN.md, "Command
// line"): one cobra command per verb. It is a shell around the pure core: it
// reads files and flags, runs the core, and writes outputs.
//
// Exit status: 0 on success, 2 for bad input (flags, files, traces, cluster
// descriptions), 1 for anything else.
package cli
