package engine

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestLazyHidingInvisible: a pool whose focus leaves its hiding lazy and
// one that gives every hidden GPU back at unfocus, driven through the same
// random focuses, takes and gives on random clusters with CPU and memory,
// agree on everything they show: what focus answers and shows the placer,
// and, between placements, every node's free GPUs, the free counts per
// type and the index's best fits. The pools are read between placements
// only now and then, since a read gives a lazy hiding back.
func TestLazyHidingInvisible(t *testing.T) {
	seeded(t, 200, 7, func(t *testing.T, rng *rand.Rand) {
		s, jobs := hidState(t, rng)
		lazy, eager := NewPool(s.Cluster), NewPool(s.Cluster)
		lazy.Reset(s)
		eager.Reset(s)
		var held []heldGPUs
		for step := range 60 {
			where := fmt.Sprintf("step %d", step)
			switch op := rng.IntN(4); {
			case op < 2: // a placement's focus
				if sameFocus(t, where, lazy, eager, jobs, 3, rng) {
					lazy.unfocus()
					eager.unfocus()
					eager.restoreAll()
				}
			case op == 2 || len(held) == 0: // a start
				j := jobs[rng.IntN(len(jobs))]
				gpus := someFree(eager, rng, j.Spec.ReplicaGPUs)
				if gpus != nil && eager.Fits(j, gpus) {
					lazy.TakeJob(j, gpus)
					eager.TakeJob(j, gpus)
					held = append(held, heldGPUs{j, gpus})
				}
			default: // an end
				k := rng.IntN(len(held))
				h := held[k]
				held = append(held[:k], held[k+1:]...)
				lazy.GiveJob(h.job, h.gpus)
				eager.GiveJob(h.job, h.gpus)
			}
			if rng.IntN(4) == 0 { // reading settles the lazy pool: not at every step
				samePools(t, where, lazy, eager)
			}
		}
		samePools(t, "at the end", lazy, eager)
	})
}

// sameFocus focuses pools a and b alike on a random job of jobs (on
// random types of the first types) and fails unless they answer alike and
// then show the same free GPUs; it returns whether they hid any.
func sameFocus(t *testing.T, where string, a, b *Pool, jobs []*model.Job, types int, rng *rand.Rand) bool {
	t.Helper()
	j := jobs[rng.IntN(len(jobs))]
	n, fit := 1+rng.IntN(j.Spec.GPUs), TypeSet(1+rng.IntN(types))
	h1, x1 := a.focus(j, n, fit)
	h2, x2 := b.focus(j, n, fit)
	if h1 != h2 || x1 != x2 {
		t.Fatalf("%s: focus(%s, %d) = %v, %v in the first pool, %v, %v in the second", where, j.Spec.ID, n, h1, x1, h2, x2)
	}
	samePools(t, where+" (focused)", a, b)
	return h1
}

// seeded runs f for the seeds 0 to n-1, each in a subtest named by its
// seed with its own generator (stream tells the tests' generators apart).
func seeded(t *testing.T, n, stream uint64, f func(t *testing.T, rng *rand.Rand)) {
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { f(t, rand.New(rand.NewPCG(seed, stream))) })
	}
}

type heldGPUs struct {
	job  *model.Job
	gpus []model.GPU
}

// hidState is a random cluster of two or three types whose nodes' CPU and
// memory run out before their GPUs, and jobs that ask for both.
func hidState(t *testing.T, rng *rand.Rand) (*model.State, []*model.Job) {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}, {Name: "b", MemMiB: 1, TFLOPS: 1}}
	var nodes []model.Node
	for i := range 4 + rng.IntN(12) {
		capa := model.Resources{model.ResourceCPU: int64(1+rng.IntN(16)) * 1000, model.ResourceMemory: int64(1+rng.IntN(64)) << 30}
		nodes = append(nodes, model.Node{Name: fmt.Sprint("n", i), Type: rng.IntN(2), GPUs: []int{2, 4, 8}[rng.IntN(3)], Capacity: capa})
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, rzSpeed{})
	var jobs []*model.Job
	for i := range 12 {
		g := []int{1, 2, 4, 8}[rng.IntN(4)]
		rg := []int{1, g}[rng.IntN(2)]
		req := model.Resources{model.ResourceCPU: int64(1+rng.IntN(8)) * 500, model.ResourceMemory: int64(1+rng.IntN(16)) << 30}
		j := model.NewJob(model.JobSpec{ID: fmt.Sprint("j", i), GPUs: g, MinGPUs: g, MaxGPUs: g, ReplicaGPUs: rg, Requests: req}, i, -1, 100)
		s.Submit(j)
		jobs = append(jobs, j)
	}
	return s, jobs
}

// someFree returns k free GPUs of one node (k a replica's GPUs), or nil.
func someFree(p *Pool, rng *rand.Rand, k int) []model.GPU {
	k = max(k, 1)
	start := rng.IntN(len(p.c.Nodes))
	for d := range p.c.Nodes {
		n := (start + d) % len(p.c.Nodes)
		if p.NodeFree(n) >= k {
			return p.Lowest(nil, n, k)
		}
	}
	return nil
}

// samePools fails unless a and b show the same free GPUs, per node, per
// type and through the index.
func samePools(t *testing.T, where string, a, b *Pool) {
	t.Helper()
	for n := range a.c.Nodes {
		if ma, mb := a.NodeMask(n), b.NodeMask(n); ma != mb {
			t.Fatalf("%s: node %d shows %0*b lazily, %0*b eagerly", where, n, 8, ma, 8, mb)
		}
		if ha, hb := a.Hidden(n), b.Hidden(n); ha != hb {
			t.Fatalf("%s: node %d hides %d lazily, %d eagerly", where, n, ha, hb)
		}
	}
	for ty := range a.c.Types {
		if a.Free(ty) != b.Free(ty) || a.Starved(ty) != b.Starved(ty) {
			t.Fatalf("%s: type %d has %d free (%d starved) lazily, %d (%d) eagerly", where, ty, a.Free(ty), a.Starved(ty), b.Free(ty), b.Starved(ty))
		}
		for k := range bits.UintSize / 8 {
			if a.BestFit(ty, k) != b.BestFit(ty, k) {
				t.Fatalf("%s: best fit of %d GPUs of type %d is node %d lazily, %d eagerly", where, k, ty, a.BestFit(ty, k), b.BestFit(ty, k))
			}
		}
	}
}
