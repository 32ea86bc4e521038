// Package agenttest holds what the tests of the scheduler and of its HTTP
// transport need to play an agent by hand: replica statuses to report and
// predicates over the work a node is given; and a poll. It depends on package api
// only, so that the in-package tests of service/scheduler can use it.
package agenttest

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// Running is the status of replica r running (as process 42, since now).
func Running(r api.Replica) api.ReplicaStatus {
	return api.ReplicaStatus{ID: r.ID, Job: r.Job, Phase: api.ReplicaRunning, PID: 42, StartedAt: time.Now()}
}

// Exited is the status of replica r having exited with code just now.
func Exited(r api.Replica, code int) api.ReplicaStatus {
	now := time.Now()
	return api.ReplicaStatus{ID: r.ID, Job: r.Job, Phase: api.ReplicaExited, ExitCode: code, StartedAt: now, FinishedAt: &now}
}

// HasReplica returns a predicate: the work holds a replica of job.
func HasReplica(job string) func(api.Work) bool {
	return func(w api.Work) bool { return FindReplica(w, job) != nil }
}

// NoReplica returns a predicate: the work holds no replica of job.
func NoReplica(job string) func(api.Work) bool {
	return func(w api.Work) bool { return FindReplica(w, job) == nil }
}

// FindReplica returns the first replica of job in w, or nil.
func FindReplica(w api.Work, job string) *api.Replica {
	for i := range w.Replicas {
		if w.Replicas[i].Job == job {
			return &w.Replicas[i]
		}
	}
	return nil
}

// Poll calls get every 10 ms until ok accepts its value, which it returns;
// after timeout it fails the test naming what it waited for and the last
// value.
func Poll[T any](t testing.TB, timeout time.Duration, what string, get func() T, ok func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v := get()
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; got %+v", what, v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// GPUs returns n GPUs of type typ with 16 GiB each, indexed from 0: what a
// hand-played agent registers.
func GPUs(typ string, n int) []api.GPU {
	gpus := make([]api.GPU, n)
	for i := range gpus {
		gpus[i] = api.GPU{Index: i, Type: typ, MemMiB: 16384}
	}
	return gpus
}
