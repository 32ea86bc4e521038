package placer

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestSortCandidatesMatchesComparisonSort checks sortCandidates against
// the plain comparison sort by byGain on random buckets: few distinct gains
// in Seq order (the grouping path), more gains than maxGroups, Seq out of
// order, NaN and signed zeros (the fallback, or groups that compare equal).
func TestSortCandidatesMatchesComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 7))
	h := &Hetero{}
	for trial := range 2000 {
		n := r.IntN(80)
		distinct := 1 + r.IntN(2*maxGroups)
		values := make([]float64, distinct)
		for i := range values {
			values[i] = math.Round(r.NormFloat64()*8) / 4
		}
		switch trial % 5 {
		case 1:
			values[0] = math.Copysign(0, -1)
			values = append(values, 0)
		case 2:
			values[0] = math.NaN()
		}
		jobs := make([]*model.Job, n)
		for i := range jobs {
			jobs[i] = &model.Job{Seq: 3*i + r.IntN(3)}
		}
		if trial%7 == 3 {
			r.Shuffle(n, func(i, k int) { jobs[i], jobs[k] = jobs[k], jobs[i] })
		}
		l := make([]candidate, n)
		for i := range l {
			l[i] = candidate{gain: values[r.IntN(len(values))], job: jobs[i]}
		}
		want := slices.Clone(l)
		slices.SortFunc(want, byGain)
		h.sortCandidates(l)
		for i := range l {
			if l[i].job != want[i].job || math.Float64bits(l[i].gain) != math.Float64bits(want[i].gain) {
				t.Fatalf("trial %d (%d candidates, %d gains): position %d holds job %d gain %v, want job %d gain %v",
					trial, n, len(values), i, l[i].job.Seq, l[i].gain, want[i].job.Seq, want[i].gain)
			}
		}
	}
}
