package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestIncrementalResetInvisible: a pool kept from round to round, whose
// reset reloads only the nodes changed since, and a pool built afresh for
// every round show the same free GPUs after each reset — per node, per
// type, through the index's best fits, fullest nodes and node lists, and,
// on clusters with CPU and memory, through what focus hides — and again
// after the same tentative takes, gives and releases within the round. The
// state between rounds changes by random starts, stops, ends and resizes;
// now and then by bursts long enough to overrun its change log, and now
// and then it is rebuilt as a new state of the same jobs.
func TestIncrementalResetInvisible(t *testing.T) {
	seeded(t, 300, 11, func(t *testing.T, rng *rand.Rand) {
		w := newResetWorld(t, rng, rng.IntN(3) == 0)
		kept := NewPool(w.s.Cluster)
		for round := range 40 {
			where := fmt.Sprintf("round %d", round)
			w.churn(rng)
			kept.Reset(w.s)
			fresh := NewPool(w.s.Cluster)
			fresh.Reset(w.s)
			samePoolViews(t, where+" after reset", kept, fresh, w, rng)
			w.tentative(t, rng, where, kept, fresh)
		}
	})
}

// resetWorld is a state on a random cluster and its jobs.
type resetWorld struct {
	s    *model.State
	jobs []*model.Job
	vec  bool // the cluster models CPU and memory
}

func newResetWorld(t *testing.T, rng *rand.Rand, vec bool) *resetWorld {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}, {Name: "b", MemMiB: 1, TFLOPS: 1}, {Name: "c", MemMiB: 1, TFLOPS: 1}}
	types = types[:1+rng.IntN(3)]
	var nodes []model.Node
	for i := range []int{3, 20, 70, 140}[rng.IntN(4)] + rng.IntN(10) {
		n := model.Node{Name: fmt.Sprint("n", i), Type: rng.IntN(len(types)), GPUs: []int{1, 2, 4, 8}[rng.IntN(4)]}
		if vec {
			n.Capacity = model.Resources{model.ResourceCPU: int64(1+rng.IntN(16)) * 1000, model.ResourceMemory: int64(1+rng.IntN(64)) << 30}
		}
		nodes = append(nodes, n)
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		t.Fatal(err)
	}
	w := &resetWorld{s: model.NewState(c, rzSpeed{}), vec: vec}
	for i := range 3 * len(nodes) {
		g := []int{1, 2, 3, 4, 8}[rng.IntN(5)]
		rg := []int{1, g}[rng.IntN(2)]
		spec := model.JobSpec{ID: fmt.Sprint("j", i), GPUs: g, MinGPUs: 1, MaxGPUs: g, ReplicaGPUs: rg}
		if vec {
			spec.Requests = model.Resources{model.ResourceCPU: int64(1+rng.IntN(8)) * 500, model.ResourceMemory: int64(1+rng.IntN(16)) << 30}
		}
		j := model.NewJob(spec, i, -1, 100)
		w.s.Submit(j)
		w.jobs = append(w.jobs, j)
	}
	return w
}

// freeGPUs returns up to k free GPUs of s from a random node on, spanning
// nodes in index order (wrapping).
func freeGPUs(s *model.State, rng *rand.Rand, k int) []model.GPU {
	var gpus []model.GPU
	nodes := len(s.Cluster.Nodes)
	start := rng.IntN(nodes)
	for d := 0; d < nodes && len(gpus) < k; d++ {
		n := (start + d) % nodes
		for m := s.FreeMask(n); m != 0 && len(gpus) < k; m &= m - 1 {
			i := 0
			for m&(1<<uint(i)) == 0 {
				i++
			}
			gpus = append(gpus, model.GPU{Node: int32(n), Index: int32(i)})
		}
	}
	return gpus
}

// churn changes the state as the shell between two rounds would.
func (w *resetWorld) churn(rng *rand.Rand) {
	ops := rng.IntN(6)
	switch rng.IntN(12) {
	case 0: // a burst that overruns the state's change log
		ops = 10 * (len(w.s.Cluster.Nodes) + 8)
	case 1: // a rebuilt state of the same jobs (as the service and kube do)
		w.rebuild()
	}
	for range ops {
		w.step(rng)
	}
}

