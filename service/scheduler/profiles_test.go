package scheduler

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// TestOnlineProfiles learns a new job type's speed from two progress
// reports of one execution, rebuilds the matrix (renumbering the other job
// types), lists it in Profiles and keeps it across a restart.
func TestOnlineProfiles(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	j1 := h.submit(`{"command":["x"],"gpus":2,"model":"A0-learned"}`)
	j2 := h.submit(`{"command":["x"],"gpus":2,"model":"CycleGAN"}`)
	w := a.waitWork("both jobs", func(w api.Work) bool {
		return agenttest.FindReplica(w, j1.ID) != nil && agenttest.FindReplica(w, j2.ID) != nil
	})
	r1, r2 := agenttest.Running(*agenttest.FindReplica(w, j1.ID)), agenttest.Running(*agenttest.FindReplica(w, j2.ID))
	s := h.s
	s.mu.Lock()
	oldCycle := s.tab.Active[j2.ID].Model.Model
	s.mu.Unlock()
	if oldCycle != 1 {
		t.Fatalf("CycleGAN's index before learning: %d, want 1", oldCycle)
	}
	now := time.Now()
	r1.Progress = &api.ReplicaProgress{Steps: 100, At: now.Add(-40 * time.Second)}
	a.status(r1, r2)
	r1.Progress = &api.ReplicaProgress{Steps: 300, At: now.Add(-20 * time.Second)} // 200 steps in 20 s
	a.status(r1, r2)
	s.mu.Lock()
	rate, n := s.learner.Prof.Online().Rate("A0-learned", "v100", 2)
	s.mu.Unlock()
	if rate != 10 || n != 1 {
		t.Fatalf("learned %v steps/s from %d samples, want 10 from 1", rate, n)
	}

	s.flushProgress() // the tick: a new entry rebuilds the matrix at the next round
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		ok := s.matrix.HasModel("A0-learned") && s.tab.Active[j1.ID].Model.Model == 0 && s.tab.Active[j2.ID].Model.Model == 2 &&
			!s.learner.Prof.Pending() && s.tab.State != nil
		s.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the merged matrix was not installed with the jobs' indices renumbered")
		}
		time.Sleep(10 * time.Millisecond)
	}

	want := api.ProfileEntry{Model: "A0-learned", GPUType: "v100", GPUs: 2, StepsPerS: 10, Samples: 1, Source: api.ProfileOnline}
	if list := s.Learning().Profiles(false); len(list) != 1 || list[0] != want {
		t.Fatalf("Profiles: %+v, want [%+v]", list, want)
	}
	if list := s.Learning().Profiles(true); len(list) < 10 || list[0] != want || list[1].Source != api.ProfilePreRun || list[1].Samples != 0 {
		t.Errorf("Profiles with the pre-run matrix: %d entries, first %+v", len(list), list[:min(2, len(list))])
	}

	h.restart()
	if list := h.s.Learning().Profiles(false); len(list) != 1 || list[0] != want {
		t.Fatalf("after a restart: %+v, want [%+v]", list, want)
	}
	s = h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.models["A0-learned"] != 0 || s.tab.Active[j1.ID].Model.Model != 0 || s.tab.Active[j2.ID].Model.Model != 2 {
		t.Errorf("after a restart: indices %d, %d, %d", s.models["A0-learned"], s.tab.Active[j1.ID].Model.Model, s.tab.Active[j2.ID].Model.Model)
	}
}

// TestOnlineProfileSamples checks which pairs of reports make a sample:
// never across a new generation (a resize, a lost node) or attempt, never
// over less than profile.MarkMinGap, and only for jobs with a model.
func TestOnlineProfileSamples(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2,"model":"CycleGAN"}`)
	plain := h.submit(`{"command":["x"],"gpus":1}`)
	a.waitWork("both jobs", func(w api.Work) bool {
		return agenttest.FindReplica(w, j.ID) != nil && agenttest.FindReplica(w, plain.ID) != nil
	})
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	jj, jp := s.tab.Active[j.ID], s.tab.Active[plain.ID]
	t0 := time.Now().Add(-time.Hour)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	samples := func() int64 { _, n := s.learner.Prof.Online().Rate("CycleGAN", "v100", 2); return n }

	rec := jj.Rec.Clone()
	s.learner.Observe(&rec, 10, at(0))
	s.learner.Observe(&rec, 20, at(5*time.Second)) // too short: the mark stays
	if samples() != 0 {
		t.Fatalf("a sample over 5 s")
	}
	s.learner.Observe(&rec, 110, at(10*time.Second))
	if r, n := s.learner.Prof.Online().Rate("CycleGAN", "v100", 2); n != 1 || r != 10 {
		t.Fatalf("rate %v from %d samples, want 10 from 1", r, n)
	}
	if s.learner.Rate(j.ID) != 10 {
		t.Errorf("jobRate %v, want 10", s.learner.Rate(j.ID))
	}
	next := rec.Clone()
	next.Generation++ // resized in place: a new execution
	s.learner.Observe(&next, 5000, at(30*time.Second))
	if samples() != 1 || s.learner.Rate(j.ID) != 0 {
		t.Fatalf("a sample across generations (%d samples, rate %v)", samples(), s.learner.Rate(j.ID))
	}
	s.learner.Observe(&next, 5100, at(50*time.Second))
	if r, n := s.learner.Prof.Online().Rate("CycleGAN", "v100", 2); n != 2 || r != 10-0.2*5 {
		t.Errorf("after the second execution: %v from %d samples", r, n)
	}
	prec := jp.Rec.Clone()
	s.learner.Observe(&prec, 1, at(0))
	s.learner.Observe(&prec, 100, at(time.Minute))
	if s.learner.Prof.Online().Len() != 1 {
		t.Errorf("a job without a model was learned: %+v", s.learner.Prof.Online().State())
	}
}
