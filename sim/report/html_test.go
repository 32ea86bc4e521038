package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
)

// testRuns are two runs of three jobs on 4 GPUs.
func testRuns() []Run {
	e := 1.5
	a := Run{Name: "fifo", ClusterGPUs: 4, Summary: metrics.Summary{Policy: "fifo", Jobs: 3, Completed: 3, AvgJCT: 20, GPUUtil: 0.5, EnergyKWh: &e},
		Records: []metrics.JobRecord{
			{ID: "a", Submit: 0, Start: 0, Finish: model.FromSeconds(10)},
			{ID: "b", Submit: 0, Start: model.FromSeconds(10), Finish: model.FromSeconds(30)},
			{ID: "c <x>", Submit: model.FromSeconds(5), Start: model.FromSeconds(30), Finish: model.FromSeconds(35), Preemptions: 1},
		},
		Samples: []metrics.Sample{{T: 0, BusyGPUs: 4, Queued: 1, PowerW: 1200}, {T: model.FromSeconds(30), BusyGPUs: 2, PowerW: 800},
			{T: model.FromSeconds(35), BusyGPUs: 0, PowerW: 100}}}
	b := a
	b.Name, b.Summary.Policy, b.Summary.AvgJCT = "las", "las", 15
	b.Summary.EnergyKWh = nil
	return []Run{a, b}
}

// pageJSON extracts the data the page draws.
func pageJSON(t *testing.T, page string) pageData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data in the page")
	}
	var d pageData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("the page's data: %v\n%s", err, m[1])
	}
	return d
}

func TestHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, `compare <fifo> & "las"`, testRuns()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<title>compare &lt;fifo&gt; &amp; &#34;las&#34;</title>", "uPlot", "MIT License", `id="chart-cdf"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]*(src|href)\s*=\s*["']?[^"'>]*(//|\.js|\.css)`).FindString(page); m != "" {
		t.Errorf("the page loads %q: it must be self-contained", m)
	}
	if strings.Contains(page, "<title>compare <fifo>") {
		t.Error("the title is not escaped")
	}
	d := pageJSON(t, page)
	if len(d.Runs) != 2 || len(d.Util) != 2 || len(d.Time) != htmlBuckets || len(d.CDF[0]) != htmlCDFPoints {
		t.Fatalf("runs %d, series %d, buckets %d, cdf %d", len(d.Runs), len(d.Util), len(d.Time), len(d.CDF[0]))
	}
	// 4 busy GPUs of 4 until 30 s, 2 until 35 s: the first bucket is 100%,
	// the last 50%; the mean over the buckets is (30·100 + 5·50)/35.
	if d.Util[0][0] != 100 || d.Util[0][htmlBuckets-1] != 50 {
		t.Errorf("utilisation %v … %v", d.Util[0][0], d.Util[0][htmlBuckets-1])
	}
	if d.Power[0][0] != 1.2 || !math.IsNaN(d.Power[1][0]) && d.Power[1][0] != 0 {
		t.Errorf("power %v, %v (the second run has no energy)", d.Power[0][0], d.Power[1][0])
	}
	if got := d.CDF[0][len(d.CDF[0])-1]; got != 1 {
		t.Errorf("the CDF ends at %v, want 1", got)
	}
	var avg summaryRow
	for _, r := range d.Rows {
		if r.Key == "avg_jct_s" {
			avg = r
		}
	}
	if len(avg.Values) != 2 || avg.Raw[1] != 15 {
		t.Errorf("avg JCT row %+v", avg)
	}
	var again bytes.Buffer
	_ = HTML(&again, `compare <fifo> & "las"`, testRuns())
	if again.String() != page {
		t.Error("the same runs gave different pages")
	}
}

func TestTimelines(t *testing.T) {
	var log bytes.Buffer
	w := eventlog.NewWriter(&log)
	s := NewTimelineSink(w)
	s.Emit(eventlog.Event{T: 0, Kind: eventlog.Submit, Job: "a"})
	s.Emit(eventlog.Event{T: 0, Kind: eventlog.Start, Job: "a", Alloc: []string{"n0/0", "n0/1"}})
	s.Emit(eventlog.Event{T: 1000, Kind: eventlog.Preempt, Job: "a"})
	s.Emit(eventlog.Event{T: 2000, Kind: eventlog.Start, Job: "a", Alloc: []string{"n0/0"}})
	s.Emit(eventlog.Event{T: 3000, Kind: eventlog.Finish, Job: "a"})
	s.Emit(eventlog.Event{T: 0, Kind: eventlog.Submit, Job: "b"})
	s.Emit(eventlog.Event{T: 5000, Kind: eventlog.Finish, Job: "b"})
	_ = w.Close()
	if strings.Count(log.String(), "\n") != 7 {
		t.Errorf("events not forwarded:\n%s", log.String())
	}
	recs := []metrics.JobRecord{{ID: "a", Finish: 3000, Preemptions: 1}, {ID: "b", Finish: 5000}}
	got := s.Timelines(recs, nil, 1)
	if len(got) != 1 || got[0].Job != "b" {
		t.Errorf("one timeline: %+v, want b (the longest JCT)", got)
	}
	got = s.Timelines(recs, nil, 5)
	if len(got) != 2 || got[1].Job != "a" || len(got[1].Events) != 5 || got[1].Events[1].GPUs != 2 {
		t.Errorf("timelines %+v", got)
	}
	if got := s.Timelines(recs, []string{"a", "zz"}, 5); len(got) != 1 || got[0].Job != "a" {
		t.Errorf("named timelines %+v", got)
	}
}

func TestWriteRunsComparison(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	if err := WriteRuns(dir, "cmp", testRuns()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{IndexFile, SummariesFile, "fifo/" + IndexFile, "fifo/" + JobsFile, "las/" + SummaryFile, "las/" + JCTCDFFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	runs := testRuns()
	runs[1].Name = "fifo"
	if err := WriteRuns(filepath.Join(t.TempDir(), "dup"), "dup", runs); err == nil || !strings.Contains(err.Error(), "share the directory") {
		t.Errorf("two runs named alike: %v", err)
	}
	for in, want := range map[string]string{"fifo+hetero": "fifo+hetero", "a/b": "a_b", "..": "_..", "": "run"} {
		if got := RunDir(in); got != want {
			t.Errorf("RunDir(%q) = %q, want %q", in, got, want)
		}
	}
}
