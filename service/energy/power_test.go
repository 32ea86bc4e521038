package energy

import "testing"

// TestCalibrationRows averages the samples of each load and sorts by load.
func TestCalibrationRows(t *testing.T) {
	got := calibrationRows([]PowerSample{
		{Load: 0.5, PowerW: 100, Throughput: 2}, {Load: 0.25, PowerW: 50, Throughput: 1},
		{Load: 0.5, PowerW: 200, Throughput: 4}, {Load: 0.5000000001, PowerW: 300, Throughput: 6},
	})
	want := []PowerSample{{Load: 0.25, PowerW: 50, Throughput: 1}, {Load: 0.5, PowerW: 200, Throughput: 4}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("calibrationRows: %+v, want %+v", got, want)
	}
}
