package profile

import (
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestScaleRate(t *testing.T) {
	pts := curve(1, 10, 2, 18, 4, 30, 8, 40)
	tests := []struct {
		name string
		pts  []model.ScalePoint
		n    int
		want float64
	}{
		{"measured", pts, 2, 18},
		{"measured largest", pts, 8, 40},
		{"interpolated", pts, 3, 24},            // 18 + (30-18)/2, below linear 27
		{"interpolated upper half", pts, 6, 35}, // 30 + (40-30)/2, below linear 60
		{"capped beyond the largest count", pts, 16, 40},
		{"capped far beyond", pts, 1000, 40},
		{"never above linear", curve(1, 10, 4, 100), 2, 20},
		{"below the smallest count", curve(2, 10, 4, 16), 1, 5},
		{"single point, above", curve(4, 2), 8, 2},
		{"single point, below", curve(4, 2), 2, 1},
		{"zero entry", curve(1, 10, 2, 0), 2, 0},
		{"between a zero entry", curve(1, 10, 4, 0), 3, 0},
		{"beyond a zero entry", curve(1, 10, 4, 0), 8, 0},
		{"no data", nil, 1, 0},
		{"no GPUs", pts, 0, 0},
	}
	for _, tc := range tests {
		if got := ScaleRate(tc.pts, tc.n); got != tc.want {
			t.Errorf("%s: ScaleRate(n=%d) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
}

// curve builds a scaling curve from alternating GPU counts and rates.
func curve(pairs ...float64) []model.ScalePoint {
	out := make([]model.ScalePoint, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, model.ScalePoint{GPUs: int(pairs[i]), Rate: pairs[i+1]})
	}
	return out
}

// scalingTable returns a table over v100 (16 TFLOPS, the reference), k80 (4)
// and t4 (8, not in the matrix) with job type M measured on v100 and k80.
func scalingTable(t *testing.T) *Table {
	t.Helper()
	m, err := ParseMatrix("m", []byte(`{"v100": {"('M', 1)": {"null": 4}, "('M', 2)": {"null": 6}},
		"k80": {"('M', 1)": {"null": 1}, "('M', 2)": {"null": 0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v100 := model.GPUType{Name: "v100", MemMiB: 1, TFLOPS: 16}
	types := []model.GPUType{v100, {Name: "k80", MemMiB: 1, TFLOPS: 4}, {Name: "t4", MemMiB: 1, TFLOPS: 8}}
	c, err := model.NewCluster(types, []model.Node{{Name: "a", Type: 0, GPUs: 2}, {Name: "b", Type: 1, GPUs: 2}, {Name: "c", Type: 2, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(m, c, v100)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestTableSpeedScaling(t *testing.T) {
	tab := scalingTable(t)
	mk := func(spec model.JobSpec) *model.Job { return tableJob(t, tab, spec) }
	measured := curve(1, 10, 2, 18, 4, 30, 8, 40)
	// A duration job requesting 2 GPUs: speed 1 there on the reference type.
	scaled := mk(model.JobSpec{ID: "d", GPUs: 2, Duration: 100 * model.Second, Scaling: measured})
	// Its job type is in the matrix, but the curve wins: on 2 v100s the
	// matrix would give 6/4 = 1.5, on 2 k80s 0.
	modelled := mk(model.JobSpec{ID: "m", GPUs: 1, Model: "M", Duration: 100 * model.Second,
		Scaling: curve(1, 2, 2, 2.5)})
	// A curve that is 0 at the requested count cannot scale the duration:
	// the job falls back to linear scaling.
	zeroAtReq := mk(model.JobSpec{ID: "z", GPUs: 2, Duration: 100 * model.Second,
		Scaling: curve(1, 0, 4, 10)})
	// A step job ignores the curve.
	steps := mk(model.JobSpec{ID: "s", GPUs: 1, Model: "M", Steps: 100, Scaling: measured})
	tests := []struct {
		name string
		j    *model.Job
		t, n int
		want float64
	}{
		{"requested count on the reference type", scaled, 0, 2, 1},
		{"measured count", scaled, 0, 4, 30.0 / 18},
		{"interpolated count", scaled, 0, 3, 24.0 / 18},
		{"below the requested count", scaled, 0, 1, 10.0 / 18},
		{"capped beyond the curve", scaled, 0, 16, 40.0 / 18},
		{"k80: TFLOPS ratio 1/4", scaled, 1, 1, 2.5 / 18},
		{"t4: TFLOPS ratio 1/2, capped", scaled, 2, 16, 20.0 / 18},
		{"curve over the matrix on v100", modelled, 0, 2, 1.25},
		{"curve over the matrix's zero on k80", modelled, 1, 2, 0.3125},
		{"zero at the requested count: linear", zeroAtReq, 0, 4, 2},
		{"zero at the requested count: TFLOPS ratio", zeroAtReq, 1, 2, 0.25},
		{"step job: matrix", steps, 0, 2, 6},
		{"step job: matrix zero", steps, 1, 2, 0},
	}
	for _, tc := range tests {
		if got := tab.Speed(tc.j, tc.t, tc.n); got != tc.want {
			t.Errorf("%s: Speed(type %d, n=%d) = %v, want %v", tc.name, tc.t, tc.n, got, tc.want)
		}
	}
}

// TestSpeedAllocationFree guards the simulator's hot path.
func TestSpeedAllocationFree(t *testing.T) {
	tab := scalingTable(t)
	jobs := []*model.Job{
		tableJob(t, tab, model.JobSpec{ID: "d", GPUs: 2, Duration: model.Second,
			Scaling: curve(1, 10, 2, 18, 4, 30)}),
		tableJob(t, tab, model.JobSpec{ID: "m", GPUs: 1, Model: "M", Duration: model.Second}),
		tableJob(t, tab, model.JobSpec{ID: "s", GPUs: 1, Model: "M", Steps: 5}),
	}
	var sink float64
	allocs := testing.AllocsPerRun(100, func() {
		for _, j := range jobs {
			for n := 1; n <= 8; n++ {
				sink += tab.Speed(j, n%3, n)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Speed allocates %v times per run", allocs)
	}
	_ = sink
}
