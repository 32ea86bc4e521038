package learn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/store"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openStore(t *testing.T) store.Store {
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "store.db"), store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestProfiles: two reports of one execution at least 10 s apart make a
// sample (steps/s); a new generation starts over; the estimates survive a
// restart through the store and come back merged over the base matrix.
func TestProfiles(t *testing.T) {
	base, err := profile.ParseMatrix("embedded", assets.Throughputs())
	if err != nil {
		t.Fatal(err)
	}
	st, t0 := openStore(t), time.Unix(1000, 0)
	ps, err := NewProfiles(base, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ps.Load(context.Background(), st, t0); err != nil || m != nil {
		t.Fatalf("Load of an empty store: %v, %v; want nothing to install", m, err)
	}
	p := Progress{Job: "j1", Model: "CycleGAN", GPUType: "v100", Attempt: 1, Generation: 0, GPUs: 2}
	report := func(gen int, steps int64, d time.Duration) {
		q := p
		q.Generation, q.Steps, q.At = gen, steps, t0.Add(d)
		ps.ObserveProgress(q)
	}
	report(0, 10, 0)
	report(0, 20, 5*time.Second) // too short: the mark stays
	if _, n := ps.Online().Rate("CycleGAN", "v100", 2); n != 0 {
		t.Fatalf("a sample over 5 s")
	}
	report(0, 110, 10*time.Second)
	if r, n := ps.Online().Rate("CycleGAN", "v100", 2); n != 1 || r != 10 || ps.Rate("j1") != 10 {
		t.Fatalf("rate %v from %d samples (job rate %v), want 10 from 1", r, n, ps.Rate("j1"))
	}
	report(1, 5000, 30*time.Second) // resized in place: a new execution
	if _, n := ps.Online().Rate("CycleGAN", "v100", 2); n != 1 || ps.Rate("j1") != 0 {
		t.Fatalf("a sample across generations")
	}
	ps.ObserveProgress(Progress{Job: "j2", GPUType: "v100", GPUs: 1, Steps: 1, At: t0}) // no model: nothing
	mem, _ := NewProfiles(base, quiet())                                                // without Load: in memory only, as the Kubernetes mode keeps them
	mem.ObserveProgress(Progress{Job: "j1", Model: "CycleGAN", GPUType: "v100", GPUs: 2, Steps: 0, At: t0})
	mem.ObserveProgress(Progress{Job: "j1", Model: "CycleGAN", GPUType: "v100", GPUs: 2, Steps: 100, At: t0.Add(10 * time.Second)})
	if !mem.Tick(t0.Add(time.Minute), func(string) bool { return true }) || mem.Rate("j1") != 10 {
		t.Errorf("a profiler without a store: rate %v", mem.Rate("j1"))
	}
	if !ps.Tick(t0.Add(time.Minute), func(id string) bool { return id == "j1" }) || !ps.Pending() || ps.Next() == nil {
		t.Fatal("a new entry does not schedule a rebuild")
	}
	ps2, _ := NewProfiles(base, quiet())
	m, err := ps2.Load(context.Background(), st, t0)
	if err != nil || m == nil {
		t.Fatalf("Load after a save: %v, %v; want the merged matrix", m, err)
	}
	if r, n := ps2.Online().Rate("CycleGAN", "v100", 2); n != 1 || r != 10 {
		t.Errorf("restored rate %v from %d samples, want 10 from 1", r, n)
	}
	online, b := ps2.Entries()
	if len(online) != 1 || online[0].Source != api.ProfileOnline || b != base || len(PreRun(b)) == 0 {
		t.Errorf("entries %+v, pre-run %d", online, len(PreRun(b)))
	}
}

// TestSeries: a rate is measured within one execution, from its first
// report to its latest; power from two nodes at one time adds up.
func TestSeries(t *testing.T) {
	e, t0 := NewETA(quiet()), time.Unix(1000, 0)
	s := &e.Series
	s.Progress("j1", 1, 0, 100, t0)
	if r, n := s.MeasuredRate("j1", 1, 0); r != 0 || n != 0 {
		t.Fatalf("a rate from one report: %v, %d", r, n)
	}
	s.Progress("j1", 1, 0, 300, t0.Add(10*time.Second))
	s.Progress("j1", 1, 0, 500, t0.Add(20*time.Second))
	if r, n := s.MeasuredRate("j1", 1, 0); r != 20 || n != 3 {
		t.Errorf("rate %v from %d reports, want 20 from 3", r, n)
	}
	if r, _ := s.MeasuredRate("j1", 2, 0); r != 0 {
		t.Errorf("a rate of another attempt: %v", r)
	}
	s.Power("j1", 1000, 10*time.Second, t0)
	s.Power("j1", 500, 10*time.Second, t0)
	progress, power := s.Points("j1")
	if len(progress) != 3 || len(power) != 1 || power[0].Watts != 150 {
		t.Errorf("points %+v, power %+v; want 3 and one of 150 W", progress, power)
	}
	v := s.View("j1", []ledger.Replica{{ID: "r0", Node: "n0", GPUs: []int{0}}, {ID: "r1", Node: "n1", Done: true, ExitCode: 3},
		{ID: "r2", Node: "n2", Done: true, Lost: true}, {ID: "r3", Node: "n3", Left: true}})
	states := []string{}
	for _, r := range v.Replicas {
		states = append(states, r.State)
	}
	if fmt.Sprint(states) != "[running exited lost left]" || *v.Replicas[1].ExitCode != 3 || v.Replicas[0].ExitCode != nil ||
		len(v.Progress) != 3 || len(v.Power) != 1 {
		t.Errorf("View = %+v, replica states %v", v, states)
	}
	if v := s.View("none", nil); v.Replicas == nil || v.Progress == nil || v.Power == nil {
		t.Errorf("View of a job without points = %+v, want empty lists", v)
	}
}

// TestETA: a successful job's run time teaches its user's median and,
// against its first estimate, its class's spread; the history survives a
// restart through the store.
func TestETA(t *testing.T) {
	st, t0 := openStore(t), time.Unix(1000, 0)
	e := NewETA(quiet())
	if err := e.Load(context.Background(), st, t0); err != nil {
		t.Fatal(err)
	}
	start := t0
	e.Started("j1", start)
	l := forecast.Length{Kind: forecast.KindTimeLimit, Remaining: 10 * time.Second}
	e.Estimate("j1", l, start)
	e.Estimate("j1", forecast.Length{Kind: forecast.KindTimeLimit, Remaining: time.Hour}, start.Add(time.Second)) // not the first
	e.Ended("j1", "alice", &start, api.Succeeded, start.Add(20*time.Second))
	if m, n := e.History().UserMedian("alice"); m != 20*time.Second || n != 1 {
		t.Errorf("alice's median %v over %d runs, want 20s over 1", m, n)
	}
	if sp := e.History().Spread(forecast.ClassTimeLimit); sp.Samples != 1 {
		t.Errorf("time-limit spread from %d samples, want 1", sp.Samples)
	}
	e.Tick(t0.Add(time.Minute), true, func(string) bool { return true })
	e2 := NewETA(quiet())
	if err := e2.Load(context.Background(), st, t0); err != nil {
		t.Fatal(err)
	}
	if m, n := e2.History().UserMedian("alice"); m != 20*time.Second || n != 1 {
		t.Errorf("after a restart: alice's median %v over %d runs", m, n)
	}
	if acc := e2.Accuracy(); len(acc.Spreads) == 0 {
		t.Errorf("no spreads in the accuracy view")
	}
}
