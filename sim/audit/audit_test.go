package audit

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// cluster4 is a cluster of two v100s on n0 and two k80s on n1.
const cluster4 = `{"t":0,"event":"cluster","gpus":[` +
	`{"id":"n0/0","node":"n0","type":"v100","mem_mib":16384},` +
	`{"id":"n0/1","node":"n0","type":"v100","mem_mib":16384},` +
	`{"id":"n1/0","node":"n1","type":"k80","mem_mib":12288},` +
	`{"id":"n1/1","node":"n1","type":"k80","mem_mib":12288}]}`

// validLog exercises every event kind. Hand-computed figures:
//
//	j1 (elastic 1..4): 2 GPUs 0–20 = 40, resized to 1 GPU 20–50 = 30 → 70 GPU-s; JCT 50 − 0 = 50
//	j2 (k80 only):     1 GPU 5–30 = 25, preempted, 1 GPU 40–60.5 = 20.5 → 45.5 GPU-s; JCT 60.5 − 5 = 55.5
//	j3 (gang of 4):    4 GPUs 60.5–100.25 = 4 × 39.75 = 159 GPU-s; JCT 100.25 − 10 = 90.25
//	j4:                rejected at 10
//	j5:                starts at 100.25, the last t, reported unfinished while running → 0 GPU-s
//	j6:                waits, reported unfinished
//
//	jobs 6, completed 3, rejected 1, preemptions 1, resizes 1
//	avg JCT   = (50 + 55.5 + 90.25) / 3 = 195.75 / 3 = 65.25
//	p50 JCT   = 2nd of [50 55.5 90.25] (⌈0.5·3⌉ = 2) = 55.5;  p99 = 3rd (⌈0.99·3⌉ = 3) = 90.25
//	avg queue = (j1 0 + j2 0 + j3 60.5−10 + j5 100.25−90) / 4 = 60.75 / 4 = 15.1875
//	makespan  = last finish 100.25 − first submit 0 = 100.25
//	GPU-s     = 70 + 45.5 + 159 + 0 = 274.5
//	gpu_util  = 274.5 / (4 × 100.25) = 274.5 / 401
const validLog = cluster4 + "\n" +
	`{"t":0,"event":"submit","job":"j1","gpus":2,"min_gpus":1,"max_gpus":4,"model":"ResNet-50 (batch size 64)","steps":5000}` + "\n" +
	`{"t":0,"event":"start","job":"j1","alloc":["n0/0","n0/1"]}` + "\n" +
	`{"t":5,"event":"submit","job":"j2","gpus":1,"min_gpus":1,"max_gpus":1,"duration_s":100,"gpu_type":"k80"}` + "\n" +
	`{"t":5,"event":"start","job":"j2","alloc":["n1/0"]}` + "\n" +
	`{"t":10,"event":"submit","job":"j3","gpus":4,"min_gpus":4,"max_gpus":4,"priority":2}` + "\n" +
	`{"t":10,"event":"submit","job":"j4","gpus":8,"min_gpus":8,"max_gpus":8}` + "\n" +
	`{"t":10,"event":"reject","job":"j4","reason":"needs 8 GPUs, cluster has 4"}` + "\n" +
	`{"t":20,"event":"resize","job":"j1","alloc":["n0/0"]}` + "\n" +
	`{"t":30,"event":"preempt","job":"j2","reason":"priority"}` + "\n" +
	`{"t":40,"event":"start","job":"j2","alloc":["n1/1"]}` + "\n" +
	`{"t":50,"event":"finish","job":"j1"}` + "\n" +
	`{"t":60.5,"event":"finish","job":"j2"}` + "\n" +
	`{"t":60.5,"event":"start","job":"j3","alloc":["n0/0","n0/1","n1/0","n1/1"],"note":"unknown fields are allowed"}` + "\n" +
	`{"t":90,"event":"submit","job":"j5","gpus":1}` + "\n" +
	`{"t":95,"event":"submit","job":"j6","gpus":4}` + "\n" +
	`{"t":100.25,"event":"finish","job":"j3"}` + "\n" +
	`{"t":100.25,"event":"start","job":"j5","alloc":["n0/0"]}` + "\n" +
	`{"t":100.25,"event":"unfinished","job":"j5","reason":"running: would finish after the horizon"}` + "\n" +
	`{"t":100.25,"event":"unfinished","job":"j6","reason":"waiting: not enough free GPUs"}` + "\n"

