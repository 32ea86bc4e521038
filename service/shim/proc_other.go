//go:build !linux

package shim

import (
	"errors"
	"syscall"
)

// BecomeSubreaper is Linux-only; elsewhere orphans are left to init.
func BecomeSubreaper() error { return errors.New("child subreapers are Linux-only") }

// ReapOrphans has nothing to do without subreaping.
func ReapOrphans() {}

// StartTime is unknown outside Linux.
func StartTime(pid int) uint64 { return 0 }

// ProcessAlive reports whether process pid exists; outside Linux a zombie
// or a reused PID cannot be told apart.
func ProcessAlive(pid int, _ uint64) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// GroupHasLive cannot tell zombies apart outside Linux: a group that
// exists has a live process.
func GroupHasLive(pgid int) bool { return true }

// BootID is unknown outside Linux.
func BootID() string { return "" }
