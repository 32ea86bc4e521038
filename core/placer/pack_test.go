package placer_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
)

type flat struct{}

func (flat) Speed(*model.Job, int, int) float64 { return 1 }

// poolWith builds a pool of 4-GPU nodes of type "a" whose free GPU counts are
// free[i] (the lowest indices are taken), plus one 4-GPU node of type "b"
// when withB is set.
func poolWith(t *testing.T, free []int, withB bool) *engine.Pool {
	_, p := stateWith(t, free, withB, flat{})
	return p
}

// stateWith is poolWith with the state behind the pool and its profile.
func stateWith(t *testing.T, free []int, withB bool, prof model.Profile) (*model.State, *engine.Pool) {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}, {Name: "b", MemMiB: 1, TFLOPS: 1}}
	var nodes []model.Node
	for i := range free {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("n%d", i), Type: 0, GPUs: 4})
	}
	if withB {
		nodes = append(nodes, model.Node{Name: "b0", Type: 1, GPUs: 4})
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, prof)
	for i, f := range free {
		if f == 4 {
			continue
		}
		j := model.NewJob(model.JobSpec{ID: fmt.Sprint(i), GPUs: 4 - f, MinGPUs: 4 - f, MaxGPUs: 4 - f}, i, -1, 1)
		s.Submit(j)
		var gpus []model.GPU
		for g := 0; g < 4-f; g++ {
			gpus = append(gpus, model.GPU{Node: int32(i), Index: int32(g)})
		}
		if err := s.Start(j, gpus); err != nil {
			t.Fatal(err)
		}
	}
	p := engine.NewPool(c)
	p.Reset(s)
	return s, p
}

func names(p *engine.Pool, gpus []model.GPU) []string {
	var out []string
	for _, g := range gpus {
		out = append(out, p.Cluster().GPUName(g))
	}
	return out
}

func TestPack(t *testing.T) {
	tests := []struct {
		name  string
		free  []int
		withB bool
		types engine.TypeSet
		n     int
		want  []string // nil: cannot place
	}{
		{"best fit picks the tightest node", []int{4, 2, 3}, false, 1, 2, []string{"n1/2", "n1/3"}},
		{"ties go to the lowest index", []int{3, 3}, false, 1, 3, []string{"n0/1", "n0/2", "n0/3"}},
		{"whole node before splitting", []int{2, 4, 2}, false, 1, 4, []string{"n1/0", "n1/1", "n1/2", "n1/3"}},
		{"fewest nodes across nodes", []int{1, 4, 2, 4}, false, 1, 6, []string{"n1/0", "n1/1", "n1/2", "n1/3", "n2/2", "n2/3"}},
		{"gang: all or nothing", []int{1, 1, 1}, false, 1, 4, nil},
		{"infeasible type skipped", []int{0}, true, 1, 1, nil},
		{"other type used when allowed", []int{0}, true, 3, 2, []string{"b0/0", "b0/1"}},
		{"fewer nodes wins across types", []int{2, 2}, true, 3, 4, []string{"b0/0", "b0/1", "b0/2", "b0/3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := poolWith(t, tc.free, tc.withB)
			before := []int{p.Free(0), p.Free(1)}
			got := placer.Pack{}.Place(nil, p, nil, tc.n, tc.types).GPUs
			if !slices.Equal(names(p, got), tc.want) {
				t.Errorf("got %v, want %v", names(p, got), tc.want)
			}
			if after := []int{p.Free(0), p.Free(1)}; !slices.Equal(before, after) {
				t.Errorf("Place changed the pool: free %v -> %v", before, after)
			}
		})
	}
}
