//go:build linux

package kube

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling OS thread has used, in
// nanoseconds, and true. Benchmarks lock their goroutine to its thread and
// report it beside the wall time: on a shared machine the wall time counts
// whatever else runs there, the thread's CPU time much less of it.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// lockThread pins the calling goroutine to its OS thread (threadCPU).
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
