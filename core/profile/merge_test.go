package profile

import (
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func mustMatrix(t *testing.T, s string) *Matrix {
	t.Helper()
	m, err := ParseMatrix("m", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMerge(t *testing.T) {
	base := mustMatrix(t, `{"v100": {"('M', 1)": {"null": 4}, "('M', 2)": {"null": 6}, "('K', 1)": {"null": 2}},
		"k80": {"('M', 1)": {"null": 1}, "('K', 1)": {"null": 1}}}`)
	m := base.Merge(
		Profile{JobType: "M", PeakMemMiB: 9000, Throughput: map[string][]Point{
			"v100": {{4, 10}, {1, 5}}, "a100": {{1, 8}}}},
		Profile{JobType: "N", Throughput: map[string][]Point{"a100": {{1, 3}}}},
		Profile{JobType: "K", PeakMemMiB: 500},
		Profile{JobType: "memonly", PeakMemMiB: 700},
		Profile{JobType: "N", PeakMemMiB: 100, Throughput: map[string][]Point{"t4": {{1, 0}}}},
	)
	tests := []struct {
		model, gpuType string
		want           []Point
	}{
		{"M", "v100", []Point{{1, 5}, {4, 10}}}, // replaced, sorted
		{"M", "k80", []Point{{1, 1}}},           // kept
		{"M", "a100", []Point{{1, 8}}},          // added
		{"K", "v100", []Point{{1, 2}}},          // memory only: throughput kept
		{"N", "a100", []Point{{1, 3}}},          // new job type
		{"N", "t4", []Point{{1, 0}}},            // a later profile extends it
	}
	for _, tc := range tests {
		if got := m.Points(tc.model, tc.gpuType); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s on %s: %v, want %v", tc.model, tc.gpuType, got, tc.want)
		}
	}
	if want := []string{"K", "M", "N"}; !reflect.DeepEqual(m.Models, want) {
		t.Errorf("models %v, want %v (a memory-only profile adds no job type)", m.Models, want)
	}
	if want := []string{"a100", "k80", "t4", "v100"}; !reflect.DeepEqual(m.Types, want) {
		t.Errorf("types %v, want %v", m.Types, want)
	}
	for jt, want := range map[string]int{"M": 9000, "K": 500, "N": 100, "memonly": 700, "unknown": 0} {
		if got := m.PeakMemMiB(jt); got != want {
			t.Errorf("PeakMemMiB(%s) = %d, want %d", jt, got, want)
		}
	}
	// The base matrix is unchanged.
	if got := base.Points("M", "v100"); !reflect.DeepEqual(got, []Point{{1, 4}, {2, 6}}) || base.HasModel("N") ||
		base.HasType("a100") || base.PeakMemMiB("M") != 0 {
		t.Errorf("Merge changed its receiver: %v %v %v", got, base.Models, base.Types)
	}
}

func TestMergeZeroMatrix(t *testing.T) {
	m := (&Matrix{}).Merge(Profile{JobType: "N", PeakMemMiB: 1, Throughput: map[string][]Point{"a100": {{2, 3}}}})
	if !m.HasModel("N") || !m.HasType("a100") || Rate(m.Points("N", "a100"), 4) != 6 {
		t.Errorf("profiles alone: %+v", m)
	}
}

func TestFillPeakMem(t *testing.T) {
	m := (&Matrix{}).Merge(Profile{JobType: "big", PeakMemMiB: 22000})
	specs := []model.JobSpec{{ID: "a", Model: "big"}, {ID: "b", Model: "big", PeakMemMiB: 1000}, {ID: "c", Model: "other"}}
	if n := m.FillPeakMem(specs); n != 1 {
		t.Errorf("changed %d specs, want 1", n)
	}
	for i, want := range []int{22000, 1000, 0} {
		if specs[i].PeakMemMiB != want {
			t.Errorf("%s: peak %d, want %d (a spec's own value wins)", specs[i].ID, specs[i].PeakMemMiB, want)
		}
	}
}

// testCluster has one 2-GPU node per type: v100 (16 TFLOPS, the reference),
// a100 (32), k80 (4).
func testCluster(t *testing.T) (*model.Cluster, model.GPUType) {
	t.Helper()
	v100 := model.GPUType{Name: "v100", MemMiB: 16384, TFLOPS: 16}
	types := []model.GPUType{v100, {Name: "a100", MemMiB: 40960, TFLOPS: 32}, {Name: "k80", MemMiB: 12288, TFLOPS: 4}}
	c, err := model.NewCluster(types, []model.Node{{Name: "v", Type: 0, GPUs: 2}, {Name: "a", Type: 1, GPUs: 2}, {Name: "k", Type: 2, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return c, v100
}

// TestTableFallback pins the rated-performance fallback per (job type, GPU
// type) and for job types without a profile.
func TestTableFallback(t *testing.T) {
	c, v100 := testCluster(t)
	m := mustMatrix(t, `{"v100": {"('M', 1)": {"null": 4}}, "k80": {"('M', 1)": {"null": 1}}}`).Merge(
		Profile{JobType: "A", Throughput: map[string][]Point{"a100": {{1, 8}}}},
		Profile{JobType: "R", Throughput: map[string][]Point{"v100": {{1, 2}}, "k80": {{1, 0}}}},
	)
	tab, err := NewTable(m, c, v100)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(spec model.JobSpec) *model.Job { return tableJob(t, tab, spec) }
	tests := []struct {
		name string
		j    *model.Job
		t, n int
		want float64
	}{
		{"matrix type on a100 (unmeasured): v100 rate × 32/16", mk(model.JobSpec{GPUs: 1, Model: "M", Steps: 9}), 1, 1, 8},
		{"profile on a100 only: measured", mk(model.JobSpec{GPUs: 1, Model: "A", Steps: 9}), 1, 1, 8},
		{"profile on a100 only, on v100: a100 rate × 16/32", mk(model.JobSpec{GPUs: 1, Model: "A", Steps: 9}), 0, 1, 4},
		{"profile on a100 only, on k80: a100 rate × 4/32", mk(model.JobSpec{GPUs: 1, Model: "A", Steps: 9}), 2, 1, 1},
		{"profile zero on k80: cannot run", mk(model.JobSpec{GPUs: 1, Model: "R", Steps: 9}), 2, 1, 0},
		{"profile on v100, on a100: × 32/16", mk(model.JobSpec{GPUs: 1, Model: "R", Steps: 9}), 1, 2, 8},
		{"duration, unknown job type, on k80: TFLOPS ratio", mk(model.JobSpec{GPUs: 2, Model: "bert", Duration: model.Second}), 2, 2, 0.25},
		{"duration, unknown job type, on a100, 1 of 2 GPUs", mk(model.JobSpec{GPUs: 2, Model: "bert", Duration: model.Second}), 1, 1, 1},
		{"duration, job type unmeasured on the reference: TFLOPS ratio", mk(model.JobSpec{GPUs: 1, Model: "A", Duration: model.Second}), 2, 1, 0.25},
		{"duration, profile on the reference: matrix ratio", mk(model.JobSpec{GPUs: 1, Model: "R", Duration: model.Second}), 1, 1, 2},
	}
	for _, tc := range tests {
		if got := tab.Speed(tc.j, tc.t, tc.n); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWorkWithoutProfile(t *testing.T) {
	c, v100 := testCluster(t)
	tab, err := NewTable(mustMatrix(t, `{"v100": {"('M', 1)": {"null": 4}}}`), c, v100)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = tab.Work(&model.JobSpec{ID: "j1", GPUs: 1, Model: "bert", Steps: 10})
	want := `job j1: job type "bert" is not in the throughput matrix: a job given in steps needs its job type's steps/s; ` +
		"add a profile for it with --profiles (docs/PROFILES.md)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	mi, w, err := tab.Work(&model.JobSpec{ID: "j2", GPUs: 1, Model: "bert", Duration: 90 * model.Second})
	if err != nil || mi != -1 || w != 90 {
		t.Errorf("duration job without a profile: %d %v %v", mi, w, err)
	}
}
