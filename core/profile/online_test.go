package profile

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func mustOnline(t *testing.T, w float64, samples ...Sample) *Online {
	t.Helper()
	o, err := NewOnline(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if err := o.Observe(s); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// TestOnlineAverage: the first sample sets the estimate, each later one
// moves it by the weight towards the sample's steps/s.
func TestOnlineAverage(t *testing.T) {
	tests := []struct {
		name    string
		weight  float64
		rates   []float64 // steps/s, each as steps over 10 s
		want    float64
		samples int64
	}{
		{"one sample", 0.5, []float64{4}, 4, 1},
		{"halfway", 0.5, []float64{4, 8}, 6, 2},
		{"three samples", 0.5, []float64{4, 8, 2}, 4, 3},
		{"weight 0.25", 0.25, []float64{4, 8}, 5, 2},
		{"weight 1 keeps the latest", 1, []float64{4, 8, 3}, 3, 3},
	}
	for _, tc := range tests {
		o := mustOnline(t, tc.weight)
		for _, r := range tc.rates {
			if err := o.Observe(Sample{Model: "M", GPUType: "V100", GPUs: 2, Steps: r * 10, Seconds: 10}); err != nil {
				t.Fatal(err)
			}
		}
		got, n := o.Rate("M", "v100", 2)
		if got != tc.want || n != tc.samples {
			t.Errorf("%s: rate %v from %d samples, want %v from %d", tc.name, got, n, tc.want, tc.samples)
		}
		if other, n := o.Rate("M", "v100", 1); other != 0 || n != 0 {
			t.Errorf("%s: another GPU count has an estimate %v (%d)", tc.name, other, n)
		}
	}
}

func TestOnlineWeight(t *testing.T) {
	for _, w := range []float64{0, -0.1, 1.5, math.NaN(), math.Inf(1)} {
		if _, err := NewOnline(w); err == nil {
			t.Errorf("weight %v accepted", w)
		}
	}
	if o := mustOnline(t, DefaultOnlineWeight); o.Weight() != DefaultOnlineWeight {
		t.Errorf("weight %v", o.Weight())
	}
}

// TestOnlineRejects: samples that say nothing about a speed are ignored
// with an error that wraps ErrSample and says why.
func TestOnlineRejects(t *testing.T) {
	good := Sample{Model: "M", GPUType: "v100", GPUs: 1, Steps: 10, Seconds: 5}
	with := func(f func(*Sample)) Sample { s := good; f(&s); return s }
	tests := []struct {
		name string
		s    Sample
		want string
	}{
		{"no job type", with(func(s *Sample) { s.Model = "" }), "no job type"},
		{"no GPU type", with(func(s *Sample) { s.GPUType = "" }), "no GPU type"},
		{"no GPUs", with(func(s *Sample) { s.GPUs = 0 }), "0 GPUs"},
		{"zero duration", with(func(s *Sample) { s.Seconds = 0 }), "duration 0 s"},
		{"negative duration", with(func(s *Sample) { s.Seconds = -1 }), "duration -1 s"},
		{"NaN duration", with(func(s *Sample) { s.Seconds = math.NaN() }), "duration NaN s"},
		{"infinite duration", with(func(s *Sample) { s.Seconds = math.Inf(1) }), "duration +Inf s"},
		{"no progress", with(func(s *Sample) { s.Steps = 0 }), "0 steps"},
		{"counter went back", with(func(s *Sample) { s.Steps = -3 }), "-3 steps"},
		{"NaN steps", with(func(s *Sample) { s.Steps = math.NaN() }), "NaN steps"},
		{"overflow", with(func(s *Sample) { s.Steps, s.Seconds = 1e300, 1e-300 }), "overflows"},
	}
	o := mustOnline(t, 0.5, good)
	for _, tc := range tests {
		err := o.Observe(tc.s)
		if !errors.Is(err, ErrSample) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrSample saying %q", tc.name, err, tc.want)
		}
	}
	if r, n := o.Rate("M", "v100", 1); r != 2 || n != 1 || o.Len() != 1 || o.Version() != 1 {
		t.Errorf("rejected samples changed the estimate: %v from %d, %d entries, version %d", r, n, o.Len(), o.Version())
	}
}

// TestOnlineMerge: an estimate replaces the pre-run point of its GPU count
// or is added among the points; new job and GPU types are added; the rest
// and the base matrix stay as they were.
func TestOnlineMerge(t *testing.T) {
	base := mustMatrix(t, `{"v100": {"('M', 1)": {"null": 4}, "('M', 4)": {"null": 12}, "('K', 1)": {"null": 2}},
		"k80": {"('M', 1)": {"null": 1}}}`).Merge(Profile{JobType: "M", PeakMemMiB: 9000})
	o := mustOnline(t, 0.5,
		Sample{Model: "M", GPUType: "v100", GPUs: 4, Steps: 160, Seconds: 10}, // replaces 12
		Sample{Model: "M", GPUType: "V100", GPUs: 2, Steps: 70, Seconds: 10},  // added between 1 and 4
		Sample{Model: "M", GPUType: "a100", GPUs: 1, Steps: 90, Seconds: 10},  // new GPU type
		Sample{Model: "bert", GPUType: "t4", GPUs: 8, Steps: 5, Seconds: 10},  // new job type and GPU type
		Sample{Model: "bert", GPUType: "t4", GPUs: 2, Steps: 2, Seconds: 10},
	)
	m := o.Merge(base)
	tests := []struct {
		model, gpuType string
		want           []Point
	}{
		{"M", "v100", []Point{{1, 4}, {2, 7}, {4, 16}}},
		{"M", "k80", []Point{{1, 1}}},
		{"M", "a100", []Point{{1, 9}}},
		{"K", "v100", []Point{{1, 2}}},
		{"bert", "t4", []Point{{2, 0.2}, {8, 0.5}}},
	}
	for _, tc := range tests {
		if got := m.Points(tc.model, tc.gpuType); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s on %s: %v, want %v", tc.model, tc.gpuType, got, tc.want)
		}
	}
	if want := []string{"K", "M", "bert"}; !reflect.DeepEqual(m.Models, want) {
		t.Errorf("models %v, want %v", m.Models, want)
	}
	if want := []string{"a100", "k80", "t4", "v100"}; !reflect.DeepEqual(m.Types, want) {
		t.Errorf("types %v, want %v", m.Types, want)
	}
	if m.PeakMemMiB("M") != 9000 {
		t.Errorf("peak memory lost: %d", m.PeakMemMiB("M"))
	}
	if got := base.Points("M", "v100"); !reflect.DeepEqual(got, []Point{{1, 4}, {4, 12}}) || base.HasModel("bert") || base.HasType("a100") {
		t.Errorf("Merge changed the base matrix: %v %v %v", got, base.Models, base.Types)
	}
	alone := o.Merge(nil)
	if !reflect.DeepEqual(alone.Models, []string{"M", "bert"}) || !reflect.DeepEqual(alone.Points("M", "v100"), []Point{{2, 7}, {4, 16}}) {
		t.Errorf("estimates alone: %v %v", alone.Models, alone.Points("M", "v100"))
	}
}

