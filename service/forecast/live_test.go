package forecast

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// liveJobs are three active jobs: A runs on GPU 0 of the snapshot's
// cluster with a time limit of 60 s started 10 s ago, B is being stopped
// (grace 30 s), C waits with a time limit of 120 s.
func liveJobs(t *testing.T, now time.Time) []Live {
	t.Helper()
	started := now.Add(-10 * time.Second)
	mk := func(seq int, id string, st api.State) Live {
		rec := &ledger.Record{}
		rec.ID, rec.State, rec.GPUsRequested = id, st, 1
		mj := model.NewJob(model.JobSpec{ID: id, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, seq, -1, 0)
		if st == api.Running {
			rec.StartedAt = &started
			mj.State, mj.Alloc = model.Running, []model.GPU{{Node: 0, Index: int32(seq)}}
		}
		return Live{Rec: rec, Job: mj, Seq: seq}
	}
	a, b, c := mk(0, "A", api.Running), mk(1, "B", api.Running), mk(2, "C", api.Queued)
	a.Rec.TimeLimitS, c.Rec.TimeLimitS = 60, 120
	b.Rec.Stopping, b.Rec.GracePeriodS = "preempt", 30
	return []Live{a, b, c}
}

func TestKey(t *testing.T) {
	now := time.Unix(1000, 0)
	jobs := liveJobs(t, now)
	nodes := []LiveNode{{Name: "n0", Ready: true, GPUs: 2}, {Name: "n1", GPUs: 4}}
	k := Key(3, jobs, nodes)
	if got := Key(3, []Live{jobs[2], jobs[0], jobs[1]}, []LiveNode{nodes[1], nodes[0]}); got != k {
		t.Fatalf("Key depends on the order: %x != %x", got, k)
	}
	measured := liveJobs(t, now)
	measured[0].Rate = 2
	for name, other := range map[string]uint64{
		"a submission":    Key(4, jobs, nodes),
		"a measured rate": Key(3, measured, nodes),
		"a node down":     Key(3, jobs, []LiveNode{{Name: "n0", GPUs: 2}, nodes[1]}),
		"a job fewer":     Key(3, jobs[:2], nodes),
	} {
		if other == k {
			t.Errorf("Key ignores %s", name)
		}
	}
	slower := liveJobs(t, now)
	slower[0].Rate = 1
	if Key(3, measured, nodes) != Key(3, slower, nodes) {
		t.Error("Key follows a measured rate's moves")
	}
}

func TestTake(t *testing.T) {
	snap := snapshot(t)
	now := time.UnixMilli(int64(snap.Now))
	var h History
	f, s := Take(Inputs{Now: now, History: &h, Names: recipe.Defaults(), None: "no node"}, liveJobs(t, now), nil)
	if s != nil || f.None != "no node" {
		t.Fatalf("Take without a table = %+v, %+v; want no snapshot, None", f, s)
	}
	estimated := map[string]Length{}
	in := Inputs{Now: now, History: &h, Names: recipe.Defaults(), Options: recipe.DefaultOptions(), Cluster: snap.Cluster, Table: snap.Table}
	jobs := liveJobs(t, now)
	jobs = append(jobs, Live{Rec: &ledger.Record{}, Seq: 3}) // no model job: left out
	_, s = Take(in, jobs, func(id string, l Length) { estimated[id] = l })
	if s == nil || len(s.Jobs) != 3 {
		t.Fatalf("Take = %+v, want 3 jobs", s)
	}
	want := []struct {
		kind      Kind
		remaining time.Duration
	}{{KindTimeLimit, 50 * time.Second}, {KindTimeLimit, 30 * time.Second}, {KindTimeLimit, 120 * time.Second}}
	for i, w := range want {
		fj := s.Jobs[i]
		if fj.Job.Seq != i || fj.Length.Kind != w.kind || fj.Length.Remaining != w.remaining {
			t.Errorf("job %d = seq %d, %+v; want %s, %s left", i, fj.Job.Seq, fj.Length, w.kind, w.remaining)
		}
	}
	if len(estimated) != 1 || estimated["A"].Remaining != 50*time.Second {
		t.Errorf("estimated %+v, want A only (B is being stopped, C waits)", estimated)
	}
	if jobs[0].Job.Seq != 0 || &jobs[0].Job.Alloc[0] == &s.Jobs[0].Job.Alloc[0] {
		t.Error("Take changed or shares the live model job")
	}
	odd := liveJobs(t, now)[0]
	odd.Job.State, odd.Job.Alloc = model.Waiting, nil
	if _, ok := JobOf(odd, snap.Table, snap.Cluster, &h, now); ok {
		t.Error("JobOf took a job running in its record and waiting in the model")
	}
}
