package scheduler

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/settings"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// etaHarness is a scheduler on a clock the test moves, with heartbeats
// that never time out.
func etaHarness(t *testing.T) (*harness, *fakeClock) {
	clk := &fakeClock{t: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	h := newHarness(t, func(c *settings.Config) {
		c.Clock = clk.now
		c.HeartbeatTimeout = time.Hour
	})
	return h, clk
}

// waitRound waits until the loop has run a round that began after the
// call (and so read the clock after it): two rounds, since the first may
// have begun before.
func (h *harness) waitRound() {
	h.t.Helper()
	rounds := func() int64 {
		h.s.mu.Lock()
		defer h.s.mu.Unlock()
		return h.s.tab.Rounds
	}
	r := rounds()
	agenttest.Poll(h.t, 10*time.Second, "a scheduling round", rounds, func(n int64) bool { return n > r+1 })
}

func (h *harness) eta(id string) api.ETA {
	h.t.Helper()
	e, err := h.s.Forecasts().ETA(id)
	if err != nil {
		h.t.Fatalf("ETA %s: %v", id, err)
	}
	return e
}

func at(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.Format(time.TimeOnly)
}

// TestETAScenario: two V100s; A (1 GPU, limit 60 s) and B (1 GPU, limit
// 100 s) run from 10:00:00; C (1 GPU, limit 30 s) and D (2 GPUs, limit 10
// s) wait, fifo. At 10:00:10, with no history (bias 0): A ends at 10:01:00,
// C runs 10:01:00–10:01:30, B ends at 10:01:40, D runs 10:01:40–10:01:50.
// Then A ends early at 10:00:20: C starts then (the prediction's error is
// -40 s) and A's run teaches the time-limit kind a ratio of 20/60.
func TestETAScenario(t *testing.T) {
	h, clk := etaHarness(t)
	t0 := clk.now()
	a := h.agent("n1", "v100", 2)
	a.register()
	ja := h.submit(`{"command":["x"],"gpus":1,"time_limit_s":60,"user":"alice"}`)
	jb := h.submit(`{"command":["x"],"gpus":1,"time_limit_s":100}`)
	jc := h.submit(`{"command":["x"],"gpus":1,"time_limit_s":30}`)
	jd := h.submit(`{"command":["x"],"gpus":2,"time_limit_s":10}`)
	w := a.waitWork("A and B", func(w api.Work) bool {
		return agenttest.FindReplica(w, ja.ID) != nil && agenttest.FindReplica(w, jb.ID) != nil
	})
	ra := *agenttest.FindReplica(w, ja.ID)
	a.status(agenttest.Running(ra), agenttest.Running(*agenttest.FindReplica(w, jb.ID)))
	clk.add(10 * time.Second)
	a.status(agenttest.Running(ra), agenttest.Running(*agenttest.FindReplica(w, jb.ID)))
	h.waitRound()
	want := map[string][2]time.Duration{ja.ID: {0, 60}, jb.ID: {0, 100}, jc.ID: {60, 90}, jd.ID: {100, 110}}
	for id, w := range want {
		e := h.eta(id)
		if e.PredictedStart == nil || e.PredictedFinish == nil || !e.PredictedStart.Equal(t0.Add(w[0]*time.Second)) ||
			!e.PredictedFinish.Equal(t0.Add(w[1]*time.Second)) {
			t.Errorf("%s: predicted %s–%s, want %s–%s (%+v)", id, at(e.PredictedStart), at(e.PredictedFinish),
				t0.Add(w[0]*time.Second).Format(time.TimeOnly), t0.Add(w[1]*time.Second).Format(time.TimeOnly), e)
		}
		if e.Basis.Length != "time-limit" || e.Basis.Runs != 20 || e.Basis.Policy != "fifo" || e.Basis.Jobs["time-limit"] != 4 {
			t.Errorf("%s: basis %+v", id, e.Basis)
		}
	}
	c := h.eta(jc.ID)
	if !(c.StartP10.Before(*c.StartP90) && !c.StartP10.After(*c.StartP50) && !c.StartP50.After(*c.StartP90)) {
		t.Errorf("C's range %s–%s–%s is no range", at(c.StartP10), at(c.StartP50), at(c.StartP90))
	}
	clk.add(10 * time.Second)
	a.status(agenttest.Exited(ra, 0), agenttest.Running(*agenttest.FindReplica(w, jb.ID)))
	h.waitState(ja.ID, api.Succeeded)
	h.waitState(jc.ID, api.Running)
	acc := h.s.Learning().ETAAccuracy()
	if acc.Jobs != 1 || acc.Predictions != 1 || acc.BiasS != -40 || acc.InRange != 0 {
		t.Errorf("accuracy %+v, want one prediction of C, 40 s late, out of range", acc.ETAStats)
	}
	sp := h.s.learner.ETA.History().Spread(forecast.ClassTimeLimit)
	if sp.Samples != 1 {
		t.Errorf("time-limit spread %+v, want one sample", sp)
	}
	if m, n := h.s.learner.ETA.History().UserMedian("alice"); m != 20*time.Second || n != 1 {
		t.Errorf("alice's median %s over %d, want 20s over 1", m, n)
	}
	if _, err := h.s.Forecasts().ETA(ja.ID); err == nil || !strings.Contains(err.Error(), "has succeeded") {
		t.Errorf("ETA of an ended job: %v", err)
	}
	h.restart() // the history and the accuracy records are durable
	if acc := h.s.Learning().ETAAccuracy(); acc.Predictions != 1 || acc.Spreads[2].Samples != 1 {
		t.Errorf("after a restart: %+v", acc)
	}
}

// TestETAMeasuredSpeed: a running job that declared its total steps and
// reports progress is forecast from its own speed, as soon as it has one
// (the cached forecast made before is not served again).
func TestETAMeasuredSpeed(t *testing.T) {
	h, clk := etaHarness(t)
	t0 := clk.now()
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1,"total_steps":100}`)
	r := *agenttest.FindReplica(a.waitWork("the job", agenttest.HasReplica(j.ID)), j.ID)
	a.status(agenttest.Running(r))
	if _, err := h.s.Progress(j.ID, api.Progress{Steps: 10}); err != nil {
		t.Fatal(err)
	}
	if e := h.eta(j.ID); e.Basis.Length != "default" {
		t.Errorf("before a speed is measured: basis %+v", e.Basis)
	}
	clk.add(5 * time.Second)
	if _, err := h.s.Progress(j.ID, api.Progress{Steps: 30}); err != nil {
		t.Fatal(err)
	}
	a.status(agenttest.Running(r))
	h.waitRound()
	// 4 steps/s, 70 steps left: 17.5 s from 10:00:05.
	e := h.eta(j.ID)
	if e.Basis.Length != "steps" || e.Basis.Speed != "measured" || e.PredictedFinish == nil ||
		!e.PredictedFinish.Equal(t0.Add(22500*time.Millisecond)) || !e.PredictedStart.Equal(t0) {
		t.Errorf("ETA %s–%s, basis %+v; want 10:00:00–10:00:22.5 from the measured speed", at(e.PredictedStart), at(e.PredictedFinish), e.Basis)
	}
	s, err := h.s.Learning().Series(j.ID)
	if err != nil || len(s.Progress) != 2 || s.Progress[1].StepsPerS != 4 || len(s.Replicas) != 1 || s.Replicas[0].State != "running" {
		t.Errorf("series %+v %v", s, err)
	}
}

// TestTimeLimit: an attempt past its time limit is stopped and fails.
func TestTimeLimit(t *testing.T) {
	h, clk := etaHarness(t)
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1,"time_limit_s":30}`)
	r := *agenttest.FindReplica(a.waitWork("the job", agenttest.HasReplica(j.ID)), j.ID)
	a.status(agenttest.Running(r))
	clk.add(29 * time.Second)
	a.status(agenttest.Running(r))
	h.waitRound()
	if got := h.job(j.ID); got.State != api.Running || strings.Contains(got.Reason, "time limit") {
		t.Fatalf("before its limit: %s %q", got.State, got.Reason)
	}
	clk.add(time.Second)
	a.waitWork("without the job", agenttest.NoReplica(j.ID))
	a.status(agenttest.Exited(r, 143))
	got := h.waitState(j.ID, api.Failed)
	if !strings.Contains(got.Reason, "time limit of 30s reached") || got.ExitCode == nil || *got.ExitCode != -1 {
		t.Errorf("failed job: reason %q, exit code %v", got.Reason, got.ExitCode)
	}
}
