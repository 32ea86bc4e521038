package profile

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestRate(t *testing.T) {
	pts := []Point{{1, 10}, {2, 18}, {4, 30}, {8, 40}}
	zero := []Point{{1, 10}, {2, 0}}
	tests := []struct {
		name string
		pts  []Point
		n    int
		want float64
	}{
		{"measured", pts, 2, 18},
		{"interpolated", pts, 3, 24},
		{"interpolated upper half", pts, 6, 35},
		{"linear beyond the largest count", pts, 16, 80},
		{"zero entry", zero, 2, 0},
		{"between a zero entry", []Point{{1, 10}, {4, 0}}, 3, 0},
		{"never above linear", []Point{{1, 10}, {4, 100}}, 2, 20},
		{"below the smallest count", []Point{{2, 10}}, 1, 5},
		{"no data", nil, 1, 0},
		{"no GPUs", pts, 0, 0},
	}
	for _, tc := range tests {
		if got := Rate(tc.pts, tc.n); got != tc.want {
			t.Errorf("%s: Rate(n=%d) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
}

func TestParseMatrix(t *testing.T) {
	good := `{"v100": {"('M (batch size 8)', 1)": {"null": 2.5, "('X', 1)": [1, 2]}, "('M (batch size 8)', 2)": {"null": 4}},
	          "K80": {"('M (batch size 8)', 1)": {"null": 0}}}`
	m, err := ParseMatrix("m.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Points("M (batch size 8)", "v100"); len(got) != 2 || got[1] != (Point{2, 4}) {
		t.Errorf("points %v", got)
	}
	if !m.HasType("k80") || m.HasType("K80") {
		t.Errorf("types are lower-cased: %v", m.Types)
	}
	bad := []struct{ in, want string }{
		{`[1]`, "m.json: not a throughput matrix"},
		{`{}`, "m.json: throughput matrix has no entries"},
		{`{"v100": {"M, 1": {"null": 1}}}`, `m.json: v100: key "M, 1": want ('<job type>', <GPU count>)`},
		{`{"v100": {"('M', 0)": {"null": 1}}}`, `GPU count must be a positive integer`},
		{`{"v100": {"('M', 1)": {"x": 1}}}`, `no "null" entry`},
		{`{"v100": {"('M', 1)": {"null": -1}}}`, `negative throughput`},
		{`{"v100": {"('', 1)": {"null": 1}}}`, `empty job type`},
	}
	for _, b := range bad {
		_, err := ParseMatrix("m.json", []byte(b.in))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want %q", b.in, err, b.want)
		}
	}
}

func TestTableSpeed(t *testing.T) {
	tab := scalingTable(t) // the same matrix and cluster
	mk := func(spec model.JobSpec) *model.Job { return tableJob(t, tab, spec) }
	steps := mk(model.JobSpec{ID: "s", GPUs: 1, Model: "M", Steps: 100})
	dur := mk(model.JobSpec{ID: "d", GPUs: 1, Model: "M", Duration: 100 * model.Second})
	plain := mk(model.JobSpec{ID: "p", GPUs: 2, Duration: 100 * model.Second})
	tests := []struct {
		name string
		j    *model.Job
		t, n int
		want float64
	}{
		{"steps on v100", steps, 0, 2, 6},
		{"steps on k80, zero entry", steps, 1, 2, 0},
		{"steps on t4: reference rate × TFLOPS ratio", steps, 2, 1, 2},
		{"duration on reference", dur, 0, 1, 1},
		{"duration on k80: matrix ratio", dur, 1, 1, 0.25},
		{"duration on 2 v100: matrix ratio", dur, 0, 2, 1.5},
		{"duration without model: TFLOPS ratio", plain, 1, 2, 0.25},
		{"duration without model: linear in GPUs", plain, 0, 1, 0.5},
	}
	for _, tc := range tests {
		if got := tab.Speed(tc.j, tc.t, tc.n); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, _, err := tab.Work(&model.JobSpec{ID: "x", Model: "nope", Steps: 5}); err == nil {
		t.Error("unknown job type with steps accepted")
	}
}

func FuzzParseMatrix(f *testing.F) {
	f.Add([]byte(`{"v100": {"('M', 1)": {"null": 2.5}, "('M', 2)": {"null": 4}}}`))
	f.Add([]byte(`{"k80": {"('A (b)', 8)": {"null": 0}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMatrix("f", data)
		if err != nil {
			return
		}
		for _, model := range m.Models {
			for _, gt := range m.Types {
				pts := m.Points(model, gt)
				for i, p := range pts {
					if p.GPUs < 1 || p.Rate < 0 || (i > 0 && p.GPUs <= pts[i-1].GPUs) {
						t.Fatalf("bad points %v", pts)
					}
				}
				for n := 1; n <= 9; n++ {
					if r := Rate(pts, n); r < 0 {
						t.Fatalf("negative rate %v", r)
					}
				}
			}
		}
	})
}

// tableJob builds a job of spec with its work and job type from tab.
func tableJob(t *testing.T, tab *Table, spec model.JobSpec) *model.Job {
	t.Helper()
	mi, w, err := tab.Work(&spec)
	if err != nil {
		t.Fatal(err)
	}
	return model.NewJob(spec, 0, mi, w)
}