// step makes one random change: a start, stop, end or resize.
func (w *resetWorld) step(rng *rand.Rand) {
	s := w.s
	switch op := rng.IntN(5); {
	case op < 2 || len(s.Running()) == 0:
		waiting := s.Waiting()
		if len(waiting) == 0 {
			return
		}
		j := waiting[rng.IntN(len(waiting))]
		if gpus := freeGPUs(s, rng, 1+rng.IntN(j.Spec.GPUs)); len(gpus) > 0 {
			_ = s.Start(j, gpus) // may lack CPU or memory: then nothing changes
		}
	case op == 2:
		_ = s.Stop(s.Running()[rng.IntN(len(s.Running()))])
	case op == 3:
		j := s.Running()[rng.IntN(len(s.Running()))]
		if err := s.End(j, model.Finished); err == nil {
			nj := model.NewJob(j.Spec, len(w.jobs), -1, 100)
			s.Submit(nj)
			w.jobs = append(w.jobs, nj)
		}
	default:
		j := s.Running()[rng.IntN(len(s.Running()))]
		alloc := slices.Clone(j.Alloc)
		if rng.IntN(2) == 0 && len(alloc) > 1 {
			alloc = alloc[:len(alloc)/2]
		} else {
			alloc = append(alloc, freeGPUs(s, rng, 1+rng.IntN(2))...)
		}
		_ = s.Resize(j, alloc)
	}
}

// rebuild replaces the state with a new one holding the same jobs.
func (w *resetWorld) rebuild() {
	var hs []model.Holding
	for _, j := range w.jobs {
		switch j.State {
		case model.Running:
			hs = append(hs, model.Holding{Job: j, GPUs: j.Alloc})
		case model.Waiting:
			hs = append(hs, model.Holding{Job: j})
		}
	}
	slices.SortFunc(hs, func(a, b model.Holding) int { return a.Job.Seq - b.Job.Seq })
	for _, h := range hs {
		h.Job.State, h.Job.Alloc = model.Waiting, nil
	}
	w.s = model.NewState(w.s.Cluster, rzSpeed{})
	_ = w.s.Load(hs)
}

// tentative drives both pools through the same takes, gives and releases
// of a round, comparing them now and then.
func (w *resetWorld) tentative(t *testing.T, rng *rand.Rand, where string, a, b *Pool) {
	t.Helper()
	for step := range rng.IntN(8) {
		at := fmt.Sprintf("%s, step %d", where, step)
		switch op := rng.IntN(3); {
		case op == 0 && len(w.s.Running()) > 0:
			j := w.s.Running()[rng.IntN(len(w.s.Running()))]
			if b.Settled(j) {
				a.Release(j)
				b.Release(j)
			}
		default:
			waiting := w.s.Waiting()
			if len(waiting) == 0 {
				continue
			}
			j := waiting[rng.IntN(len(waiting))]
			gpus := someFree(b, rng, j.Spec.ReplicaGPUs)
			if gpus != nil && b.Fits(j, gpus) {
				a.TakeJob(j, gpus)
				b.TakeJob(j, gpus)
			}
		}
		if rng.IntN(3) == 0 {
			samePoolViews(t, at, a, b, w, rng)
		}
	}
}

// samePoolViews fails unless a and b show the same free GPUs (samePools),
// fullest nodes and node lists, and, on a cluster with other resources,
// hide the same GPUs when focused on the same random job.
func samePoolViews(t *testing.T, where string, a, b *Pool, w *resetWorld, rng *rand.Rand) {
	t.Helper()
	samePools(t, where, a, b)
	for ty := range a.c.Types {
		if fa, fb := a.Fullest(ty), b.Fullest(ty); fa != fb {
			t.Fatalf("%s: fullest node of type %d is %d kept, %d fresh", where, ty, fa, fb)
		}
		for least := range 9 {
			if na, nb := a.FreeNodes(nil, ty, least), b.FreeNodes(nil, ty, least); !slices.Equal(na, nb) {
				t.Fatalf("%s: nodes of type %d with %d free are %v kept, %v fresh", where, ty, least, na, nb)
			}
		}
		if a.Starved(ty) != b.Starved(ty) {
			t.Fatalf("%s: type %d starves %d kept, %d fresh", where, ty, a.Starved(ty), b.Starved(ty))
		}
	}
	if a.FreeAll() != b.FreeAll() {
		t.Fatalf("%s: %d GPUs free kept, %d fresh", where, a.FreeAll(), b.FreeAll())
	}
	if !w.vec {
		return
	}
	if sameFocus(t, where, a, b, w.jobs, 7, rng) {
		a.unfocus()
		b.unfocus()
	}
}
