package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// TestAllocSpeedsPerState: Alloc derives a job's speeds once per state
// (model.State). A shell that changes the profile or a job's spec puts the
// job into a new state (kube every round, the service when its matrix
// changes), and the next round's order follows the new speeds; in the same
// state they are kept.
func TestAllocSpeedsPerState(t *testing.T) {
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	ns := []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}, {Name: "c", Type: 2, GPUs: 8}}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	// Gittins gives a job its fastest type when all fit (bestFits); EstSRPT
	// without a finished job weighs it 0 and lets it fill the first type.
	for _, obj := range []Objective{Gittins} {
		a := &Alloc{Objective: obj, Round: 360 * model.Second}
		j := model.NewJob(model.JobSpec{ID: "j", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 1e6)
		fastOnP100 := speedTable{"j": {1, 2, 0.5}}
		fastOnK80 := speedTable{"j": {1, 2, 3}}
		steps := []struct {
			name  string
			prof  speedTable
			fresh bool // a new state (false: the last one again)
			spec  func(*model.JobSpec)
			want  engine.TypeSet
		}{
			{"first round", fastOnP100, true, nil, 1 << 1},
			{"same state, next round", fastOnP100, false, nil, 1 << 1},
			{"new state, new profile", fastOnK80, true, nil, 1 << 2},
			{"new state, spec constrained to v100", fastOnK80, true, func(s *model.JobSpec) { s.GPUType = "v100" }, 1 << 0},
			{"new state, constraint lifted", fastOnK80, true, func(s *model.JobSpec) { s.GPUType = "" }, 1 << 2},
		}
		var s *model.State
		for i, st := range steps {
			if st.spec != nil {
				st.spec(&j.Spec)
			}
			if st.fresh {
				s = model.NewState(c, st.prof)
				s.Submit(j)
			}
			ord := a.Order(s, model.Time(i)*a.Round, nil)
			if len(ord.Jobs) != 1 || ord.Jobs[0] != j || len(ord.Types) != 1 {
				t.Fatalf("%v, %s: order %v types %v, want job j alone", obj, st.name, ord.Jobs, ord.Types)
			}
			if ord.Types[0] != st.want {
				t.Errorf("%v, %s: j may run on %b, want %b", obj, st.name, ord.Types[0], st.want)
			}
		}
	}
}

