//go:build !linux

package agent

import (
	"errors"
	"syscall"
)

// becomeSubreaper is Linux-only; elsewhere orphans are left to init.
func becomeSubreaper() error { return errors.New("child subreapers are Linux-only") }

// sweepZombies has nothing to do without subreaping.
func (a *Agent) sweepZombies() {}

// startTime is unknown outside Linux.
func startTime(pid int) uint64 { return 0 }

// processAlive reports whether process pid exists; outside Linux a zombie
// or a reused PID cannot be told apart.
func processAlive(pid int, _ uint64) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// groupHasLive cannot tell zombies apart outside Linux: a group that
// exists has a live process.
func groupHasLive(pgid int) bool { return true }

// bootID is unknown outside Linux.
func bootID() string { return "" }
