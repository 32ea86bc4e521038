package shim

import (
	"errors"
	"syscall"
)

// SignalGroup sends sig to process group pgid. It refuses pgid 0 and 1,
// whose negation would signal the caller's own group or every process.
func SignalGroup(pgid int, sig syscall.Signal) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, sig) // ESRCH: already gone
	}
}

// GroupGone reports whether process group pgid has no process left but
// zombies.
func GroupGone(pgid int) bool {
	if pgid <= 1 {
		return true
	}
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) || !GroupHasLive(pgid)
}
