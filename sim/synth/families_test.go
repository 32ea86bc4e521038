package synth

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim/trace"
)

func TestGavelScale(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {8, 8}, {64, 8}} {
		if got := gavelScale(tc.in); got != tc.want {
			t.Errorf("gavelScale(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestWindow: the window is consecutive in submit order, arrivals count
// from its first job, GPU counts become scale factors and run times are
// clamped; jobs without a duration are left out.
func TestWindow(t *testing.T) {
	spec := func(id string, submitS, gpus int, runS float64) model.JobSpec {
		return model.JobSpec{ID: id, Submit: model.Time(submitS) * model.Second, GPUs: gpus, Duration: model.FromSeconds(runS)}
	}
	specs := []model.JobSpec{spec("c", 30, 3, 10), spec("a", 10, 1, 500), spec("x", 15, 1, 0), spec("b", 20, 16, 2e6)}
	got, err := Window(specs, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Shape{{0, 1, 500}, {10, 8, MaxRunS}, {20, 4, MinRunS}}
	if !slices.Equal(got, want) {
		t.Errorf("Window = %v, want %v", got, want)
	}
	if _, err := Window(specs, 4, 1); err == nil || !strings.Contains(err.Error(), "a window of 4 jobs from 3") {
		t.Errorf("a window larger than the jobs: %v", err)
	}
}

// TestResample: every drawn shape is one of the workloads' jobs, with its
// scale factor, clamped run time and the gap from the job before it in its
// own workload (in submit order; the first job's from 0); the first
// arrival is 0, jobs without a duration are never drawn, and the same seed
// draws the same shapes.
func TestResample(t *testing.T) {
	spec := func(submitS, gpus int, runS float64) model.JobSpec {
		return model.JobSpec{Submit: model.Time(submitS) * model.Second, GPUs: gpus, Duration: model.FromSeconds(runS)}
	}
	w1 := []model.JobSpec{spec(30, 3, 100), spec(10, 1, 500), spec(15, 2, 0)}
	w2 := []model.JobSpec{spec(7, 16, 2e6)}
	// (gap, shape) of each job that can be drawn: w1 in submit order 10, 15, 30
	// (the 15 s job has no duration but counts for the next gap), w2's one job.
	allowed := map[Shape]float64{{0, 1, 500}: 10, {0, 4, 100}: 15, {0, 8, MaxRunS}: 7}
	got, err := Resample([][]model.JobSpec{w1, w2}, 300, 9)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Shape]bool{}
	for i, s := range got {
		key := Shape{0, s.GPUs, s.RunS}
		gap, ok := allowed[key]
		if !ok {
			t.Fatalf("shape %d = %+v: not a job of the workloads", i, s)
		}
		seen[key] = true
		want := 0.0
		if i > 0 {
			want = got[i-1].ArrivalS + gap
		}
		if s.ArrivalS != want {
			t.Fatalf("shape %d = %+v: arrival want %v", i, s, want)
		}
	}
	if len(seen) != len(allowed) {
		t.Errorf("300 draws saw %d of the %d jobs", len(seen), len(allowed))
	}
	again, _ := Resample([][]model.JobSpec{w1, w2}, 300, 9)
	if !slices.Equal(got, again) {
		t.Error("the same seed drew different shapes")
	}
	if _, err := Resample([][]model.JobSpec{{spec(1, 1, 0)}}, 5, 1); err == nil {
		t.Error("workloads without a duration: no error")
	}
}

// TestOfferedLoad: jobs at 0 s (2 GPUs, 100 s) and 100 s (1 GPU, 200 s) ask
// 400 GPU-s over 100 s: load 1 on 4 GPUs; at load 0.5 the arrivals
// stretch to 0 and 200 s.
func TestOfferedLoad(t *testing.T) {
	s := []Shape{{0, 2, 100}, {100, 1, 200}}
	if got := OfferedLoad(s, 4); got != 1 {
		t.Fatalf("OfferedLoad = %v, want 1", got)
	}
	ScaleLoad(s, 4, 0.5)
	if s[0].ArrivalS != 0 || s[1].ArrivalS != 200 || OfferedLoad(s, 4) != 0.5 {
		t.Errorf("after ScaleLoad(0.5): %v, load %v", s, OfferedLoad(s, 4))
	}
	once := []Shape{{5, 1, 10}, {5, 1, 10}}
	ScaleLoad(once, 4, 2)
	if once[0].ArrivalS != 5 || OfferedLoad(once, 4) != 0 {
		t.Errorf("shapes that arrive at once changed: %v", once)
	}
}

func TestPoisson(t *testing.T) {
	a, err := Poisson(200, 2, [4]float64{0, 0, 1, 0}, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Poisson(200, 2, [4]float64{0, 0, 1, 0}, 7)
	if !slices.Equal(a, b) {
		t.Error("the same seed drew different shapes")
	}
	for i, s := range a {
		if s.GPUs != 4 || s.RunS < 60*math.Pow(10, 1.5) || s.RunS > 60*1e4 || (i > 0 && s.ArrivalS < a[i-1].ArrivalS) {
			t.Fatalf("shape %d = %+v: want 4 GPUs, Gavel's run times, arrivals in order", i, s)
		}
	}
	if a[0].ArrivalS != 0 {
		t.Errorf("first arrival %v, want 0", a[0].ArrivalS)
	}
	for _, w := range [][4]float64{{0, 0, 0, 0}, {1, -1, 0, 0}} {
		if _, err := Poisson(10, 1, w, 1); err == nil {
			t.Errorf("weights %v accepted", w)
		}
	}
}

// TestWriteGavelReadBack: traces written by WriteGavel read back through
// gpusched's Gavel reader with every job's type, GPUs, steps and arrival.
func TestWriteGavelReadBack(t *testing.T) {
	m, err := profile.ParseMatrix("embedded", assets.Throughputs())
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := Poisson(50, 4, [4]float64{0.4, 0.2, 0.25, 0.15}, 3)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := FromShapes(m, shapes, 3)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteGavel(&b, jobs); err != nil {
		t.Fatal(err)
	}
	specs, err := trace.Read(&b, "family.trace", "gavel")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != len(jobs) {
		t.Fatalf("read %d jobs, wrote %d", len(specs), len(jobs))
	}
	for i, s := range specs {
		j := jobs[i]
		if s.Model != j.Model || s.GPUs != j.GPUs || s.Steps != j.Steps || s.Submit.Seconds() != math.Trunc(j.SubmitS) {
			t.Errorf("job %d read back as %s %d GPUs %d steps at %v, written %s %d %d %v", i, s.Model, s.GPUs, s.Steps, s.Submit.Seconds(), j.Model, j.GPUs, j.Steps, j.SubmitS)
		}
	}
	if err := WriteGavel(&b, []Job{{ID: "z", Model: "Llama"}}); err == nil || !strings.Contains(err.Error(), `"Llama" is not one of Gavel's job types`) {
		t.Errorf("an unknown type: %v", err)
	}
}
