package scheduler

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// TestRoundTimeAfterLock: a round's time is read once it holds the
// scheduler's lock, never before, where an event applied while it waited
// for the lock could be later. One V100: A runs from 10:00:00, B waits. At
// 10:00:10 a round begins; should it read the clock before the lock, the
// clock moves to 10:00:20 and A's exit is reported right then (as a
// status report does that takes the lock first); B must start at
// 10:00:20, when A's GPU is freed, not at the round's stale 10:00:10
// (TestETAScenario saw this now and then: C started 50 s early, not 40).
// The scheduler runs without its loop: the test runs each round, so the
// interleaving is the same on every run.
func TestRoundTimeAfterLock(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	t0 := clk.now()
	var s *Scheduler
	// early, set by the test around one round, runs once when the clock is
	// read while the lock is free, after the read (on the test's goroutine:
	// no loop runs).
	var early func()
	clock := func() time.Time {
		now := clk.now()
		if early != nil && s.mu.TryLock() {
			s.mu.Unlock()
			f := early
			early = nil
			f()
		}
		return now
	}
	st := store.NewMem(store.MemOptions{})
	s, err := New(settings.Config{Store: st, DataDir: t.TempDir(), Clock: clock, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		_ = st.Close()
	})
	h := &harness{t: t, s: s}
	a := h.agent("n1", "v100", 1)
	a.register()
	ja := h.submit(`{"command":["x"],"gpus":1}`)
	s.schedule()
	ra := *agenttest.FindReplica(a.work(0, 0), ja.ID)
	a.status(agenttest.Running(ra))
	jb := h.submit(`{"command":["x"],"gpus":1}`)
	clk.add(10 * time.Second)
	exit := func() {
		clk.add(10 * time.Second)
		a.status(agenttest.Exited(ra, 0))
	}
	early = exit
	s.schedule()
	if early != nil { // the round read its time under the lock: A exits now
		early = nil
		exit()
		s.schedule()
	}
	ea, eb := h.job(ja.ID), h.job(jb.ID)
	end := t0.Add(20 * time.Second)
	if ea.State != api.Succeeded || ea.FinishedAt == nil || !ea.FinishedAt.Equal(end) {
		t.Fatalf("A: %s, finished at %v; want succeeded at %s", ea.State, ea.FinishedAt, end.Format(time.TimeOnly))
	}
	if eb.State != api.Running || eb.StartedAt == nil || !eb.StartedAt.Equal(end) {
		t.Errorf("B: %s, started at %s; want running from %s, when A's GPU was freed", eb.State, at(eb.StartedAt),
			end.Format(time.TimeOnly))
	}
}
