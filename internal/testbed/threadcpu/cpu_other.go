//go:build !linux

package threadcpu

// Now is not measured off Linux: it returns 0, false.
func Now() (int64, bool) { return 0, false }

// Lock does nothing off Linux.
func Lock() func() { return func() {} }
