package model

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMovedSince: the state logs a job each time its allocation changes —
// a start, a resize, a stop, an end while running — and nothing for a
// failed start or resize, a submit, or a waiting job's end; a reader
// whose mark the log has since forgotten must reload all.
func TestMovedSince(t *testing.T) {
	c, err := NewCluster([]GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}}, []Node{{Name: "n0", GPUs: 2}, {Name: "n1", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(c, unit{})
	a := NewJob(JobSpec{ID: "a", GPUs: 2, MinGPUs: 1, MaxGPUs: 2}, 0, -1, 10)
	b := NewJob(JobSpec{ID: "b", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 1, -1, 10)
	d := NewJob(JobSpec{ID: "d", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 2, -1, 10)
	start := s.MovedMark()
	steps := []struct {
		name string
		do   func() error
		want []*Job
	}{
		{"submit a, b and d", func() error { s.Submit(a); s.Submit(b); s.Submit(d); return nil }, nil},
		{"start a on n0", func() error { return s.Start(a, []GPU{{0, 0}, {0, 1}}) }, []*Job{a}},
		{"failed start of b on n0", func() error {
			if s.Start(b, []GPU{{0, 0}}) == nil {
				return errBadStep
			}
			return nil
		}, nil},
		{"start b on n1", func() error { return s.Start(b, []GPU{{1, 0}}) }, []*Job{b}},
		{"failed resize of a onto b's GPU", func() error {
			if s.Resize(a, []GPU{{1, 0}}) == nil {
				return errBadStep
			}
			return nil
		}, nil},
		{"resize a to n0's first GPU", func() error { return s.Resize(a, []GPU{{0, 0}}) }, []*Job{a}},
		{"stop a, end b", func() error {
			if err := s.Stop(a); err != nil {
				return err
			}
			return s.End(b, Finished)
		}, []*Job{a, b}},
		{"reject waiting d", func() error { return s.End(d, Rejected) }, nil},
	}
	for _, st := range steps {
		mark := s.MovedMark()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, ok := s.MovedSince(mark)
		if !ok || !slices.Equal(got, st.want) {
			t.Fatalf("%s: moved %v (%v), want %v", st.name, got, ok, st.want)
		}
	}
	if got, ok := s.MovedSince(start); !ok || len(got) != 5 {
		t.Fatalf("moved since the start: %v (%v), want all 5 entries", got, ok)
	}
	for range 100 { // overruns the log (twice the running jobs and 64)
		if err := s.Start(a, []GPU{{1, 1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(a); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.MovedSince(start); ok {
		t.Fatal("a forgotten mark still reads as known")
	}
	if got, ok := s.MovedSince(s.MovedMark()); !ok || len(got) != 0 {
		t.Fatalf("moved since now: %v (%v), want nothing", got, ok)
	}
	if _, ok := s.MovedSince(s.MovedMark() + 1); ok {
		t.Fatal("a mark from the future reads as known")
	}
}

// TestMovedSinceCoversChanges drives a state through seeded random starts,
// resizes, stops, ends and rejections and, from marks taken at random,
// requires every job whose running allocation differs from what it was at
// the mark (running or not, and on which GPUs) to be in MovedSince, unless
// the state says it no longer knows; the log to stay within its bound;
// TypeOn to be the type of every running job's first GPU, as recorded
// (not computed again); and FreeGPUs, kept as GPUs are taken and given,
// to be the free GPUs of every node's mask.
func TestMovedSinceCoversChanges(t *testing.T) {
	c, err := NewCluster([]GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}, {Name: "k80", MemMiB: 1, TFLOPS: 1}},
		[]Node{{Name: "n0", GPUs: 4}, {Name: "n1", Type: 1, GPUs: 4}, {Name: "n2", GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	known, checked := 0, 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 29))
		s := NewState(c, unit{})
		var jobs []*Job
		var marks []movedSnap
		for step := range 600 {
			where := fmt.Sprintf("seed %d, step %d", seed, step)
			if rng.IntN(3) == 0 || len(jobs) == 0 {
				j := NewJob(JobSpec{ID: "j", GPUs: 1, MinGPUs: 1, MaxGPUs: 4}, len(jobs), -1, 1)
				jobs = append(jobs, j)
				s.Submit(j)
			}
			if err := randomChange(s, jobs[rng.IntN(len(jobs))], rng); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			checkRecorded(t, where, s)
			if rng.IntN(5) == 0 {
				sn := movedSnap{mark: s.MovedMark()}
				for _, j := range jobs {
					sn.alloc = append(sn.alloc, slices.Clone(j.Alloc))
				}
				marks = append(marks, sn)
			}
			for _, sn := range marks[max(len(marks)-6, 0):] {
				k, n := checkLogged(t, where, s, jobs, sn)
				known, checked = known+k, checked+n
			}
		}
	}
	if known < 1000 || checked < 1000 {
		t.Fatalf("only %d known marks and %d changed jobs checked", known, checked)
	}
}

// movedSnap is a mark of TestMovedSinceCoversChanges and the jobs'
// allocations then.
type movedSnap struct {
	mark  uint64
	alloc [][]GPU // per job: its allocation then, nil when not running
}

// randomChange makes one change to job j of s, drawn from rng: a waiting
// job is rejected, fails to start on a taken GPU after taking free ones,
// or starts; a running one stops, ends or is resized; an ended one stays.
// It returns the state's error, or one for a start on a taken GPU that
// succeeded.
func randomChange(s *State, j *Job, rng *rand.Rand) error {
	switch {
	case j.State == Waiting && rng.IntN(8) == 0:
		return s.End(j, Rejected)
	case j.State == Waiting && rng.IntN(4) == 0 && len(s.Running()) > 0:
		g := append(freeGPUs(s, rng.IntN(2), rng), s.Running()[0].Alloc[0])
		if s.Start(j, g) == nil {
			return errors.New("a start on a taken GPU succeeded")
		}
	case j.State == Waiting:
		if g := freeGPUs(s, 1+rng.IntN(3), rng); g != nil {
			return s.Start(j, g)
		}
	case j.State != Running:
	case rng.IntN(3) == 0:
		return s.Stop(j)
	case rng.IntN(4) == 0:
		return s.End(j, Finished)
	default:
		if g := freeGPUs(s, 1+rng.IntN(3), rng); g != nil {
			return s.Resize(j, g)
		}
	}
	return nil
}

// checkRecorded requires TypeOn to be the type of every running job's
// first GPU, as recorded (not computed again); FreeGPUs to be the free
// GPUs of every node's mask; and the log of moved jobs to stay within its
// bound.
func checkRecorded(t *testing.T, where string, s *State) {
	t.Helper()
	c := s.Cluster
	for _, j := range s.Running() {
		if got, want := s.TypeOn(j), c.TypeOf(j.Alloc[0]); got != want {
			t.Fatalf("%s: TypeOn %d, want %d", where, got, want)
		}
		if j.onOf != c || j.onAt != &j.Alloc[0] {
			t.Fatalf("%s: no type recorded for running job %d", where, j.Seq)
		}
	}
	free := 0
	for ni := range c.Nodes {
		free += bits.OnesCount64(s.FreeMask(ni))
	}
	if s.FreeGPUs() != free {
		t.Fatalf("%s: FreeGPUs %d, the masks hold %d", where, s.FreeGPUs(), free)
	}
	if len(s.moved.items) > 2*len(s.running)+64 {
		t.Fatalf("%s: log of %d entries, %d running", where, len(s.moved.items), len(s.running))
	}
}

// checkLogged requires every job whose allocation differs from sn's to be
// in MovedSince(sn.mark), unless the state no longer knows; it returns 1
// when it knew (0 otherwise) and the number of changed jobs checked.
func checkLogged(t *testing.T, where string, s *State, jobs []*Job, sn movedSnap) (known, checked int) {
	t.Helper()
	moved, ok := s.MovedSince(sn.mark)
	if !ok {
		return 0, 0
	}
	for k, j := range jobs[:len(sn.alloc)] {
		if !slices.Equal(sn.alloc[k], j.Alloc) {
			checked++
			if !slices.Contains(moved, j) {
				t.Fatalf("%s: job %d changed since mark %d but is not logged", where, k, sn.mark)
			}
		}
	}
	return 1, checked
}

// freeGPUs returns n free GPUs of s's cluster picked at random, or nil.
func freeGPUs(s *State, n int, rng *rand.Rand) []GPU {
	var free []GPU
	for ni, node := range s.Cluster.Nodes {
		for g := range node.GPUs {
			if s.FreeMask(ni)&(1<<uint(g)) != 0 {
				free = append(free, GPU{Node: int32(ni), Index: int32(g)})
			}
		}
	}
	if len(free) < n {
		return nil
	}
	rng.Shuffle(len(free), func(a, b int) { free[a], free[b] = free[b], free[a] })
	return free[:n]
}

// TestTypeOn: the type a state recorded for a job's allocation, and the
// type computed where no state gave the job its allocation (set by hand)
// or one of another cluster did.
func TestTypeOn(t *testing.T) {
	c, err := NewCluster([]GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}, {Name: "k80", MemMiB: 1, TFLOPS: 1}},
		[]Node{{Name: "n0", GPUs: 2}, {Name: "n1", Type: 1, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(c, unit{})
	j := NewJob(JobSpec{ID: "j", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 10)
	s.Submit(j)
	if err := s.Start(j, []GPU{{1, 0}}); err != nil {
		t.Fatal(err)
	}
	if got := s.TypeOn(j); got != 1 {
		t.Fatalf("started on k80: TypeOn %d, want 1", got)
	}
	if err := s.Resize(j, []GPU{{0, 1}}); err != nil {
		t.Fatal(err)
	}
	if got := s.TypeOn(j); got != 0 {
		t.Fatalf("resized onto v100: TypeOn %d, want 0", got)
	}
	// The same GPU on a cluster whose node 0 is a k80 node.
	c2, err := NewCluster(c.Types, []Node{{Name: "m0", Type: 1, GPUs: 2}, {Name: "m1", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := NewState(c2, unit{}).TypeOn(j); got != 1 {
		t.Fatalf("in a state of another cluster: TypeOn %d, want 1", got)
	}
	if got := NewState(c, unit{}).TypeOn(j); got != 0 {
		t.Fatalf("in another state of the same cluster: TypeOn %d, want 0", got)
	}
	j.Alloc = []GPU{{1, 1}} // by hand: not what s gave it
	if got := s.TypeOn(j); got != 1 {
		t.Fatalf("set by hand to k80: TypeOn %d, want 1", got)
	}
}
