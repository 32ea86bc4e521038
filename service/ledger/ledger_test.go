package ledger

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// TestRecord: a new record's first event is its submission and stays when
// old events are dropped; a clone's replicas are its own; the membership
// and master are the member replicas'.
func TestRecord(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRecord("j1", api.JobSpec{Command: []string{"x"}, GPUs: 2}, nil, now)
	if r.Name != "j1" || len(r.Events) != 1 || r.Events[0].Event != "submitted" {
		t.Fatalf("new record %+v", r)
	}
	for i := range MaxEvents + 5 {
		r.Event(now, "e", "%d", i)
	}
	if len(r.Events) != MaxEvents || r.Events[0].Event != "submitted" || r.Events[MaxEvents-1].Message != "104" {
		t.Errorf("%d events, first %q, last %q", len(r.Events), r.Events[0].Event, r.Events[len(r.Events)-1].Message)
	}
	r.Replicas = []Replica{{ID: "j1.1.0", Node: "a", GPUs: []int{0}, Lost: true}, {ID: "j1.1.1", Node: "b", GPUs: []int{1, 2}}}
	c := r.Clone()
	c.Replicas[1].Done = true
	if r.Replicas[1].Done {
		t.Error("a clone shares its replicas")
	}
	if r.Master() != "b" || r.RankZero() != 1 || r.LiveGPUs() != 2 || r.ReplicaIndex("j1.1.1") != 1 || r.AllDone() {
		t.Errorf("master %q, rank zero %d, live GPUs %d", r.Master(), r.RankZero(), r.LiveGPUs())
	}
	if m := r.Membership(); len(m.Hosts) != 1 || m.Hosts[0].Name != "b" || !slices.Equal(m.Hosts[0].GPUs, []int{1, 2}) {
		t.Errorf("membership %+v", m)
	}
}

// TestRead: what a follower reads back from the store: the jobs in order
// of submission, a node with the GPUs its running jobs hold.
func TestRead(t *testing.T) {
	ctx, now := context.Background(), time.Unix(1000, 0)
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "store.db"), store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ops []store.Op
	for _, id := range []string{"j10", "j2"} {
		r := NewRecord(id, api.JobSpec{Command: []string{"x"}, GPUs: 1}, nil, now)
		if id == "j2" {
			r.State = api.Running
			r.Replicas = []Replica{{ID: "j2.1.0", Node: "n1", GPUs: []int{3}}}
		}
		data, err := MarshalRecord(&r)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, store.OpPut(JobKey(id), data))
	}
	data, err := MarshalNode(Node{Name: "n1", GPUs: []api.GPU{{Index: 3, Type: "v100"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Txn(ctx, append(ops, store.OpPut(NodePrefix+"n1", data))...); err != nil {
		t.Fatal(err)
	}
	jobs, err := ReadJobs(ctx, st)
	if err != nil || len(jobs) != 2 || jobs[0].ID != "j2" || jobs[1].ID != "j10" || jobs[0].Events != nil {
		t.Fatalf("ReadJobs = %+v, %v; want j2, j10 without events", jobs, err)
	}
	if running, _ := ReadJobs(ctx, st, api.Running); len(running) != 1 {
		t.Errorf("running jobs %+v", running)
	}
	nodes, err := ReadNodes(ctx, st)
	if err != nil || len(nodes) != 1 || nodes[0].GPUsUsed != 1 || !slices.Equal(nodes[0].Replicas, []string{"j2/0"}) {
		t.Errorf("ReadNodes = %+v, %v", nodes, err)
	}
	if _, ok, err := ReadRecord(ctx, st, "j3"); ok || err != nil {
		t.Errorf("ReadRecord of a missing job: %v, %v", ok, err)
	}
}
