package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestEntrySorterIsStableSort checks entrySorter against
// slices.SortStableFunc(es, entryOrder) on random pairs whose keys are
// drawn from pools of 1 to 12 values (so both the counting path and the
// fall-back run), with NaN, ±0 and ±Inf among them: the same pairs in the
// same order, ties told apart by their job.
func TestEntrySorterIsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	values := []float64{0, math.Copysign(0, -1), 1, 2, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e9, 3}
	var z entrySorter
	counted, fell := 0, 0
	for trial := range 2000 {
		pool := 1 + rng.IntN(12)
		if trial%10 == 5 {
			pool = 50 + rng.IntN(500) // many keys: some drawn from a continuum
		}
		keys := make([][3]float64, pool)
		for k := range keys {
			for f := range 3 {
				keys[k][f] = values[rng.IntN(len(values))]
				if trial%10 == 5 && rng.IntN(2) == 0 {
					keys[k][f] = rng.Float64()
				}
			}
		}
		n := rng.IntN(60)
		if trial%5 == 0 {
			n = rng.IntN(3000) // long enough for the sorts' larger-slice paths
		}
		es := make([]allocEntry, n)
		for i := range es {
			k := keys[rng.IntN(pool)]
			es[i] = allocEntry{prio: k[0], deficit: k[1], x: k[2], job: &model.Job{Seq: i}, t: int32(trial)}
		}
		want := slices.Clone(es)
		slices.SortStableFunc(want, entryOrder)
		if z.count(slices.Clone(es)) {
			counted++
		} else {
			fell++
		}
		z.sort(es)
		for i := range es {
			if es[i].job != want[i].job {
				t.Fatalf("trial %d (%d keys, %d pairs): position %d holds job %d, the stable sort job %d",
					trial, pool, n, i, es[i].job.Seq, want[i].job.Seq)
			}
		}
	}
	if counted == 0 || fell == 0 {
		t.Fatalf("counting path %d times, fall-back %d times: both must run", counted, fell)
	}
}

// TestEntrySorterHandCase sorts a bestFits round's pairs by hand: gangs at
// +Inf first, in arrival order, then the others at the common priority.
func TestEntrySorterHandCase(t *testing.T) {
	j := make([]*model.Job, 5)
	for i := range j {
		j[i] = &model.Job{Seq: i}
	}
	es := []allocEntry{{prio: 4, job: j[0]}, {prio: math.Inf(1), job: j[1]}, {prio: 4, job: j[2]},
		{prio: math.Inf(1), job: j[3]}, {prio: 4, job: j[4]}}
	var z entrySorter
	z.sort(es)
	for i, want := range []int{1, 3, 0, 2, 4} {
		if es[i].job.Seq != want {
			t.Fatalf("position %d: job %d, want %d", i, es[i].job.Seq, want)
		}
	}
}

// BenchmarkEntrySorterKeyed sorts 2,000 pairs with many distinct keys, as
// choosePairs does in a round whose X the program solved (the fall-back of
// entrySorter: more than maxKeys keys). The stable sort it replaced is
// BenchmarkEntrySorterKeyed/stable.
func BenchmarkEntrySorterKeyed(b *testing.B) {
	rng := rand.New(rand.NewPCG(29, 3))
	es := make([]allocEntry, 2000)
	for i := range es {
		es[i] = allocEntry{prio: float64(rng.IntN(400)) / 7, deficit: rng.Float64(), x: float64(rng.IntN(3)), job: &model.Job{Seq: i}}
	}
	work := make([]allocEntry, len(es))
	var z entrySorter
	b.Run("keyed", func(b *testing.B) {
		for b.Loop() {
			copy(work, es)
			z.sort(work)
		}
	})
	b.Run("stable", func(b *testing.B) {
		for b.Loop() {
			copy(work, es)
			slices.SortStableFunc(work, entryOrder)
		}
	})
}
