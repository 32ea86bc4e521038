package audit_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/audit"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
)

// TestWriterAndMetricsContract holds the audit against the simulator's own
// writer and summary: a log written by eventlog.Writer must parse, and the
// figures metrics.Summarize gives for the same run must agree with the log.
// Only this external test imports them; package audit itself does not.
func TestWriterAndMetricsContract(t *testing.T) {
	s := func(sec float64) model.Time { return model.FromSeconds(sec) }
	gpu := func(id, node, typ string) eventlog.GPUInfo {
		return eventlog.GPUInfo{ID: id, Node: node, Type: typ, MemMiB: 16384}
	}
	req := func(n, lo, hi int, typ string) *eventlog.Request {
		return &eventlog.Request{GPUs: n, MinGPUs: lo, MaxGPUs: hi, GPUType: typ, Model: "ResNet-50 (batch size 64)", Steps: 100}
	}
	events := []eventlog.Event{
		{T: 0, Kind: eventlog.Cluster, GPUs: []eventlog.GPUInfo{
			gpu("n0/0", "n0", "v100"), gpu("n0/1", "n0", "v100"), gpu("n1/0", "n1", "k80"), gpu("n1/1", "n1", "k80")}},
		{T: 0, Kind: eventlog.Submit, Job: "j1", Request: req(2, 1, 4, "")},
		{T: 0, Kind: eventlog.Start, Job: "j1", Alloc: []string{"n0/0", "n0/1"}},
		{T: s(5), Kind: eventlog.Submit, Job: "j2", Request: &eventlog.Request{GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: s(100), GPUType: "k80"}},
		{T: s(5), Kind: eventlog.Start, Job: "j2", Alloc: []string{"n1/0"}},
		{T: s(10), Kind: eventlog.Submit, Job: "j3", Request: req(4, 4, 4, "")},
		{T: s(10), Kind: eventlog.Submit, Job: "j4", Request: req(8, 8, 8, "")},
		{T: s(10), Kind: eventlog.Reject, Job: "j4", Reason: "too large"},
		{T: s(20), Kind: eventlog.Resize, Job: "j1", Alloc: []string{"n0/0"}},
		{T: s(30), Kind: eventlog.Preempt, Job: "j2"},
		{T: s(40), Kind: eventlog.Start, Job: "j2", Alloc: []string{"n1/1"}},
		{T: s(50), Kind: eventlog.Finish, Job: "j1"},
		{T: s(60.5), Kind: eventlog.Finish, Job: "j2"},
		{T: s(60.5), Kind: eventlog.Start, Job: "j3", Alloc: []string{"n0/0", "n0/1", "n1/0", "n1/1"}},
		{T: s(90), Kind: eventlog.Submit, Job: "j5", Request: req(1, 1, 1, "")},
		{T: s(95), Kind: eventlog.Submit, Job: "j6", Request: req(4, 4, 4, "")},
		{T: s(100.25), Kind: eventlog.Finish, Job: "j3"},
		{T: s(100.25), Kind: eventlog.Start, Job: "j5", Alloc: []string{"n0/0"}},
		{T: s(100.25), Kind: eventlog.Unfinished, Job: "j5", Reason: "running"},
		{T: s(100.25), Kind: eventlog.Unfinished, Job: "j6", Reason: "waiting"},
	}
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf)
	for _, e := range events {
		w.Emit(e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := audit.Check(&buf, "written.jsonl")
	if err != nil {
		t.Fatal(err)
	}

	recs := []metrics.JobRecord{
		{ID: "j1", Submit: 0, Start: 0, Finish: s(50), GPUs: 2, Resizes: 1, GPUTime: s(70)},
		{ID: "j2", Submit: s(5), Start: s(5), Finish: s(60.5), GPUs: 1, Preemptions: 1, GPUTime: s(45.5)},
		{ID: "j3", Submit: s(10), Start: s(60.5), Finish: s(100.25), GPUs: 4, GPUTime: s(159)},
		{ID: "j4", Submit: s(10), Start: -1, Finish: -1, Rejected: true, Reason: "too large"},
		{ID: "j5", Submit: s(90), Start: s(100.25), Finish: -1, GPUs: 1, Reason: "running"},
		{ID: "j6", Submit: s(95), Start: -1, Finish: -1, Reason: "waiting"},
	}
	summary, err := json.Marshal(metrics.Summarize(4, recs))
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.Compare(got, summary); err != nil {
		t.Errorf("%v\nsummary: %s", err, summary)
	}
}
