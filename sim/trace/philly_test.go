package trace

import (
	"bytes"
	"os"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// phillyJobSpec is a Philly job as Read returns it.
func phillyJobSpec(id string, submit model.Time, gpus int, dur model.Time, vc string) model.JobSpec {
	s := rigid(id, submit, gpus)
	s.Duration, s.Group = dur, vc
	return s
}

func TestReadPhilly(t *testing.T) {
	const h = phillyHeader + "\n"
	runReadCases(t, "p.csv", "philly", []readCase{
		{name: "relative to earliest, sorted, ids in file order",
			in: h + "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n" +
				"2017-10-09 06:13:03,2951.0,2,5902.0,6214e9\n" +
				"2017-10-09 07:01:55,1.5,8,12.0,6214e9\n",
			want: []model.JobSpec{
				phillyJobSpec("1", 0, 2, 2951*model.Second, "6214e9"),
				phillyJobSpec("0", 2932*model.Second, 1, 66*model.Second, "11cb48"),
				phillyJobSpec("2", 2932*model.Second, 8, 1500, "6214e9"),
			}},
		{name: "across a month and a leap day",
			in: h + "2016-02-29 23:59:59,10,1,10,a\n2016-03-01 00:00:00,10,1,10,a\n",
			want: []model.JobSpec{
				phillyJobSpec("0", 0, 1, 10*model.Second, "a"),
				phillyJobSpec("1", 1*model.Second, 1, 10*model.Second, "a"),
			}},
		{name: "zero duration becomes 1 ms", in: h + "2017-10-09 07:01:55,0.0,1,0.0,c\n2017-10-09 07:01:56,0.0001,1,0,c\n",
			want: []model.JobSpec{phillyJobSpec("0", 0, 1, 1, "c"), phillyJobSpec("1", model.Second, 1, 1, "c")}},
		{name: "blank lines and empty cluster", in: "\n" + h + "\n2017-10-09 07:01:55,5,1,5,\n\n",
			want: []model.JobSpec{phillyJobSpec("0", 0, 1, 5*model.Second, "")}},
		{name: "missing header", in: "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n",
			err: `p.csv:1: missing header: want "timestamp,duration,num_gpus,gpu_time,cluster", got "2017-10-09`},
		{name: "tiresias header", in: tiresiasHeader + "\n", err: "p.csv:1: missing header"},
		{name: "four columns", in: h + "2017-10-09 07:01:55,66.0,1,66.0\n", err: "p.csv:2: got 4 columns, want 5"},
		{name: "six columns", in: h + "\n2017-10-09 07:01:55,66.0,1,66.0,a,b\n", err: "p.csv:3: got 6 columns, want 5"},
		{name: "iso time", in: h + "2017-10-09T07:01:55,66.0,1,66.0,a\n",
			err: `p.csv:2: timestamp "2017-10-09T07:01:55" is not a time YYYY-MM-DD HH:MM:SS`},
		{name: "short time", in: h + "2017-10-09 7:01:55,66.0,1,66.0,a\n", err: `p.csv:2: timestamp "2017-10-09 7:01:55" is not a time`},
		{name: "letters in time", in: h + "2017-1x-09 07:01:55,66.0,1,66.0,a\n", err: `p.csv:2: timestamp "2017-1x-09 07:01:55" is not a time`},
		{name: "february 30", in: h + "2017-02-30 07:01:55,66.0,1,66.0,a\n", err: `p.csv:2: timestamp "2017-02-30 07:01:55" is not a time`},
		{name: "month 13", in: h + "2017-13-01 07:01:55,66.0,1,66.0,a\n", err: "p.csv:2: timestamp"},
		{name: "hour 24", in: h + "2017-12-01 24:00:00,66.0,1,66.0,a\n", err: "p.csv:2: timestamp"},
		{name: "second 60", in: h + "2017-12-01 23:59:60,66.0,1,66.0,a\n", err: "p.csv:2: timestamp"},
		{name: "negative duration", in: h + "2017-12-01 23:59:59,-1,1,66.0,a\n", err: "p.csv:2: duration -1 is negative"},
		{name: "duration text", in: h + "2017-12-01 23:59:59,long,1,66.0,a\n", err: `p.csv:2: duration "long" is not a number`},
		{name: "zero gpus", in: h + "2017-12-01 23:59:59,5,0,66.0,a\n", err: "p.csv:2: num_gpus 0 is less than 1"},
		{name: "fractional gpus", in: h + "2017-12-01 23:59:59,5,1.0,66.0,a\n", err: `p.csv:2: num_gpus "1.0" is not an integer`},
		{name: "negative gpu_time", in: h + "2017-12-01 23:59:59,5,1,-66.0,a\n", err: "p.csv:2: gpu_time -66 is negative"},
		{name: "header only", in: h, err: "p.csv: no jobs in the trace"},
	})
}

// TestReadPhillyFull reads the whole Philly trace when ../shared is there.
func TestReadPhillyFull(t *testing.T) {
	data := phillyFile(t)
	jobs, err := Read(bytes.NewReader(data), "philly.csv", "auto")
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, jobs)
	if len(jobs) != 82247 {
		t.Errorf("got %d jobs, want 82247", len(jobs))
	}
	maxGPUs, single := 0, 0
	for _, j := range jobs {
		maxGPUs = max(maxGPUs, j.GPUs)
		if j.GPUs == 1 {
			single++
		}
	}
	if maxGPUs != 128 || single != 76627 {
		t.Errorf("max GPUs %d, single-GPU jobs %d; want 128, 76627", maxGPUs, single)
	}
	// 2017-09-04 … 2017-12-22 is about 109 days.
	if last := jobs[len(jobs)-1].Submit; last < 100*24*3600*model.Second || last > 110*24*3600*model.Second {
		t.Errorf("last submission %v s after the first, want about 109 days", last.Seconds())
	}
}

// phillyFile returns the full Philly trace, skipping when it is absent.
func phillyFile(tb testing.TB) []byte {
	tb.Helper()
	data, err := os.ReadFile("../../../shared/traces/philly/philly.csv")
	if err != nil {
		tb.Skipf("full Philly trace not available: %v", err)
	}
	return data
}

// BenchmarkReadPhilly reads the full 82,247-job Philly trace.
func BenchmarkReadPhilly(b *testing.B) {
	data := phillyFile(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), "philly.csv", "philly"); err != nil {
			b.Fatal(err)
		}
	}
}
