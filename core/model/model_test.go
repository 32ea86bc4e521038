package model

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSecondsString(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		want string
	}{{0, "0"}, {12000, "12"}, {12500, "12.5"}, {1, "0.001"}, {1010, "1.01"}, {-1500, "-1.5"}} {
		if got := tc.t.SecondsString(); got != tc.want {
			t.Errorf("%d ms: got %q, want %q", tc.t, got, tc.want)
		}
	}
	if FromSeconds(1.0005) != 1001 || FromSeconds(-2) != -2000 {
		t.Error("FromSeconds rounds to the nearest millisecond")
	}
}

type unit struct{}

func (unit) Speed(*Job, int, int) float64 { return 1 }

func TestStateLifecycle(t *testing.T) {
	c, err := NewCluster([]GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}}, []Node{{Name: "n0", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(c, unit{})
	a := NewJob(JobSpec{ID: "a", Submit: 5, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 1, -1, 10)
	b := NewJob(JobSpec{ID: "b", Submit: 5, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 10)
	s.Submit(a)
	s.Submit(b)
	if w := s.Waiting(); w[0] != b || w[1] != a {
		t.Fatalf("waiting queue not in (submit, seq) order")
	}
	g0, g1 := GPU{0, 0}, GPU{0, 1}
	if err := s.Start(a, []GPU{g0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(b, []GPU{g0}); err == nil || !strings.Contains(err.Error(), "n0/0 is not free") {
		t.Fatalf("double booking: %v", err)
	}
	if s.FreeGPUs() != 1 {
		t.Fatalf("a failed start must not leak GPUs: free %d", s.FreeGPUs())
	}
	if err := s.Start(b, []GPU{g1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(a); err != nil || a.State != Waiting || s.FreeGPUs() != 1 {
		t.Fatalf("stop: %v", err)
	}
	if err := s.End(b, Finished); err != nil || s.FreeGPUs() != 2 || len(s.Running()) != 0 {
		t.Fatalf("end: %v", err)
	}
	if err := s.End(b, Finished); err == nil {
		t.Fatal("ending a finished job twice")
	}
}

func TestJobProgress(t *testing.T) {
	j := NewJob(JobSpec{ID: "j"}, 0, -1, 100)
	j.State, j.Done, j.Mark, j.Resume, j.Rate = Running, 10, 0, 30*Second, 2
	for _, tc := range []struct {
		now  Time
		want float64
	}{{0, 10}, {30 * Second, 10}, {40 * Second, 30}, {1000 * Second, 100}} {
		if got := j.DoneAt(tc.now); got != tc.want {
			t.Errorf("DoneAt(%v) = %v, want %v", tc.now, got, tc.want)
		}
	}
}

func TestNewClusterErrors(t *testing.T) {
	v := GPUType{Name: "v100", MemMiB: 1, TFLOPS: 1}
	for _, tc := range []struct {
		types []GPUType
		nodes []Node
		want  string
	}{
		{nil, []Node{{Name: "a", GPUs: 1}}, "no GPU types"},
		{[]GPUType{v}, nil, "no nodes"},
		{[]GPUType{v, v}, []Node{{Name: "a", GPUs: 1}}, "declared twice"},
		{[]GPUType{v}, []Node{{Name: "a", GPUs: 65}}, "65 GPUs"},
		{[]GPUType{v}, []Node{{Name: "a", GPUs: 1}, {Name: "a", GPUs: 1}}, "used twice"},
		{[]GPUType{v}, []Node{{Name: "a", Type: 1, GPUs: 1}}, "unknown GPU type"},
	} {
		if _, err := NewCluster(tc.types, tc.nodes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestLostWork: the time since the later of the job's checkpoint and its
// last start, for running jobs only.
func TestLostWork(t *testing.T) {
	tests := []struct {
		name                  string
		state                 JobState
		lastStart, checkpoint Time
		now, want             Time
	}{
		{"no checkpoint: since the last start", Running, 100, -1, 700, 600},
		{"checkpoint after the start", Running, 100, 400, 700, 300},
		{"checkpoint before the start (restored at the start)", Running, 500, 400, 700, 200},
		{"checkpoint now", Running, 100, 700, 700, 0},
		{"checkpoint ahead of now (clock skew): nothing lost", Running, 100, 900, 700, 0},
		{"waiting job loses nothing", Waiting, 100, -1, 700, 0},
	}
	for _, tc := range tests {
		j := NewJob(JobSpec{ID: "j", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 0, -1, 1)
		if j.Checkpoint != -1 {
			t.Fatalf("NewJob: checkpoint %d, want -1", j.Checkpoint)
		}
		j.State, j.LastStart, j.Checkpoint = tc.state, tc.lastStart, tc.checkpoint
		if got := j.LostWork(tc.now); got != tc.want {
			t.Errorf("%s: LostWork = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestStateLoad puts three jobs back into a fresh two-GPU state: a and c
// hold the same GPU, so c (loaded after a) stays waiting with an error
// naming it, and b, holding nothing, waits too.
func TestStateLoad(t *testing.T) {
	c, err := NewCluster([]GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}}, []Node{{Name: "n0", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(c, unit{})
	job := func(id string, seq int) *Job {
		return NewJob(JobSpec{ID: id, Submit: 5, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, seq, -1, 10)
	}
	a, b, cj := job("a", 0), job("b", 1), job("c", 2)
	g0 := GPU{0, 0}
	errs := s.Load([]Holding{{Job: a, GPUs: []GPU{g0}}, {Job: b}, {Job: cj, GPUs: []GPU{g0}}})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "restore c") {
		t.Fatalf("errors %v, want one naming c", errs)
	}
	if a.State != Running || b.State != Waiting || cj.State != Waiting {
		t.Fatalf("states a %s, b %s, c %s; want running, waiting, waiting", a.State, b.State, cj.State)
	}
	if w := s.Waiting(); len(w) != 2 || w[0] != b || w[1] != cj {
		t.Fatalf("waiting %v, want b then c", w)
	}
	if s.FreeGPUs() != 1 || len(s.Running()) != 1 {
		t.Fatalf("free %d, running %d; want 1 and 1", s.FreeGPUs(), len(s.Running()))
	}
}

// TestChangedSince: the state logs every node whose free GPUs a start, a
// failed start, a resize or a stop changed, one entry per node and call,
// and a reader whose mark the log has since forgotten must reload all.
func TestChangedSince(t *testing.T) {
	c, err := NewCluster([]GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}}, []Node{{Name: "n0", GPUs: 2}, {Name: "n1", GPUs: 2}, {Name: "n2", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(c, unit{})
	a := NewJob(JobSpec{ID: "a", GPUs: 3, MinGPUs: 1, MaxGPUs: 3}, 0, -1, 10)
	b := NewJob(JobSpec{ID: "b", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 1, -1, 10)
	s.Submit(a)
	s.Submit(b)
	start := s.Mark()
	steps := []struct {
		name string
		do   func() error
		want []int32
	}{
		{"start a on n0, n0, n2", func() error { return s.Start(a, []GPU{{0, 0}, {0, 1}, {2, 0}}) }, []int32{0, 2}},
		{"failed start of b on n1, n0", func() error {
			if s.Start(b, []GPU{{1, 0}, {0, 0}}) == nil {
				return errBadStep
			}
			return nil
		}, []int32{1, 1}}, // n1 taken, then given back (n0 was not free)
		{"resize a to n2", func() error { return s.Resize(a, []GPU{{2, 0}}) }, []int32{0, 2, 2}},
		{"stop a", func() error { return s.Stop(a) }, []int32{2}},
	}
	for _, st := range steps {
		mark := s.Mark()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, ok := s.ChangedSince(mark)
		if !ok || !slices.Equal(got, st.want) {
			t.Fatalf("%s: changed %v (%v), want %v", st.name, got, ok, st.want)
		}
	}
	if got, ok := s.ChangedSince(start); !ok || len(got) != 8 {
		t.Fatalf("changed since the start: %v (%v), want all 8 entries", got, ok)
	}
	for range 100 { // overruns the log (8 entries per node and 64)
		if err := s.Start(b, []GPU{{1, 1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.ChangedSince(start); ok {
		t.Fatal("a forgotten mark still reads as known")
	}
	if got, ok := s.ChangedSince(s.Mark()); !ok || len(got) != 0 {
		t.Fatalf("changed since now: %v (%v), want nothing", got, ok)
	}
	if _, ok := s.ChangedSince(s.Mark() + 1); ok {
		t.Fatal("a mark from the future reads as known")
	}
}

var errBadStep = errors.New("step did not fail as expected")
