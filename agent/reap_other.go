//go:build !linux

package agent

// becomeSubreaper is Linux-only; elsewhere the orphans of replicas are left
// to init.
func (a *Agent) becomeSubreaper() bool { return false }

// sweepZombies has nothing to do without subreaping.
func (a *Agent) sweepZombies() {}

// bootID is unknown outside Linux.
func bootID() string { return "" }
