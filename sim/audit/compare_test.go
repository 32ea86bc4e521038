package audit

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// validSummary is what a simulator should print for validLog.
func validSummary() map[string]any {
	return map[string]any{
		"policy": "fifo", "placer": "pack", "scaler": "none", "energy_kwh": 1.5,
		"jobs": 6, "completed": 3, "rejected": 1,
		"avg_jct_s": 65.25, "p50_jct_s": 55.5, "p99_jct_s": 90.25, "avg_queue_s": 15.1875,
		"makespan_s": 100.25, "gpu_util": 274.5 / 401,
		"preemptions": 1, "resizes": 1,
	}
}

func validResult(t *testing.T) Result {
	t.Helper()
	r, err := Check(strings.NewReader(validLog), "events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func encode(t *testing.T, s map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCompareAgrees(t *testing.T) {
	r := validResult(t)
	tests := []struct {
		name   string
		change map[string]any
		drop   []string
	}{
		{name: "exact"},
		{name: "times within 1 ms", change: map[string]any{"avg_jct_s": 65.2509, "makespan_s": 100.2491, "p50_jct_s": 55.501}},
		{name: "times within relative 1e-6", change: map[string]any{"avg_jct_s": 65.25 * (1 + 9e-7), "makespan_s": 100.25 * (1 - 9e-7)}},
		{name: "utilisation within relative 1e-6", change: map[string]any{"gpu_util": 274.5 / 401 * (1 + 9e-7)}},
		{name: "only the required keys", drop: []string{"jobs", "rejected", "p50_jct_s", "p99_jct_s", "avg_queue_s", "preemptions", "resizes", "policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSummary()
			maps.Copy(s, tt.change)
			for _, k := range tt.drop {
				delete(s, k)
			}
			if err := Compare(r, encode(t, s)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestCompareDisagrees(t *testing.T) {
	r := validResult(t)
	const prefix = "summary disagrees with the event log: "
	tests := []struct {
		name   string
		change map[string]any
		drop   string
		want   string // after prefix
	}{
		{"jobs", map[string]any{"jobs": 7}, "", "jobs: summary 7, log 6"},
		{"completed", map[string]any{"completed": 2}, "", "completed: summary 2, log 3"},
		{"completed not an integer", map[string]any{"completed": 3.5}, "", "completed: summary 3.5, log 3"},
		{"rejected", map[string]any{"rejected": 0}, "", "rejected: summary 0, log 1"},
		{"avg_jct_s", map[string]any{"avg_jct_s": 65.252}, "", "avg_jct_s: summary 65.252, log 65.25"},
		{"p50_jct_s", map[string]any{"p50_jct_s": 50}, "", "p50_jct_s: summary 50, log 55.5"},
		{"p99_jct_s", map[string]any{"p99_jct_s": 55.5}, "", "p99_jct_s: summary 55.5, log 90.25"},
		{"avg_queue_s", map[string]any{"avg_queue_s": 12.65}, "", "avg_queue_s: summary 12.65, log 15.1875"},
		{"makespan_s", map[string]any{"makespan_s": 100}, "", "makespan_s: summary 100, log 100.25"},
		{"gpu_util", map[string]any{"gpu_util": 0.6845}, "", "gpu_util: summary 0.6845, log 0.6845386534"},
		{"preemptions", map[string]any{"preemptions": 2}, "", "preemptions: summary 2, log 1"},
		{"resizes", map[string]any{"resizes": 0}, "", "resizes: summary 0, log 1"},
		{"not a number", map[string]any{"makespan_s": "100.25"}, "", `makespan_s: summary has "100.25", want a number`},
		{"null", map[string]any{"gpu_util": nil}, "", "gpu_util: summary has null, want a number"},
		{"missing completed", nil, "completed", "completed: missing from summary"},
		{"missing avg_jct_s", nil, "avg_jct_s", "avg_jct_s: missing from summary"},
		{"missing makespan_s", nil, "makespan_s", "makespan_s: missing from summary"},
		{"missing gpu_util", nil, "gpu_util", "gpu_util: missing from summary"},
		{"several", map[string]any{"completed": 4, "gpu_util": 0.5}, "makespan_s",
			"completed: summary 4, log 3; makespan_s: missing from summary; gpu_util: summary 0.5, log 0.6845386534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSummary()
			maps.Copy(s, tt.change)
			delete(s, tt.drop)
			err := Compare(r, encode(t, s))
			if err == nil {
				t.Fatalf("Compare agreed, want %q", tt.want)
			}
			if err.Error() != prefix+tt.want {
				t.Errorf("Compare error\n got %q\nwant %q", err, prefix+tt.want)
			}
		})
	}
}

func TestCompareBadJSON(t *testing.T) {
	for _, in := range []string{"", "{", "[]", `"x"`} {
		err := Compare(Result{}, []byte(in))
		if err == nil || !strings.HasPrefix(err.Error(), "decode summary: ") {
			t.Errorf("Compare(%q) = %v, want a decode error", in, err)
		}
	}
}
