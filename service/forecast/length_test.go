package forecast

import (
	"strings"
	"testing"
	"time"
)

func TestEstimate(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name   string
		f      Facts
		kind   Kind
		speed  Speed
		rem    time.Duration
		steps  float64
		detail string
	}{
		{"measured", Facts{Running: true, TotalSteps: 100, DoneSteps: 40, MeasuredRate: 2, MeasuredReports: 5, MatrixRate: 10},
			KindSteps, SpeedMeasured, 30 * s, 0, "60 steps left at 2 steps/s measured from 5 progress reports"},
		{"matrix running", Facts{Running: true, TotalSteps: 100, DoneSteps: 40, MatrixRate: 4},
			KindSteps, SpeedMatrix, 15 * s, 0, "throughput matrix"},
		{"matrix waiting", Facts{TotalSteps: 100, DoneSteps: 30, MatrixKnown: true},
			KindSteps, SpeedMatrix, 0, 70, "70 steps left"},
		{"steps cut by the limit", Facts{Running: true, Elapsed: 50 * s, TotalSteps: 100, MeasuredRate: 1, TimeLimit: time.Minute},
			KindSteps, SpeedMeasured, 10 * s, 0, "cut to its time limit of 1m0s"},
		{"steps without speed", Facts{TotalSteps: 100, TimeLimit: time.Hour}, KindTimeLimit, "", time.Hour, 0, "time limit"},
		{"limit running", Facts{Running: true, Elapsed: 20 * time.Minute, TimeLimit: time.Hour}, KindTimeLimit, "", 40 * time.Minute, 0, ""},
		{"limit passed", Facts{Running: true, Elapsed: 2 * time.Hour, TimeLimit: time.Hour}, KindTimeLimit, "", time.Second, 0, ""},
		{"user", Facts{UserMedian: 10 * time.Minute, UserRuns: 3, AllMedian: time.Hour, AllRuns: 9}, KindUserHistory, "", 10 * time.Minute, 0, "its user's last 3"},
		{"user outlived", Facts{Running: true, Elapsed: 20 * time.Minute, UserMedian: 10 * time.Minute, UserRuns: 3}, KindUserHistory, "", time.Minute, 0, ""},
		{"all", Facts{Running: true, Elapsed: time.Minute, AllMedian: 5 * time.Minute, AllRuns: 9}, KindHistory, "", 4 * time.Minute, 0, "last 9 successful"},
		{"nothing", Facts{}, KindDefault, "", time.Hour, 0, "nothing is known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Estimate(tc.f)
			if l.Kind != tc.kind || l.Speed != tc.speed || l.Remaining != tc.rem || l.Steps != tc.steps {
				t.Errorf("Estimate = %+v, want kind %s speed %q remaining %s steps %g", l, tc.kind, tc.speed, tc.rem, tc.steps)
			}
			if !strings.Contains(l.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", l.Detail, tc.detail)
			}
		})
	}
}

func TestHistorySpread(t *testing.T) {
	var h History
	if got := h.Spread(ClassMatrix); got != Prior(ClassMatrix) {
		t.Fatalf("empty history: %+v, want the prior", got)
	}
	// Five jobs that all ran exactly twice their estimate: the mean of
	// the log-ratios is ln 2 with no spread; with the prior as five more
	// samples (mean 0, sigma 0.3) mu = ln2/2 and sigma = sqrt(5·0.09/10).
	for range 5 {
		h.ObserveRatio(ClassMatrix, time.Minute, 2*time.Minute)
	}
	got := h.Spread(ClassMatrix)
	if d := got.Mu - 0.34657359; d > 1e-6 || d < -1e-6 {
		t.Errorf("mu %v, want ln2/2", got.Mu)
	}
	if d := got.Sigma - 0.21213203; d > 1e-6 || d < -1e-6 {
		t.Errorf("sigma %v, want 0.2121", got.Sigma)
	}
	if got.Samples != 5 {
		t.Errorf("samples %d", got.Samples)
	}
	for range 1000 {
		h.ObserveRatio(ClassMatrix, time.Minute, time.Minute)
	}
	if got := h.Spread(ClassMatrix); got.Sigma != minSigma || len(h.Ratios[ClassMatrix]) != MaxRatios {
		t.Errorf("after many exact jobs: %+v with %d ratios, want sigma %v and %d ratios", got, len(h.Ratios[ClassMatrix]), minSigma, MaxRatios)
	}
	h.ObserveRatio(ClassMatrix, 0, time.Minute) // ignored
	if len(h.Ratios[ClassMatrix]) != MaxRatios {
		t.Error("a zero estimate was recorded")
	}
}

func TestHistoryRuns(t *testing.T) {
	var h History
	for _, d := range []time.Duration{3, 1, 2, 10} {
		h.ObserveRun("alice", d*time.Minute)
	}
	h.ObserveRun("", time.Hour)
	if m, n := h.UserMedian("alice"); m != 150*time.Second || n != 4 {
		t.Errorf("alice: %s over %d, want 2m30s over 4", m, n)
	}
	if m, n := h.AllMedian(); m != 3*time.Minute || n != 5 {
		t.Errorf("all: %s over %d, want 3m over 5", m, n)
	}
	if m, n := h.UserMedian("bob"); m != 0 || n != 0 {
		t.Errorf("bob: %s over %d", m, n)
	}
	for i := range MaxUsers + 5 {
		h.ObserveRun("u"+string(rune('A'+i%26))+string(rune('A'+i/26%26))+string(rune('A'+i/676)), time.Second)
	}
	if len(h.Users) != MaxUsers {
		t.Errorf("%d users kept, want %d", len(h.Users), MaxUsers)
	}
	if _, ok := h.Users["alice"]; ok {
		t.Error("the least recently seen user was kept")
	}
}
