package placer_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
)

// spreadFixture builds 4-GPU nodes of type "a" whose free GPU counts are
// free[i] (the lowest indices are taken), plus one free 4-GPU node "b0" of
// type "b" when withB is set, and a job "new" whose speed per GPU on a and b
// is speed.
func spreadFixture(t *testing.T, free []int, withB bool, speed [2]float64) (*model.State, *engine.Pool, *model.Job) {
	t.Helper()
	s, p := stateWith(t, free, withB, bySpeed{"new": speed})
	return s, p, model.NewJob(model.JobSpec{ID: "new", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 99, -1, 1)
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name  string
		free  []int
		withB bool
		speed [2]float64
		types engine.TypeSet
		n     int
		want  []string // nil: cannot place
	}{
		{"emptiest node first", []int{2, 4, 3}, false, [2]float64{1, 1}, 1, 2, []string{"n1/0", "n1/1"}},
		{"worst fit, not best fit", []int{4, 2}, false, [2]float64{1, 1}, 1, 2, []string{"n0/0", "n0/1"}},
		{"ties go to the lowest index", []int{3, 3}, false, [2]float64{1, 1}, 1, 1, []string{"n0/1"}},
		{"whole job on the emptiest node when it fits", []int{4, 4}, false, [2]float64{1, 1}, 1, 3, []string{"n0/0", "n0/1", "n0/2"}},
		{"split over the emptiest nodes", []int{1, 3, 2, 2}, false, [2]float64{1, 1}, 1, 4, []string{"n1/1", "n1/2", "n1/3", "n2/2"}},
		{"gang: all or nothing", []int{1, 1, 1}, false, [2]float64{1, 1}, 1, 4, nil},
		{"fastest type", []int{4}, true, [2]float64{1, 2}, 3, 2, []string{"b0/0", "b0/1"}},
		{"slower type when the fast one lacks GPUs", []int{4, 4}, true, [2]float64{1, 2}, 3, 5, []string{"n0/0", "n0/1", "n0/2", "n0/3", "n1/0"}},
		{"type outside types skipped", []int{4}, true, [2]float64{1, 2}, 1, 2, []string{"n0/0", "n0/1"}},
		{"equal speeds: first declared type", []int{1}, true, [2]float64{3, 3}, 3, 1, []string{"n0/3"}},
		{"zero speed: cannot run there", []int{4}, true, [2]float64{0, 0}, 3, 1, nil},
		{"no GPUs asked", []int{4}, false, [2]float64{1, 1}, 1, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, p, j := spreadFixture(t, tc.free, tc.withB, tc.speed)
			before := []int{p.Free(0), p.Free(1)}
			got := placer.Spread{}.Place(s, p, j, tc.n, tc.types)
			if !slices.Equal(names(p, got.GPUs), tc.want) || got.Moves != nil {
				t.Errorf("got %v (moves %v), want %v", names(p, got.GPUs), got.Moves, tc.want)
			}
			if after := []int{p.Free(0), p.Free(1)}; !slices.Equal(before, after) || !p.AllFree(got.GPUs) {
				t.Errorf("Place changed the pool: free %v -> %v", before, after)
			}
		})
	}
}

func TestSpreadOn(t *testing.T) {
	_, p, _ := spreadFixture(t, []int{2, 4, 0, 3}, false, [2]float64{1, 1})
	for n, want := range map[int][]string{
		0:  nil,
		1:  {"n1/0"},
		4:  {"n1/0", "n1/1", "n1/2", "n1/3"},
		6:  {"n1/0", "n1/1", "n1/2", "n1/3", "n3/1", "n3/2"},
		9:  {"n1/0", "n1/1", "n1/2", "n1/3", "n3/1", "n3/2", "n3/3", "n0/2", "n0/3"},
		10: nil,
	} {
		if got := names(p, placer.SpreadOn(p, 0, n)); !slices.Equal(got, want) {
			t.Errorf("SpreadOn(%d) = %v, want %v", n, got, want)
		}
	}
	if p.Free(0) != 9 {
		t.Errorf("SpreadOn changed the pool: %d free, want 9", p.Free(0))
	}
}

func TestSpreadName(t *testing.T) {
	if got := (placer.Spread{}).Name(); got != "spread" {
		t.Errorf("Name() = %q", got)
	}
}
