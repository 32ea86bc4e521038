package energy

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// TestJobs: of three jobs (j2 ended after 1 h on 2 GPUs with 0.5 kWh, a
// quarter modelled; j10 runs on 4 v100s since 30 min with 0.2 kWh
// measured; j3 waits), the report lists j2 and j10 in order of submission,
// the replay both by ID with their GPUs and hours, the metrics all three
// by ID.
func TestJobs(t *testing.T) {
	now := time.Unix(10_000, 0)
	l := newLive(t, &now)
	started, ended := now.Add(-30*time.Minute), now.Add(-time.Hour)
	rec := func(id string, st api.State, kwh, mod float64) *ledger.Record {
		r := ledger.NewRecord(id, api.JobSpec{Command: []string{"x"}, GPUs: 1, Name: id}, nil, now.Add(-2*time.Hour))
		r.State, r.EnergyKWh, r.EnergyModelledKWh = st, kwh, mod
		return &r
	}
	j2 := rec("j2", api.Succeeded, 0.5, 0.125)
	j2.Ran = ledger.Ran{Seconds: 3600, GPUs: 2, Type: "v100"}
	j2.FinishedAt = &ended
	j10 := rec("j10", api.Running, 0.2, 0)
	j10.StartedAt, j10.Alloc = &started, []string{"n1/0", "n1/1", "n1/2", "n1/3"}
	j3 := rec("j3", api.Queued, 0, 0)
	w := &fakeWorld{node: Node{Name: "n1", Type: "v100", GPUs: v100s(4), Ready: true}, records: []Job{
		{Rec: j2, State: api.Succeeded, Queue: "default"},
		{Rec: j10, State: api.Running, Queue: "a", GPUType: "v100"},
		{Rec: j3, State: api.Queued, Queue: "default"},
	}}
	use := jobsEnergy(w.Jobs())
	if len(use) != 2 || use[0].ID != "j2" || use[0].ModelledKWh != 0.125 || use[0].Measured || use[1].ID != "j10" ||
		!use[1].Measured || use[1].Queue != "a" {
		t.Errorf("report's jobs %+v", use)
	}
	nodes, jobs := l.ReplayInputs(w, w.Jobs())
	if len(nodes) != 1 || nodes[0].GPUs != 4 || nodes[0].MemMiB != 16384 {
		t.Errorf("replay nodes %+v", nodes)
	}
	if len(jobs) != 2 || jobs[0].ID != "j10" || jobs[0].GPUs != 4 || jobs[0].Seconds != 1800 ||
		jobs[1].ID != "j2" || jobs[1].GPUs != 2 || jobs[1].Seconds != 3600 {
		t.Errorf("replay jobs %+v", jobs)
	}
	uses := jobUses(w.Jobs())
	if len(uses) != 3 || uses[0].ID != "j10" || uses[1].ID != "j2" || uses[1].FinishedAt == nil || uses[2].KWh != 0 {
		t.Errorf("metrics' jobs %+v", uses)
	}
	rep, _, rjobs, _ := l.Prepare(w, "fifo", "pack")
	if len(rep.Jobs) != 2 || rep.JobsKWh != 0.7 || len(rjobs) != 2 {
		t.Errorf("Prepare: report jobs %+v (%v kWh), replay jobs %d", rep.Jobs, rep.JobsKWh, len(rjobs))
	}
}
