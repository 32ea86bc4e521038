package placer_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
)

// bySpeed gives each job (by id) a speed per GPU type; GPU count scales it
// linearly.
type bySpeed map[string][2]float64

func (b bySpeed) Speed(j *model.Job, t, n int) float64 { return b[j.Spec.ID][t] * float64(n) }

// heteroFixture: node v0 has 1 "fast" GPU (8 GiB), node k0 has 2 "slow" GPUs
// (12 GiB). Running jobs are placed on the GPUs given.
type heteroFixture struct {
	s    *model.State
	pool *engine.Pool
}

func newHetero(t *testing.T, speeds bySpeed, running map[string]model.GPU, peak map[string]int) *heteroFixture {
	t.Helper()
	types := []model.GPUType{{Name: "fast", MemMiB: 8192, TFLOPS: 10}, {Name: "slow", MemMiB: 12288, TFLOPS: 4}}
	c, err := model.NewCluster(types, []model.Node{{Name: "v0", Type: 0, GPUs: 1}, {Name: "k0", Type: 1, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speeds)
	ids := make([]string, 0, len(running))
	for id := range running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for seq, id := range ids {
		j := model.NewJob(model.JobSpec{ID: id, GPUs: 1, MinGPUs: 1, MaxGPUs: 1, PeakMemMiB: peak[id]}, seq, -1, 1)
		s.Submit(j)
		if err := s.Start(j, []model.GPU{running[id]}); err != nil {
			t.Fatal(err)
		}
	}
	p := engine.NewPool(c)
	p.Reset(s)
	return &heteroFixture{s: s, pool: p}
}

func (f *heteroFixture) place(t *testing.T, id string) engine.Placement {
	t.Helper()
	j := model.NewJob(model.JobSpec{ID: id, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 99, -1, 1)
	return (&placer.Hetero{}).Place(f.s, f.pool, j, 1, engine.Feasible(f.s, j, 1))
}

var (
	fast  = model.GPU{Node: 0, Index: 0}
	slow0 = model.GPU{Node: 1, Index: 0}
	slow1 = model.GPU{Node: 1, Index: 1}
)

func TestHeteroSwap(t *testing.T) {
	// S runs at 10 on fast, 9 on slow: normalised m_s,fast = 1, m_s,slow = 0.9.
	tests := []struct {
		name    string
		speeds  bySpeed
		running map[string]model.GPU
		peak    map[string]int
		gpus    []model.GPU
		moved   string // "" = no swap
	}{
		// Only the fast GPU is free: S takes it. I (fast 10, slow 2) on slow
		// would gain 1·(1 − 0.2) and S lose 1·(1 − 0.9): gain 0.7 > 0, swap.
		{"positive gain swaps", bySpeed{"S": {10, 9}, "I": {10, 2}},
			map[string]model.GPU{"I": slow0}, nil, []model.GPU{slow0}, "I"},
		// I gains 1·(1 − 0.95) = 0.05 < S's loss 0.1: no positive gain.
		{"no positive gain, no swap", bySpeed{"S": {10, 9}, "I": {10, 9.5}},
			map[string]model.GPU{"I": slow0}, nil, []model.GPU{fast}, ""},
		// I1 gains 0.8 − 0.1 = 0.7, I2 gains 0.5 − 0.1 = 0.4: I1 wins.
		{"largest gain wins", bySpeed{"S": {10, 9}, "I1": {10, 2}, "I2": {10, 5}},
			map[string]model.GPU{"I1": slow1, "I2": slow0}, nil, []model.GPU{slow1}, "I1"},
		// Equal gains: the job that arrived first (I1 sorts first) wins.
		{"ties to the earlier job", bySpeed{"S": {10, 9}, "I1": {10, 2}, "I2": {10, 2}},
			map[string]model.GPU{"I1": slow1, "I2": slow0}, nil, []model.GPU{slow1}, "I1"},
		// I1 needs 10 GiB: the 8 GiB fast GPU cannot hold it; I2 is next.
		{"memory-infeasible target skipped", bySpeed{"S": {10, 9}, "I1": {10, 2}, "I2": {10, 5}},
			map[string]model.GPU{"I1": slow1, "I2": slow0}, map[string]int{"I1": 10240}, []model.GPU{slow0}, "I2"},
		// I cannot run on fast at all (zero throughput): no swap.
		{"zero-throughput target skipped", bySpeed{"S": {10, 9}, "I": {0, 2}},
			map[string]model.GPU{"I": slow0}, nil, []model.GPU{fast}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newHetero(t, tc.speeds, tc.running, tc.peak)
			pl := f.place(t, "S")
			if !slices.Equal(pl.GPUs, tc.gpus) {
				t.Errorf("S got %v, want %v", pl.GPUs, tc.gpus)
			}
			moved := ""
			if len(pl.Moves) == 1 {
				moved = pl.Moves[0].Job.Spec.ID
				if !slices.Equal(pl.Moves[0].GPUs, []model.GPU{fast}) {
					t.Errorf("%s moved to %v, want the fast GPU", moved, pl.Moves[0].GPUs)
				}
			}
			if moved != tc.moved || len(pl.Moves) > 1 {
				t.Errorf("moves %v, want %q", pl.Moves, tc.moved)
			}
		})
	}
}

func TestHeteroPrefersFastestFreeType(t *testing.T) {
	// Nothing runs: S (slow 12 > fast 10, like Recommendation on a P100)
	// goes to a slow GPU.
	f := newHetero(t, bySpeed{"S": {10, 12}}, nil, nil)
	if pl := f.place(t, "S"); !slices.Equal(pl.GPUs, []model.GPU{slow0}) || len(pl.Moves) != 0 {
		t.Errorf("got %v moves %v", pl.GPUs, pl.Moves)
	}
}

// TestHeteroGainsPerState: the index keeps a running job's gains while its
// state, GPU count and type are unchanged (model.State fixes its speeds);
// in a new state, as a shell builds when a profile or a spec changes, they
// are computed again. I's swap gain is 0.7 under the first profile and
// below S's loss under the second: the same placer swaps, then does not.
func TestHeteroGainsPerState(t *testing.T) {
	h := &placer.Hetero{}
	first := newHetero(t, bySpeed{"S": {10, 9}, "I": {10, 2}}, map[string]model.GPU{"I": slow0}, nil)
	j := model.NewJob(model.JobSpec{ID: "S", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 99, -1, 1)
	pl := h.Place(first.s, first.pool, j, 1, engine.Feasible(first.s, j, 1))
	if len(pl.Moves) != 1 || pl.Moves[0].Job.Spec.ID != "I" {
		t.Fatalf("first state: placement %+v, want I swapped", pl)
	}
	// The same job I, put into a new state with a profile where it runs
	// nearly as fast on slow: its gain is 0.05, less than S's loss of 0.1.
	i := first.s.Running()[0]
	s := model.NewState(first.s.Cluster, bySpeed{"S": {10, 9}, "I": {10, 9.5}})
	s.Submit(i)
	if err := s.Start(i, []model.GPU{slow0}); err != nil {
		t.Fatal(err)
	}
	first.pool.Reset(s)
	pl = h.Place(s, first.pool, j, 1, engine.Feasible(s, j, 1))
	if len(pl.Moves) != 0 || !slices.Equal(pl.GPUs, []model.GPU{fast}) {
		t.Fatalf("new state: placement %+v, want S on the free fast GPU, no swap", pl)
	}
}
