package learn

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
)

// TestTable: the job table as online learning reads it — the records and
// replicas of known jobs, the active jobs oldest first with their
// measured rates, no rate before the profiles are loaded, and the
// forecasts' key and inputs without a model.
func TestTable(t *testing.T) {
	tab := jobs.NewTable("")
	for _, c := range []struct {
		id  string
		seq int
		st  api.State
	}{{"j3", 3, api.Running}, {"j1", 1, api.Queued}, {"j2", 2, api.Succeeded}} {
		j := &jobs.Job{Rec: ledger.Record{Job: api.Job{ID: c.id, State: c.st, Attempt: 1}, Replicas: make([]ledger.Replica, 2)}, Seq: c.seq}
		tab.Jobs[c.id] = j
		if !c.st.Final() {
			tab.Active[c.id] = j
		}
	}
	t0 := time.Unix(1000, 0)
	l := &Table{T: &tab, Clock: func() time.Time { return t0 }, Seq: func() int64 { return 3 }, None: "none"}
	if l.Rate("j3") != 0 {
		t.Error("a rate before the profiles are loaded")
	}
	l.ETA = NewETA(quiet())
	l.ETA.Series.Progress("j3", 1, 0, 0, t0)
	l.ETA.Series.Progress("j3", 1, 0, 100, t0.Add(10*time.Second))
	if r, ok := l.Replicas("j2"); !ok || len(r) != 2 {
		t.Errorf("replicas of j2: %v %v", r, ok)
	}
	if _, ok := l.Replicas("j9"); ok {
		t.Error("replicas of an unknown job")
	}
	if rec, ok := l.Job("j1"); !ok || rec != &tab.Jobs["j1"].Rec {
		t.Error("Job j1: not its record")
	}
	live := l.Jobs()
	if len(live) != 2 || live[0].Rec.ID != "j1" || live[1].Rec.ID != "j3" || live[1].Seq != 3 {
		t.Fatalf("live jobs %+v, want j1 then j3", live)
	}
	if live[1].Rate != 10 || live[0].Rate != 0 {
		t.Errorf("measured rates %v and %v, want 0 and 10 (100 steps in 10 s)", live[0].Rate, live[1].Rate)
	}
	if in := l.Inputs(l.Now()); in.Table != nil || in.None != "none" || !in.Now.Equal(t0) {
		t.Errorf("inputs without a model %+v", in)
	}
}
