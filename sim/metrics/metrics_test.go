package metrics

import (
	"math"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestSummarize(t *testing.T) {
	s := model.Second
	recs := []JobRecord{
		// submit 0, start 10, finish 110 on 2 GPUs: JCT 110, queue 10, 200 GPU-s
		{ID: "a", Submit: 0, Start: 10 * s, Finish: 110 * s, GPUs: 2, GPUTime: 200 * s},
		// submit 20, start 20, finish 60, preempted once: JCT 40, 40 GPU-s
		{ID: "b", Submit: 20 * s, Start: 20 * s, Finish: 60 * s, GPUs: 1, GPUTime: 40 * s, Preemptions: 1},
		// never started
		{ID: "c", Submit: 30 * s, Start: -1, Finish: -1, Rejected: true, Reason: "too big"},
		// still waiting, and one still running, when the run ended
		{ID: "d", Submit: 40 * s, Start: -1, Finish: -1, Reason: "waiting"},
		{ID: "e", Submit: 40 * s, Start: 40 * s, Finish: -1, Reason: "running"},
		{ID: "f", Submit: 50 * s, Start: -1, Finish: -1, Reason: "waiting"},
	}
	got := Summarize(4, recs)
	// Queue: a 10, b 0, e 0 → 10/3.
	want := Summary{Jobs: 6, Completed: 2, Rejected: 1, Unfinished: 3, AvgJCT: 75, P50JCT: 40, P99JCT: 110,
		AvgQueue: 10.0 / 3, Makespan: 110, GPUUtil: 240.0 / (4 * 110), Preemptions: 1,
		RejectedReasons: map[string]int{"too big": 1}, UnfinishedReasons: map[string]int{"waiting": 2, "running": 1}}
	if math.Abs(got.GPUUtil-want.GPUUtil) > 1e-12 {
		t.Errorf("util %v, want %v", got.GPUUtil, want.GPUUtil)
	}
	got.GPUUtil = want.GPUUtil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct{ p, want float64 }{{0.5, 5}, {0.99, 10}, {0.1, 1}, {1, 10}} {
		if got := Percentile(xs, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if Percentile(nil, 0.5) != 0 {
		t.Error("empty input")
	}
}
