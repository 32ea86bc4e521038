package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestDemandIncremental drives gittins through 20 seeded worlds (three
// types of 8 GPUs) of 150 rounds each: jobs of 1, 2 or 4 GPUs (or 16,
// which no type has, run at their minimum of 2), some that can run
// nowhere, arrive, end, and move to a new state, half the time with a new
// profile or a new type constraint. After every round the GPUs per best
// type that Alloc keeps (demand) must be those summed afresh over the
// tracked jobs, and so must the jobs per best type kept for chooseFitted
// (checkShared); and bestFits's verdict, whether X was set without the
// program, the summed test's. Both verdicts must occur.
func TestDemandIncremental(t *testing.T) {
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	ns := []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}, {Name: "c", Type: 2, GPUs: 8}}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	fits, declines := 0, 0
	for world := range 20 {
		r := rand.New(rand.NewPCG(29, uint64(100+world)))
		randSpeeds := func() []float64 {
			sp := make([]float64, 3)
			for k := range sp {
				if r.IntN(3) > 0 {
					sp[k] = 0.05 + r.Float64()
				}
			}
			return sp
		}
		prof := speedTable{}
		s := model.NewState(c, prof)
		a := &Alloc{Objective: Gittins, Round: 360 * model.Second, GangShare: DefaultGangShare}
		var live []*model.Job
		seq := 0
		for round := range 150 {
			for range r.IntN(3) { // arrivals
				id := fmt.Sprint("j", seq)
				prof[id] = randSpeeds()
				g := []int{1, 2, 4, 16}[r.IntN(4)]
				j := model.NewJob(model.JobSpec{ID: id, GPUs: g, MinGPUs: min(g, 2), MaxGPUs: g}, seq, -1, 1e6)
				seq++
				s.Submit(j)
				live = append(live, j)
			}
			if len(live) > 0 && r.IntN(2) == 0 { // an end
				i := r.IntN(len(live))
				if err := s.End(live[i], model.Finished); err != nil {
					t.Fatal(err)
				}
				live = slices.Delete(live, i, i+1)
			}
			if r.IntN(5) == 0 { // a new state, with the waiting jobs
				s, prof = newDemandState(r, c, prof, live, randSpeeds)
			}
			a.Order(s, model.Time(round)*a.Round, nil)
			want := make([]int, 3)
			for _, st := range a.states {
				if st.best > 0 {
					want[st.bestT] += st.gpus
				}
			}
			if !slices.Equal(a.demand, want) {
				t.Fatalf("world %d round %d: demand %v, summed afresh %v", world, round, a.demand, want)
			}
			checkShared(t, a, fmt.Sprintf("world %d round %d", world, round))
			if len(a.states) == 0 {
				continue
			}
			summed := a.fitsSummed(s)
			if (a.fitted != nil) != summed {
				t.Fatalf("world %d round %d: X without the program %v, the summed test says %v", world, round, a.fitted != nil, summed)
			}
			if summed {
				fits++
			} else {
				declines++
			}
		}
	}
	if fits < 200 || declines < 200 {
		t.Fatalf("rounds: %d fitting, %d not; want many of both", fits, declines)
	}
}

// newDemandState returns a new state with the live jobs, half the time
// with a new profile (a third of the jobs with new speeds) and some jobs
// with a new type constraint (a shell changes them only with a new state).
func newDemandState(r *rand.Rand, c *model.Cluster, prof speedTable, live []*model.Job, randSpeeds func() []float64) (*model.State, speedTable) {
	if r.IntN(2) == 0 {
		next := speedTable{}
		for id, sp := range prof {
			next[id] = sp
		}
		for _, j := range live {
			if r.IntN(3) == 0 {
				next[j.Spec.ID] = randSpeeds()
			}
			if r.IntN(6) == 0 {
				j.Spec.GPUType = []string{"", "v100", "k80"}[r.IntN(3)]
			}
		}
		prof = next
	}
	s := model.NewState(c, prof)
	for _, j := range live {
		s.Submit(j)
	}
	return s, prof
}
