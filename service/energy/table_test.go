package energy

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
)

// TestTable: the job table as World — charges counted on the records
// (measured ones also as power points) and marked unsaved, the jobs in
// order of submission with the default queue, the active jobs' models and
// endpoints.
func TestTable(t *testing.T) {
	tab := jobs.NewTable("")
	add := func(id string, seq int, st api.State, queue string) *jobs.Job {
		j := &jobs.Job{Rec: ledger.Record{Job: api.Job{ID: id, State: st, Queue: queue, Model: "m-" + id, DataEndpoint: "ep-" + id}}, Seq: seq}
		tab.Jobs[id] = j
		if !st.Final() {
			tab.Active[id] = j
		}
		return j
	}
	j2 := add("j2", 2, api.Queued, "")
	add("j1", 1, api.Succeeded, "team")
	var points []string
	w := Table{T: &tab, Queue: "default", Rate: func(string) float64 { return 0 },
		Power: func(id string, joules float64, d time.Duration, at time.Time) {
			points = append(points, id)
		}}
	w.Charge("j2", 3.6e6, true, 0, time.Time{})
	w.Charge("j2", 1.8e6, false, time.Second, time.Time{})
	w.Charge("j1", 3.6e6, true, 0, time.Time{}) // ended: not charged
	if math.Abs(j2.Rec.EnergyKWh-1.5) > 1e-12 || math.Abs(j2.Rec.EnergyModelledKWh-1) > 1e-12 || !tab.Unsaved[j2] || len(tab.Unsaved) != 1 {
		t.Errorf("j2 %v kWh (%v modelled), unsaved %v; want 1.5 (1), j2 only", j2.Rec.EnergyKWh, j2.Rec.EnergyModelledKWh, tab.Unsaved)
	}
	if !slices.Equal(points, []string{"j2"}) {
		t.Errorf("power points %v, want j2's measured one", points)
	}
	got := w.Jobs()
	if len(got) != 2 || got[0].Rec.ID != "j1" || got[0].Queue != "team" || got[1].Queue != "default" || got[1].State != api.Queued {
		t.Errorf("jobs %+v", got)
	}
	if m, e := w.Active(); !slices.Equal(m, []string{"m-j2"}) || !slices.Equal(e, []string{"ep-j2"}) {
		t.Errorf("active %v %v", m, e)
	}
}