func TestCheckValid(t *testing.T) {
	got, err := Check(strings.NewReader(validLog), "events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Jobs: 6, Completed: 3, Rejected: 1,
		AvgJCT: 65.25, P50JCT: 55.5, P99JCT: 90.25, AvgQueue: 15.1875,
		Makespan: 100.25, GPUSeconds: 274.5, GPUUtil: 274.5 / 401,
		Preemptions: 1, Resizes: 1, ClusterGPUs: 4, End: 100.25,
		Unfinished: []string{"j5", "j6"}, Running: []string{"j5"},
	}
	if !sameResult(got, want) {
		t.Errorf("Check =\n%+v\nwant\n%+v", got, want)
	}
}

// sameResult compares results, floats to within rounding.
func sameResult(a, b Result) bool {
	fa := []float64{a.AvgJCT, a.P50JCT, a.P99JCT, a.AvgQueue, a.Makespan, a.GPUSeconds, a.GPUUtil, a.End}
	fb := []float64{b.AvgJCT, b.P50JCT, b.P99JCT, b.AvgQueue, b.Makespan, b.GPUSeconds, b.GPUUtil, b.End}
	for i := range fa {
		if math.Abs(fa[i]-fb[i]) > 1e-12 {
			return false
		}
	}
	ia := []int{a.Jobs, a.Completed, a.Rejected, a.Preemptions, a.Resizes, a.ClusterGPUs}
	ib := []int{b.Jobs, b.Completed, b.Rejected, b.Preemptions, b.Resizes, b.ClusterGPUs}
	return slices.Equal(ia, ib) && slices.Equal(a.Unfinished, b.Unfinished) && slices.Equal(a.Running, b.Running)
}

func TestCheckValidEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  Result
	}{{
		name:  "cluster only",
		lines: []string{cluster4},
		want:  Result{ClusterGPUs: 4},
	}, {
		name: "GPU freed by finish is reused at the same t; no trailing newline; CRLF",
		lines: []string{cluster4 + "\r",
			`{"t":1,"event":"submit","job":"a","gpus":1}`,
			`{"t":1,"event":"submit","job":"b","gpus":1}`,
			`{"t":1,"event":"start","job":"a","alloc":["n0/0"]}`,
			`{"t":3,"event":"finish","job":"a"}`,
			`{"t":3,"event":"start","job":"b","alloc":["n0/0"]}`,
			`{"t":4,"event":"finish","job":"b"}`},
		// JCTs 2 and 3; makespan 4 − 1 = 3; GPU-s 2 + 1 = 3; util 3 / (4 × 3) = 0.25.
		want: Result{Jobs: 2, Completed: 2, AvgJCT: 2.5, P50JCT: 2, P99JCT: 3, AvgQueue: 1,
			Makespan: 3, GPUSeconds: 3, GPUUtil: 0.25, ClusterGPUs: 4, End: 4},
	}, {
		name: "grow keeps own GPUs; min/max default to gpus",
		lines: []string{cluster4,
			`{"t":0,"event":"submit","job":"e","gpus":2,"min_gpus":1,"max_gpus":4}`,
			`{"t":0,"event":"start","job":"e","alloc":["n0/0"]}`,
			`{"t":2,"event":"resize","job":"e","alloc":["n1/1","n0/0","n0/1"]}`,
			`{"t":4,"event":"finish","job":"e"}`},
		// GPU-s 1 × 2 + 3 × 2 = 8; makespan 4; util 8 / 16 = 0.5.
		want: Result{Jobs: 1, Completed: 1, AvgJCT: 4, P50JCT: 4, P99JCT: 4,
			Makespan: 4, GPUSeconds: 8, GPUUtil: 0.5, Resizes: 1, ClusterGPUs: 4, End: 4},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check(strings.NewReader(strings.Join(tt.lines, "\n")), "x.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			if !sameResult(got, tt.want) {
				t.Errorf("Check =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}
