package placer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// seqSpeeds gives job Seq s the speed tab[s][t] per GPU on type t.
type seqSpeeds [][3]float64

func (p seqSpeeds) Speed(j *model.Job, t, n int) float64 { return p[j.Seq][t] * float64(n) }

// indexWorld is a cluster of three types, four 4-GPU nodes each, and jobs
// of 1 to 3 GPUs that a seeded rand starts, stops, ends, moves and
// resizes.
type indexWorld struct {
	rng  *rand.Rand
	c    *model.Cluster
	s    *model.State
	pool *engine.Pool
	jobs []*model.Job
}

func newIndexWorld(t *testing.T, seed uint64) *indexWorld {
	t.Helper()
	types := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15}, {Name: "p100", MemMiB: 16384, TFLOPS: 10},
		{Name: "k80", MemMiB: 12288, TFLOPS: 4}}
	var nodes []model.Node
	for ty := range 3 {
		for k := range 4 {
			nodes = append(nodes, model.Node{Name: types[ty].Name + string(rune('a'+k)), Type: ty, GPUs: 4})
		}
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		t.Fatal(err)
	}
	w := &indexWorld{rng: rand.New(rand.NewPCG(seed, 29)), c: c, pool: engine.NewPool(c)}
	w.s = model.NewState(c, w.speeds(60))
	for seq := range 60 {
		n := 1 + w.rng.IntN(3)
		j := model.NewJob(model.JobSpec{ID: string(rune('A' + seq)), GPUs: n, MinGPUs: 1, MaxGPUs: 3}, seq, -1, 1)
		w.jobs = append(w.jobs, j)
		w.s.Submit(j)
	}
	return w
}

// speeds draws a profile from few values, so that gains tie often (ties
// go by Seq) and some types cannot run a job (0).
func (w *indexWorld) speeds(n int) seqSpeeds {
	vals := []float64{0, 1, 2, 2, 3, 4}
	p := make(seqSpeeds, n)
	for i := range p {
		for t := range 3 {
			p[i][t] = vals[w.rng.IntN(len(vals))]
		}
	}
	return p
}

// freeOn returns n free GPUs of type ty, or nil.
func (w *indexWorld) freeOn(ty, n int) []model.GPU {
	var out []model.GPU
	for ni, node := range w.c.Nodes {
		for g := 0; g < node.GPUs && node.Type == ty && len(out) < n; g++ {
			if w.s.FreeMask(ni)&(1<<uint(g)) != 0 {
				out = append(out, model.GPU{Node: int32(ni), Index: int32(g)})
			}
		}
	}
	if len(out) < n {
		return nil
	}
	return out
}

