//go:build linux

package threadcpu

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// Now returns the CPU time the calling OS thread has used, in
// nanoseconds, and true.
func Now() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// Lock pins the calling goroutine to its OS thread until the returned
// function is called.
func Lock() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
