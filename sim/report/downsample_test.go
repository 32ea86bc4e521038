package report

import (
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/gpusched/gpusched/sim/metrics"
)

func busy(s metrics.Sample) float64 { return float64(s.BusyGPUs) }

func TestDownsample(t *testing.T) {
	tests := []struct {
		name    string
		samples []metrics.Sample
		limit   int
		want    plotter.XYs
	}{
		{"empty", nil, 3, plotter.XYs{}},
		{"as is", []metrics.Sample{{T: 0, BusyGPUs: 1}, {T: 1500, BusyGPUs: 3}}, 3,
			plotter.XYs{{X: 0, Y: 1}, {X: 1.5, Y: 3}}},
		{"one instant", []metrics.Sample{{T: 7000, BusyGPUs: 1}, {T: 7000, BusyGPUs: 2},
			{T: 7000, BusyGPUs: 3}}, 2, plotter.XYs{{X: 7, Y: 3}}},
		// Buckets [0,2) and [2,4): 0 for 1 s + 10 for 1 s, then 10 for 2 s.
		{"time-weighted mean", []metrics.Sample{{T: 0, BusyGPUs: 0}, {T: 1000, BusyGPUs: 10},
			{T: 4000, BusyGPUs: 0}, {T: 4000, BusyGPUs: 5}}, 3,
			plotter.XYs{{X: 0, Y: 5}, {X: 2, Y: 10}, {X: 4, Y: 5}}},
		// A span shorter than the bucket count leaves empty buckets out.
		{"narrow span", []metrics.Sample{{T: 0, BusyGPUs: 2}, {T: 1, BusyGPUs: 4},
			{T: 2, BusyGPUs: 6}, {T: 2, BusyGPUs: 8}, {T: 2, BusyGPUs: 9}}, 4,
			plotter.XYs{{X: 0, Y: 2}, {X: 0.001, Y: 4}, {X: 0.002, Y: 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := downsample(tt.samples, tt.limit, busy)
			if len(got) != len(tt.want) {
				t.Fatalf("downsample = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("downsample = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestDownsampleKeepsArea checks that bucketing preserves the integral.
func TestDownsampleKeepsArea(t *testing.T) {
	samples := benchSamples(50_000, 64)
	got := downsample(samples, maxPoints, busy)
	if len(got) > maxPoints {
		t.Fatalf("%d points, want <= %d", len(got), maxPoints)
	}
	var want, area float64
	for i := range len(samples) - 1 {
		want += busy(samples[i]) * (samples[i+1].T - samples[i].T).Seconds()
	}
	for i := range len(got) - 1 {
		area += got[i].Y * (got[i+1].X - got[i].X)
	}
	if d := (area - want) / want; d > 1e-9 || d < -1e-9 {
		t.Errorf("area %v, want %v", area, want)
	}
}

func TestCDFPoints(t *testing.T) {
	got := cdfPoints([]float64{1, 2, 3, 4, 5, 6}, 3)
	want := plotter.XYs{{X: 1, Y: 0}, {X: 2, Y: 2.0 / 6}, {X: 4, Y: 4.0 / 6}, {X: 6, Y: 1}}
	if len(got) != len(want) {
		t.Fatalf("cdfPoints = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("cdfPoints = %v, want %v", got, want)
		}
	}
	if got := cdfPoints(nil, 3); got != nil {
		t.Errorf("cdfPoints(nil) = %v, want nil", got)
	}
}

func TestSortedSamples(t *testing.T) {
	in := []metrics.Sample{{T: 5, BusyGPUs: 1}, {T: 1, BusyGPUs: 2}, {T: 5, BusyGPUs: 3}}
	got := sortedSamples(in)
	if got[0].T != 1 || got[1].BusyGPUs != 1 || got[2].BusyGPUs != 3 {
		t.Errorf("sortedSamples = %v", got)
	}
	if in[0].T != 5 {
		t.Error("sortedSamples changed its input")
	}
}
