//go:build !linux

package kube

// threadCPU is not measured off Linux.
func threadCPU() (int64, bool) { return 0, false }

// lockThread does nothing off Linux.
func lockThread() func() { return func() {} }