// TestAllocTracksArrivalsInANewState: Alloc skips looking for new jobs
// while the state is the same and as many jobs are running and waiting as
// it tracks; a new state with as many jobs, one of them new, is looked at
// job by job. Job a is left out of the second state without ending (still
// waiting, as it was): it stays tracked, as before, and b joins it.
func TestAllocTracksArrivalsInANewState(t *testing.T) {
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}}
	c, err := model.NewCluster(ts, []model.Node{{Name: "a", Type: 0, GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	prof := speedTable{"a": {1}, "b": {1}}
	ja := model.NewJob(model.JobSpec{ID: "a", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 1e6)
	jb := model.NewJob(model.JobSpec{ID: "b", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 1, -1, 1e6)
	a := &Alloc{Objective: Gittins, Round: 360 * model.Second}
	s1 := model.NewState(c, prof)
	s1.Submit(ja)
	if ord := a.Order(s1, 0, nil); len(ord.Jobs) != 1 {
		t.Fatalf("first state: order %v, want a", ord.Jobs)
	}
	s2 := model.NewState(c, prof)
	s2.Submit(jb)
	ord := a.Order(s2, a.Round, nil)
	if len(ord.Jobs) != 2 || len(a.tracked) != 2 {
		t.Fatalf("second state: order %v, tracked %v; want a and b", ord.Jobs, a.tracked)
	}
}

// TestGittinsKeepsBestFitsWhileJobsStay: in the same state, with the same
// jobs, gittins keeps the X that bestFits set; a job that arrives or ends
// makes it compute X again. Three 4-GPU jobs fastest on an 8-GPU v100 do
// not all fit there; when c ends, a and b do (bestFits); d's arrival
// needs the program, and X then has a row for d.
func TestGittinsKeepsBestFitsWhileJobsStay(t *testing.T) {
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}}
	c, err := model.NewCluster(ts, []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	prof := speedTable{"a": {2, 1}, "b": {2, 1}, "c": {2, 1}, "d": {2, 1}}
	s := model.NewState(c, prof)
	job := func(id string, seq int) *model.Job {
		return model.NewJob(model.JobSpec{ID: id, GPUs: 4, MinGPUs: 4, MaxGPUs: 4}, seq, -1, 1e6)
	}
	ja, jb, jc, jd := job("a", 0), job("b", 1), job("c", 2), job("d", 3)
	for _, j := range []*model.Job{ja, jb, jc} {
		s.Submit(j)
	}
	a := &Alloc{Objective: Gittins, Round: 360 * model.Second}
	round := func(i int) { a.Order(s, model.Time(i)*a.Round, nil) }
	round(0)
	if a.fitted != nil {
		t.Fatalf("three jobs on v100's 8 GPUs: bestFits should decline")
	}
	if err := s.End(jc, model.Finished); err != nil {
		t.Fatal(err)
	}
	round(1)
	if a.fitted != s || a.jobs[ja].x[0] != 1 || a.jobs[jb].x[0] != 1 {
		t.Fatalf("a and b fit on v100: X %v %v, fitted %v", a.jobs[ja].x, a.jobs[jb].x, a.fitted != nil)
	}
	a.jobs[ja].x[1] = 0.25 // a mark that bestFits, run again, would clear
	round(2)
	if a.fitted != s || a.jobs[ja].x[1] != 0.25 || a.jobs[jb].x[0] != 1 {
		t.Fatalf("the same jobs: X %v %v kept, fitted %v", a.jobs[ja].x, a.jobs[jb].x, a.fitted != nil)
	}
	a.jobs[ja].x[1] = 0
	s.Submit(jd)
	round(3)
	if a.fitted != nil || a.jobs[jd].x == nil {
		t.Fatalf("d arrived: X must be computed again with it (fitted %v, d's row %v)", a.fitted != nil, a.jobs[jd].x)
	}
}

// TestAllocSpeedsBackInAnOldState: compute skips the jobs' speeds while
// every tracked job's are the state's (Alloc.speedsIn), so a job that
// arrives in another state must undo that. Job a's speeds are set in s0
// (its fastest type P100); job b arrives in s1, where it is fastest on K80,
// in a round without a computation (Realloc not yet passed); back in s0,
// whose profile has b fastest on P100, the next computation must set b's
// speeds from s0: b shares P100 with a (8 GPUs, both fit), and may run
// there.
func TestAllocSpeedsBackInAnOldState(t *testing.T) {
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	ns := []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}, {Name: "c", Type: 2, GPUs: 8}}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	ja := model.NewJob(model.JobSpec{ID: "a", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 1e6)
	jb := model.NewJob(model.JobSpec{ID: "b", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 1, -1, 1e6)
	s0 := model.NewState(c, speedTable{"a": {1, 2, 0.5}, "b": {1, 2, 0.5}})
	s1 := model.NewState(c, speedTable{"a": {1, 2, 0.5}, "b": {1, 2, 3}})
	a := &Alloc{Objective: Gittins, Round: 360 * model.Second, Realloc: 3 * 360 * model.Second}
	s0.Submit(ja)
	a.Order(s0, 0, nil) // computes X: a's speeds are s0's
	s1.Submit(ja)
	s1.Submit(jb)
	a.Order(s1, a.Round, nil) // b tracked with s1's speeds; no computation
	s0.Submit(jb)
	ord := a.Order(s0, 3*a.Round, nil) // a computation in s0
	for i, j := range ord.Jobs {
		if j == jb && ord.Types[i] != 1<<1 {
			t.Fatalf("b may run on %b, want P100 (%b): its speeds are s0's", ord.Types[i], 1<<1)
		}
	}
	if got := a.jobs[jb].bestT; got != 1 {
		t.Fatalf("b's best type %d, want 1 (P100 in s0)", got)
	}
}

// TestTrackedBySeq: the tracked jobs, and their states alike, are kept by
// Seq whatever order the jobs arrive in. 20 seeded worlds of 40 rounds:
// up to three jobs arrive a round, each with a Seq drawn below or above
// those tracked (a shell may submit late a job numbered early), and some
// end; after every round the tracked jobs must be by Seq.
func TestTrackedBySeq(t *testing.T) {
	c, err := model.NewCluster([]model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}}, []model.Node{{Name: "a", Type: 0, GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	unordered := 0
	for world := range 20 {
		r := rand.New(rand.NewPCG(29, uint64(900+world)))
		prof := speedTable{}
		s := model.NewState(c, prof)
		a := &Alloc{Objective: Gittins, Round: 360 * model.Second}
		var live []*model.Job
		used := map[int]bool{}
		for round := range 40 {
			last := -1
			for _, j := range live {
				last = max(last, j.Seq)
			}
			for range r.IntN(4) {
				seq := r.IntN(1000)
				if used[seq] {
					continue
				}
				used[seq] = true
				if seq < last {
					unordered++
				}
				id := fmt.Sprint("j", seq)
				prof[id] = []float64{1}
				j := model.NewJob(model.JobSpec{ID: id, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, seq, -1, 1e6)
				s.Submit(j)
				live = append(live, j)
			}
			if len(live) > 0 && r.IntN(3) == 0 {
				i := r.IntN(len(live))
				if err := s.End(live[i], model.Finished); err != nil {
					t.Fatal(err)
				}
				live = slices.Delete(live, i, i+1)
			}
			a.Order(s, model.Time(round)*a.Round, nil)
			for i, j := range a.tracked {
				if a.states[i].job != j || i > 0 && a.tracked[i-1].Seq >= j.Seq {
					t.Fatalf("world %d round %d: tracked %v not by Seq, or states not alike", world, round, seqs(a.tracked))
				}
			}
		}
	}
	if unordered < 100 {
		t.Fatalf("%d arrivals numbered below a tracked job; want many", unordered)
	}
}

func seqs(js []*model.Job) []int {
	out := make([]int, len(js))
	for i, j := range js {
		out[i] = j.Seq
	}
	return out
}