// step changes the world at random; a new state now and then, with a new
// profile half the time.
func (w *indexWorld) step(t *testing.T) {
	t.Helper()
	for range 1 + w.rng.IntN(6) {
		j := w.jobs[w.rng.IntN(len(w.jobs))]
		ty, n := w.rng.IntN(3), 1+w.rng.IntN(3)
		var err error
		switch {
		case j.State == model.Waiting:
			if g := w.freeOn(ty, j.Spec.GPUs); g != nil {
				err = w.s.Start(j, g)
			}
		case j.State != model.Running:
		case w.rng.IntN(4) == 0:
			err = w.s.Stop(j)
		case w.rng.IntN(8) == 0:
			err = w.s.End(j, model.Finished)
		default: // move or resize
			if g := w.freeOn(ty, n); g != nil {
				err = w.s.Resize(j, g)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if w.rng.IntN(10) == 0 {
		prof := w.s.Profile
		if w.rng.IntN(2) == 0 {
			prof = w.speeds(len(w.jobs))
		}
		ns := model.NewState(w.c, prof)
		var hold []model.Holding
		for _, j := range w.jobs {
			if j.State == model.Running || j.State == model.Waiting {
				hold = append(hold, model.Holding{Job: j, GPUs: j.Alloc})
			}
		}
		if errs := ns.Load(hold); len(errs) > 0 {
			t.Fatal(errs)
		}
		w.s = ns
	}
	w.pool.Reset(w.s)
}

// overrun starts and stops a waiting job until the state's log of moved
// jobs has started afresh, losing the round's earlier changes from it: a
// reader must then rebuild. It leaves the job waiting as it was.
func (w *indexWorld) overrun(t *testing.T) {
	t.Helper()
	mark := w.s.MovedMark()
	for _, j := range w.jobs {
		g := w.freeOn(0, 1)
		if j.State != model.Waiting || g == nil {
			continue
		}
		for {
			if _, ok := w.s.MovedSince(mark); !ok {
				return
			}
			if err := w.s.Start(j, g); err != nil {
				t.Fatal(err)
			}
			if err := w.s.Stop(j); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestHeteroIndexIncremental: after random starts, stops, ends, moves,
// resizes and new states, the index kept from round to round holds, in
// every bucket, the candidates that a fresh placer's index holds, in the
// same order once sorted, with none passed over (a job's best speed, like
// its gains, follows its state and GPU count); searches that pass over
// held jobs in between do not leak into the next round. Now and then the
// state's log of moved jobs forgets the round's changes (overrun).
func TestHeteroIndexIncremental(t *testing.T) {
	overruns := 0
	for seed := range uint64(20) {
		w := newIndexWorld(t, seed)
		h := &Hetero{}
		for round := range 200 {
			w.step(t)
			if w.rng.IntN(15) == 0 {
				w.overrun(t)
				if _, ok := w.s.MovedSince(h.mark); !ok && h.state == w.s {
					overruns++
				}
			}
			h.refresh(w.s, w.pool)
			ref := &Hetero{} // built from scratch, as a new placer does
			ref.refresh(w.s, w.pool)
			if msg := sameIndex(h, ref); msg != "" {
				t.Fatalf("seed %d, round %d: %s", seed, round, msg)
			}
			w.search(h)
		}
	}
	if overruns < 50 {
		t.Fatalf("the log forgot a refresh's mark only %d times", overruns)
	}
}

// search holds a running job or two (as the engine does with stop
// candidates) and searches some buckets, which passes over them.
func (w *indexWorld) search(h *Hetero) {
	run := w.s.Running()
	for range w.rng.IntN(3) {
		if len(run) > 0 {
			w.pool.Hold(run[w.rng.IntN(len(run))])
		}
	}
	for _, bs := range h.pairs {
		for _, b := range bs {
			if w.rng.IntN(2) == 0 {
				h.top(w.pool, 0, b.list, 0)
			}
		}
	}
}

// sameIndex returns "" when h and fresh (the rebuilt one) have the same non-empty buckets,
// sorted alike, with head 0, and otherwise what differs.
func sameIndex(h, fresh *Hetero) string {
	if len(h.pairs) != len(fresh.pairs) {
		return "different numbers of type pairs"
	}
	for pi := range h.pairs {
		got, want := nonEmpty(h.pairs[pi]), nonEmpty(fresh.pairs[pi])
		if len(got) != len(want) {
			return "different buckets"
		}
		for b := range got {
			g, f := got[b].list, want[b].list
			if got[b].gpus != want[b].gpus || len(g.list) != len(f.list) || g.head != 0 {
				return "bucket sizes or head differ"
			}
			h.sortedBucket(pi, got[b].gpus)
			fresh.sortedBucket(pi, want[b].gpus)
			for k := range g.list {
				if g.list[k].job != f.list[k].job || math.Float64bits(g.list[k].gain) != math.Float64bits(f.list[k].gain) {
					return "candidates differ"
				}
			}
		}
	}
	return ""
}

func nonEmpty(bs []sized) []sized {
	var out []sized
	for _, b := range bs {
		if len(b.list.list) > 0 {
			out = append(out, b)
		}
	}
	return out
}
