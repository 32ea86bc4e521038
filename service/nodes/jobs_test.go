package nodes

import (
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// TestJobOnTable: a running job with a live replica on a (devices 0, 2),
// one on b (device 2), a lost one on c and one a resize took out and that
// is gone on a: its GPUs on each node, its GPU type, its allocation in the
// cluster of a and b (positions: device 2 is a GPU's position 1), and its
// ran record at its end.
func TestJobOnTable(t *testing.T) {
	a := New("a", "", gpus("v100", 16384, 4), nil) // devices 0, 2, 4, 6
	b := New("b", "", gpus("v100", 16384, 2), nil) // devices 0, 2
	c := New("c", "", gpus("x1", 4000, 2), nil)
	a.Ready, b.Ready = true, true
	m := map[string]*Node{"a": a, "b": b, "c": c}
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	rec := ledger.Record{Job: api.Job{ID: "j1", State: api.Running, StartedAt: &start,
		Alloc: []string{"a:0", "a:2", "b:2"}}}
	rec.Replicas = []ledger.Replica{
		{ID: "j1.1.0", Node: "a", GPUs: []int{0, 2}},
		{ID: "j1.1.1", Node: "b", GPUs: []int{2}},
		{ID: "j1.1.2", Node: "c", GPUs: []int{0}, Lost: true, Done: true},
		{ID: "j1.1.3", Node: "a", GPUs: []int{4}, Left: true, Done: true},
	}
	for node, want := range map[string][]int{"a": {0, 2}, "b": {2}, "c": nil} {
		if got := GPUsOn(&rec, node); !slices.Equal(got, want) {
			t.Errorf("GPUsOn(%s) = %v, want %v", node, got, want)
		}
	}
	if got := JobGPUType(&rec, m); got != "v100" {
		t.Errorf("JobGPUType = %q, want v100", got)
	}
	if got := len(Ready(m)); got != 2 {
		t.Errorf("Ready: %d nodes, want 2", got)
	}
	cl, idx, err := Cluster(Ready(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.GPU{{Node: 0, Index: 0}, {Node: 0, Index: 1}, {Node: 1, Index: 1}}
	if got := ModelAlloc(&rec, m, cl, idx); !slices.Equal(got, want) {
		t.Errorf("ModelAlloc = %v, want %v", got, want)
	}
	NoteRan(&rec, m, start.Add(90*time.Second))
	if rec.Ran.Seconds != 90 || rec.Ran.GPUs != 3 || rec.Ran.Type != "v100" {
		t.Errorf("Ran = %+v, want 90 s on 3 v100 GPUs", rec.Ran)
	}
	rec.State = api.Succeeded
	if got := GPUsOn(&rec, "a"); got != nil {
		t.Errorf("GPUsOn of an ended job = %v, want none", got)
	}
}