// TestOnlineTable: the merged matrix drives profile.Table (what hetero
// reads): a measured speed changes a job's speed on that GPU type.
func TestOnlineTable(t *testing.T) {
	c, v100 := testCluster(t)
	base := mustMatrix(t, `{"v100": {"('M', 1)": {"null": 4}}, "a100": {"('M', 1)": {"null": 8}}}`)
	o := mustOnline(t, 1, Sample{Model: "M", GPUType: "a100", GPUs: 1, Steps: 20, Seconds: 10})
	tab, err := NewTable(o.Merge(base), c, v100)
	if err != nil {
		t.Fatal(err)
	}
	j := tableJob(t, tab, model.JobSpec{ID: "d", GPUs: 1, Model: "M", Duration: model.Second})
	if v, a := tab.Speed(j, 0, 1), tab.Speed(j, 1, 1); v != 1 || a != 0.5 {
		t.Errorf("speeds v100 %v, a100 %v; want 1 and 0.5 (a100 measured at half the v100 rate)", v, a)
	}
}

// TestOnlineState: State is sorted whatever the order of the samples, goes
// through JSON and Restore unchanged, and Restore rejects bad entries.
func TestOnlineState(t *testing.T) {
	samples := []Sample{
		{Model: "b", GPUType: "v100", GPUs: 2, Steps: 30, Seconds: 10},
		{Model: "a", GPUType: "v100", GPUs: 4, Steps: 10, Seconds: 10},
		{Model: "a", GPUType: "k80", GPUs: 1, Steps: 20, Seconds: 10},
		{Model: "a", GPUType: "v100", GPUs: 1, Steps: 40, Seconds: 10},
	}
	want := []OnlineEntry{{"a", "k80", 1, 2, 1}, {"a", "v100", 1, 4, 1}, {"a", "v100", 4, 1, 1}, {"b", "v100", 2, 3, 1}}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		o := mustOnline(t, 0.5)
		for _, i := range order {
			if err := o.Observe(samples[i]); err != nil {
				t.Fatal(err)
			}
		}
		if got := o.State().Entries; !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v: %v, want %v", order, got, want)
		}
	}
	data, err := json.Marshal(OnlineState{Entries: want})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.HasPrefix(s, `{"entries":[{"model":"a","gpu_type":"k80","gpus":1,"steps_per_s":2,"samples":1}`) {
		t.Errorf("JSON %s", s)
	}
	var st OnlineState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	o := mustOnline(t, 0.5)
	if err := o.Restore(st); err != nil || !reflect.DeepEqual(o.State().Entries, want) || o.Version() != 1 {
		t.Errorf("restore: %v, %v", err, o.State())
	}
	bad := []struct {
		e    OnlineEntry
		want string
	}{
		{OnlineEntry{"", "v100", 1, 1, 1}, "no job type or GPU type"},
		{OnlineEntry{"c", "v100", 0, 1, 1}, "0 GPUs"},
		{OnlineEntry{"c", "v100", 1, 1, 0}, "0 samples"},
		{OnlineEntry{"c", "v100", 1, 0, 1}, "rate 0"},
		{OnlineEntry{"c", "v100", 1, math.Inf(1), 1}, "rate +Inf"},
		{OnlineEntry{"a", "V100", 1, 1, 1}, "entries[4] (a on 1 V100): given twice"},
	}
	for _, b := range bad {
		err := o.Restore(OnlineState{Entries: append(append([]OnlineEntry(nil), want...), b.e)})
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want %q", b.e, err, b.want)
		}
	}
	if !reflect.DeepEqual(o.State().Entries, want) || o.Version() != 1 {
		t.Errorf("a failed restore changed the estimates: %v", o.State())
	}
}
