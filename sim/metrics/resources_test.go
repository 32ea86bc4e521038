package metrics

import (
	"math"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestReferencePerGPU(t *testing.T) {
	tests := []struct {
		name string
		reqs []model.Vec
		gpus []int
		want []float64
	}{
		{"median of three", []model.Vec{{6000, 8}, {4000, 8}, {4000, 16}}, []int{1, 1, 1}, []float64{4000, 8}},
		{"per GPU of a replica", []model.Vec{{8000, 64}, {1000, 1}}, []int{8, 1}, []float64{1000, 1}},
		{"jobs asking nothing count 0", []model.Vec{nil, nil, {9000, 9}}, []int{1, 1, 1}, []float64{0, 0}},
		{"no jobs", nil, nil, []float64{0, 0}},
		{"fractions", []model.Vec{{1, 3}}, []int{2}, []float64{0.5, 1.5}},
	}
	for _, tt := range tests {
		if got := ReferencePerGPU(2, tt.reqs, tt.gpus); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStrandedOn(t *testing.T) {
	tests := []struct {
		name   string
		free   int
		avail  model.Vec
		perGPU []float64
		want   int
	}{
		{"enough of everything", 4, model.Vec{16, 64}, []float64{4, 16}, 0},
		{"cpu serves two", 4, model.Vec{8, 64}, []float64{4, 16}, 2},
		{"memory serves one", 4, model.Vec{16, 20}, []float64{4, 16}, 3},
		{"nothing left", 3, model.Vec{0, 0}, []float64{4, 16}, 3},
		{"over-full counts as none", 2, model.Vec{-5, 64}, []float64{4, 16}, 2},
		{"no free GPU", 0, model.Vec{0, 0}, []float64{4, 16}, 0},
		{"resource nobody asks for", 4, model.Vec{0, 64}, []float64{0, 16}, 0},
		{"fractional reference", 4, model.Vec{3, 0}, []float64{0.5, 0}, 0},
	}
	for _, tt := range tests {
		if got := StrandedOn(tt.free, tt.avail, tt.perGPU); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestResourceAverages(t *testing.T) {
	r := &Resources{Names: []string{"cpu", "memory"}, Capacity: []int64{10, 0}, Samples: []ResourceSample{
		{T: 10, Stranded: 2, Waiting: 1, Used: []int64{5, 0}},
		{T: 20, Stranded: 0, Waiting: 3, Used: []int64{10, 0}},
		{T: 40, Stranded: 4, Used: []int64{0, 0}},
	}}
	// Over [0, 50]: nothing before 10; 2 stranded and 5 CPUs for 10 s,
	// 0 and 10 for 20 s, 4 and 0 for 10 s: stranded (20 + 40) / 50 = 1.2,
	// CPU (50 + 200) / (10 · 50) = 0.5; memory has no capacity: left out.
	// Jobs wait 10–40: 30 s, with 20 GPU-s stranded meanwhile.
	a := r.Averages(0, 50)
	if math.Abs(a.Stranded-1.2) > 1e-12 || !reflect.DeepEqual(a.Util, map[string]float64{"cpu": 0.5}) ||
		a.Waiting != 30 || math.Abs(a.StrandedWaiting-20.0/30) > 1e-12 {
		t.Errorf("Averages(0, 50) = %+v", a)
	}
	// Over [15, 30]: 2 for 5 s, 0 for 10 s; CPU 25 + 100 of 150.
	a = r.Averages(15, 30)
	if math.Abs(a.Stranded-10.0/15) > 1e-12 || math.Abs(a.Util["cpu"]-125.0/150) > 1e-12 || a.Waiting != 15 {
		t.Errorf("Averages(15, 30) = %+v", a)
	}
	if a := r.Averages(45, 50); a.Waiting != 0 || a.StrandedWaiting != 0 || a.Stranded != 4 {
		t.Errorf("no waiting: %+v", a)
	}
	if a := r.Averages(5, 5); a != nil {
		t.Errorf("empty window: %+v", a)
	}
}

func TestSetResources(t *testing.T) {
	recs := []JobRecord{{ID: "a", Submit: 10, Start: 10, Finish: 50}, {ID: "b", Submit: 20, Start: -1, Finish: -1}}
	r := &Resources{Names: []string{"cpu"}, Capacity: []int64{4}, Samples: []ResourceSample{{T: 10, Stranded: 1, Used: []int64{2}}, {T: 50, Used: []int64{0}}}}
	s := Summarize(2, recs)
	SetResources(&s, recs, 2, r)
	if s.StrandedGPUs == nil || *s.StrandedGPUs != 1 || *s.StrandedGPUShare != 0.5 || s.ResourceUtil["cpu"] != 0.5 || s.StrandedGPUsWaiting != nil {
		t.Errorf("summary %+v", s)
	}
	none := Summarize(2, recs[1:])
	SetResources(&none, recs[1:], 2, r)
	if none.StrandedGPUs != nil || none.ResourceUtil != nil {
		t.Errorf("figures without a finished job: %+v", none)
	}
}
