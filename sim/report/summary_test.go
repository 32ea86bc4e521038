package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/gpusched/gpusched/sim/metrics"
)

// sampleSummary is a small hand-made summary exercising every formatting rule.
func sampleSummary() metrics.Summary {
	energy := 1234.5678
	return metrics.Summary{
		Policy: "tiresias", Placer: "pack", Jobs: 12345, Completed: 3, Rejected: 1, Unfinished: 2,
		RejectedReasons:   map[string]int{"no GPU type can run it on 16 GPUs: v100 has only 8 GPUs": 1},
		UnfinishedReasons: map[string]int{"waiting: not enough free GPUs": 1, "running: finishes after the horizon": 1},
		AvgJCT:            12345.6789, P50JCT: 45.26, P99JCT: 200000, AvgQueue: 0.1234,
		GPUUtil: 0.87345, Preemptions: 2, EnergyKWh: &energy,
	}
}

func TestTable(t *testing.T) {
	nan := sampleSummary()
	nan.GPUUtil = math.Inf(1)
	nan.AvgJCT = math.NaN()
	nan.Makespan = 59.99
	nanEnergy := math.NaN()
	nan.EnergyKWh = &nanEnergy
	tests := []struct {
		name string
		in   metrics.Summary
		want string
	}{
		{"full", sampleSummary(), `policy       tiresias
placer       pack
scaler       -
jobs         12,345
completed    3
rejected     1
  1 × no GPU type can run it on 16 GPUs: v100 has only 8 GPUs
unfinished   2
  1 × running: finishes after the horizon
  1 × waiting: not enough free GPUs
avg JCT      12,345.7 s (3h25m)
p50 JCT      45.3 s
p99 JCT      200,000.0 s (2d07h)
avg queue    0.123 s
makespan     0 s
GPU util     87.3%
preemptions  2
migrations   0
resizes      0
energy       1,234.568 kWh
`},
		{"non-finite", nan, `policy       tiresias
placer       pack
scaler       -
jobs         12,345
completed    3
rejected     1
  1 × no GPU type can run it on 16 GPUs: v100 has only 8 GPUs
unfinished   2
  1 × running: finishes after the horizon
  1 × waiting: not enough free GPUs
avg JCT      n/a
p50 JCT      45.3 s
p99 JCT      200,000.0 s (2d07h)
avg queue    0.123 s
makespan     60.0 s
GPU util     n/a
preemptions  2
migrations   0
resizes      0
energy       n/a
`},
		{"zero", metrics.Summary{}, `policy       -
placer       -
scaler       -
jobs         0
completed    0
rejected     0
unfinished   0
avg JCT      0 s
p50 JCT      0 s
p99 JCT      0 s
avg queue    0 s
makespan     0 s
GPU util     0.0%
preemptions  0
migrations   0
resizes      0
energy       n/a
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Table(&b, tt.in); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("Table:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	odd := metrics.Summary{Policy: `a"b<c>`, AvgJCT: math.NaN(), GPUUtil: math.Inf(-1),
		P50JCT: 0.1 + 0.2, P99JCT: -0.0001, Makespan: 2.9996}
	tests := []struct {
		name string
		in   metrics.Summary
		want string
	}{
		{"full", sampleSummary(), `{"policy":"tiresias","placer":"pack","scaler":"","jobs":12345,` +
			`"completed":3,"rejected":1,"unfinished":2,"avg_jct_s":12345.6789,"p50_jct_s":45.26,"p99_jct_s":200000,` +
			`"avg_queue_s":0.1234,"makespan_s":0,"gpu_util":0.87345,"preemptions":2,"migrations":0,"resizes":0,"energy_kwh":1234.5678,` +
			`"rejected_reasons":{"no GPU type can run it on 16 GPUs: v100 has only 8 GPUs":1},` +
			`"unfinished_reasons":{"running: finishes after the horizon":1,"waiting: not enough free GPUs":1}}` + "\n"},
		{"energy not finite", func() metrics.Summary { s := metrics.Summary{}; inf := math.Inf(1); s.EnergyKWh = &inf; return s }(),
			`{"policy":"","placer":"","scaler":"","jobs":0,"completed":0,"rejected":0,"unfinished":0,"avg_jct_s":0,"p50_jct_s":0,"p99_jct_s":0,` +
				`"avg_queue_s":0,"makespan_s":0,"gpu_util":0,"preemptions":0,"migrations":0,"resizes":0,"energy_kwh":null}` + "\n"},
		{"odd (energy unknown: no key)", odd, `{"policy":"a\"b\u003cc\u003e","placer":"","scaler":"","jobs":0,` +
			`"completed":0,"rejected":0,"unfinished":0,"avg_jct_s":null,"p50_jct_s":0.3,"p99_jct_s":-0.0001,` +
			`"avg_queue_s":0,"makespan_s":2.9996,"gpu_util":null,"preemptions":0,"migrations":0,"resizes":0}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := JSON(&b, tt.in); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("JSON:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestHumanizeAndGroup(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{{0, "0s"}, {59.9, "59s"}, {60, "1m00s"}, {725, "12m05s"}, {3600, "1h00m"},
		{12345.6, "3h25m"}, {86400*3 + 3599, "3d00h"}, {-90, "-1m30s"}} {
		if got := humanize(tt.f); got != tt.want {
			t.Errorf("humanize(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000",
		"-1234567.50": "-1,234,567.50", "123456": "123,456"} {
		if got := group(in); got != want {
			t.Errorf("group(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSummaryDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		if err := JSON(w, sampleSummary()); err != nil {
			t.Fatal(err)
		}
		if err := Table(w, sampleSummary()); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("two writes differ:\n%s\n%s", a.Bytes(), b.Bytes())
	}
}
