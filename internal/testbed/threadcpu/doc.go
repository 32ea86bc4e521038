// Package threadcpu measures the CPU time of the calling OS thread, for
// benchmarks on shared machines: a benchmark locks its goroutine to its
// thread (Lock) and reports the thread's CPU time (Now) beside the wall
// time, which counts whatever else runs on the machine. Off Linux it
// measures nothing. Tests only (internal/testbed).
package threadcpu
