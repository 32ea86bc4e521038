// Package peer runs Gavel's simulator (Narayanan et al., OSDI 2020;
// stanford-futuredata/gavel), the peer that gpusched's simulator is
// calibrated against (docs/FIDELITY.md), through the runner the workspace
// provides (../shared/peers/gavel/gavel: Gavel's scheduler/ folder,
// unchanged, with a small LP stand-in for cvxpy), and reads its average JCT.
// Gavel is slow (a 400-job trace takes up to a minute, larger ones far
// more), so answers are cached on disk, keyed by the trace's content, the
// policy, the cluster and the runner.
//
// The package belongs to the simulator shell, not the core: it starts
// processes and reads and writes files.
package peer
