package engine_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
)

// holdBack pauses the jobs it names and packs the others.
type holdBack map[string]bool

func (holdBack) Name() string { return "hold" }

func (h holdBack) Place(s *model.State, p *engine.Pool, j *model.Job, n int, ts engine.TypeSet) engine.Placement {
	if h[j.Spec.ID] {
		return engine.Placement{Pause: "held back"}
	}
	return placer.Pack{}.Place(s, p, j, n, ts)
}

func TestPlacerPause(t *testing.T) {
	tests := []struct {
		name   string
		policy engine.QueuePolicy
		trace  []string
		paused []string
	}{
		// A paused job blocks a strict fifo queue, like any job that is
		// not placed, and is reported in Plan.Paused with its reason.
		{"strict fifo stops at a paused job", policy.FIFO{}, []string{"p:paused"}, []string{"p"}},
		{"backfill goes on past a paused job", policy.FIFO{Backfill: true}, []string{"p:paused", "q:placed"}, []string{"p"}},
		{"preemptive orders report pauses too", &policy.SRTF{}, []string{"q:placed", "p:paused"}, []string{"p"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.add(t, "p", 1, 1, 2)
			f.add(t, "q", 1, 1, 1)
			e, err := engine.New(tc.policy, holdBack{"p": true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			plan := e.Schedule(f.s, 0)
			if got := trace(plan); !slices.Equal(got, tc.trace) {
				t.Errorf("trace %v, want %v", got, tc.trace)
			}
			var paused []string
			for _, p := range plan.Paused {
				paused = append(paused, p.Job.Spec.ID)
				if p.Reason != "held back" {
					t.Errorf("reason %q", p.Reason)
				}
			}
			if !slices.Equal(paused, tc.paused) {
				t.Errorf("paused %v, want %v", paused, tc.paused)
			}
			for _, d := range plan.Trace {
				if d.Status == engine.Paused && d.Reason != "held back" {
					t.Errorf("decision %+v lacks the placer's reason", d)
				}
			}
		})
	}
}
