package audit

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// FuzzCheck feeds arbitrary bytes to Check: it must never panic, and a log it
// accepts must give a self-consistent Result that Compare accepts back.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(validLog))
	f.Add([]byte(cluster4 + "\n" + subA + "\n" + startA + "\n" + `{"t":3,"event":"resize","job":"a","alloc":["n0/0","n0/1"]}`))
	f.Add([]byte(cluster4 + "\n" + subA + "\n" + subB + "\n" + startA + "\n" + `{"t":2,"event":"start","job":"b","alloc":["n0/0"]}`))
	f.Add([]byte(`{"t":0,"event":"cluster","gpus":[{"id":"g"}]}` + "\n" + `{"t":1,"event":"submit","job":"a","gpus":1,"gpu_type":"x"}`))
	f.Add([]byte(cluster2 + "\n" + `{"t":1,"event":"submit","job":"a","gpus":2,"replica_gpus":2,"requests":{"cpu":5000}}` + "\n" +
		`{"t":2,"event":"start","job":"a","alloc":["n0/0","n0/1"]}` + "\n" + `{"t":3,"event":"finish","job":"a"}`))
	f.Add([]byte(`{"t":0,"event":"cluster","gpus":null}`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		r, err := Check(strings.NewReader(string(log)), "fuzz.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl") {
				t.Fatalf("error does not name the log: %v", err)
			}
			return
		}
		if r.Completed+r.Rejected+len(r.Unfinished) != r.Jobs || len(r.Running) > len(r.Unfinished) {
			t.Fatalf("inconsistent counts: %+v", r)
		}
		figs := []float64{r.AvgJCT, r.P50JCT, r.P99JCT, r.AvgQueue, r.Makespan, r.GPUSeconds, r.GPUUtil}
		for _, x := range figs {
			if math.IsNaN(x) || x < 0 {
				t.Fatalf("negative or NaN figure in %+v", r)
			}
			if math.IsInf(x, 0) {
				return // times near the float64 limit overflow; nothing more to compare
			}
		}
		if err := Compare(r, summaryOf(t, r)); err != nil {
			t.Fatalf("Compare rejects the log's own figures: %v", err)
		}
	})
}

// summaryOf encodes r as a `--json` summary.
func summaryOf(t *testing.T, r Result) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"jobs": r.Jobs, "completed": r.Completed, "rejected": r.Rejected,
		"avg_jct_s": r.AvgJCT, "p50_jct_s": r.P50JCT, "p99_jct_s": r.P99JCT, "avg_queue_s": r.AvgQueue,
		"makespan_s": r.Makespan, "gpu_util": r.GPUUtil, "preemptions": r.Preemptions, "resizes": r.Resizes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
