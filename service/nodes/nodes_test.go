package nodes

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

func gpus(typ string, mem int, n int) []api.GPU {
	out := make([]api.GPU, n)
	for i := range out {
		out[i] = api.GPU{Index: i * 2, Type: typ, MemMiB: mem}
	}
	return out
}

// TestCluster: three ready nodes given out of order become a cluster
// sorted by name, one GPU type per kind (the catalog's v100, an unknown
// type with the smallest memory reported); a requested resource no node
// declares is modelled with zero capacity on the first node.
func TestCluster(t *testing.T) {
	if c, idx, err := Cluster(nil, nil); c != nil || idx != nil || err != nil {
		t.Fatalf("Cluster(nil) = %v, %v, %v; want nothing", c, idx, err)
	}
	b := New("b", "", gpus("x1", 4000, 2), model.Resources{model.ResourceCPU: 8000})
	a := New("a", "", gpus("v100", 16384, 4), nil)
	c2 := New("c", "", append(gpus("x1", 3000, 1), api.GPU{Index: 9, Type: "x1"}), nil)
	c, idx, err := Cluster([]*Node{b, c2, a}, map[string]bool{model.ResourceCPU: true, "fpga": true})
	if err != nil {
		t.Fatal(err)
	}
	if idx["a"] != 0 || idx["b"] != 1 || idx["c"] != 2 || len(c.Nodes) != 3 {
		t.Fatalf("indices %v, nodes %+v", idx, c.Nodes)
	}
	if len(c.Types) != 2 || c.Types[0].Name != "v100" || c.Types[1] != (model.GPUType{Name: "x1", MemMiB: 3000, TFLOPS: 1}) {
		t.Errorf("types %+v", c.Types)
	}
	if c.Nodes[0].Capacity["fpga"] != 0 || len(c.Nodes[0].Capacity) != 1 {
		t.Errorf("first node's capacity %v, want fpga: 0 only (cpu is declared by b)", c.Nodes[0].Capacity)
	}
	if got := GPUType("x2", []*Node{New("d", "", []api.GPU{{Type: "x2"}}, nil)}); got.MemMiB != math.MaxInt32 {
		t.Errorf("GPUType of a type without memory = %+v, want memory unchecked", got)
	}
}

func TestNode(t *testing.T) {
	n := New("n0", "", gpus("v100", 16384, 2), model.Resources{model.ResourceCPU: 4000})
	if n.Pos(2) != 1 || n.Pos(1) != -1 || n.MasterAddr() != "n0" {
		t.Fatalf("Pos(2) = %d, Pos(1) = %d, MasterAddr = %q", n.Pos(2), n.Pos(1), n.MasterAddr())
	}
	n.Addr, n.Ready, n.Version = "10.0.0.1", true, 7
	r2, r1 := api.ReplicaID("j2", 1, 0), api.ReplicaID("j1", 1, 1)
	n.Work[r2], n.Work[r1] = api.Replica{ID: r2}, api.Replica{ID: r1}
	n.Removed[api.ReplicaID("j3", 1, 0)] = Removal{Job: "j3", At: 6}
	w := n.Snapshot()
	if w.Version != 7 || len(w.Replicas) != 2 || w.Replicas[0].ID != r1 {
		t.Errorf("Snapshot = %+v, want version 7, replicas by ID", w)
	}
	v := n.View(1)
	if v.State != api.NodeReady || v.GPUsUsed != 1 || v.Capacity["cpu"] != "4" || n.MasterAddr() != "10.0.0.1" {
		t.Errorf("View = %+v", v)
	}
	if fmt.Sprint(v.Replicas) != "[j1/1 j2/0 j3/0]" {
		t.Errorf("View's replicas %v, want [j1/1 j2/0 j3/0] (the removed one too)", v.Replicas)
	}
	if r := n.Record(); r.Down || r.Addr != "10.0.0.1" {
		t.Errorf("Record of a ready node = %+v", r)
	}
	n.Ready = false
	if r := n.Record(); !r.Down {
		t.Errorf("Record of a down node = %+v, want down", r)
	}
	n.Pending = true
	if r := n.Record(); r.Down {
		t.Errorf("Record of a pending node = %+v, want not down", r)
	}
}

// TestClusterView: a ready node of 4 v100s with 3 held and a reading of
// its GPUs (100 W + 50 W), a down node of 2 v100s with a BMC reading (not
// counted: it is down) and a ready node of one k80 with a BMC reading of
// 300 W.
func TestClusterView(t *testing.T) {
	a, b, c := New("a", "", gpus("v100", 16384, 4), nil), New("b", "", gpus("v100", 16384, 2), nil), New("c", "", gpus("k80", 12000, 1), nil)
	a.Ready, c.Ready = true, true
	at := time.Unix(100, 0)
	usage := map[string]Usage{
		"a": {Used: 3, Last: &api.PowerReading{At: at, GPUs: []api.GPUPower{{Watts: 100}, {Watts: 50}}}},
		"b": {Last: &api.PowerReading{At: at, NodeW: 900}},
		"c": {Last: &api.PowerReading{At: at, NodeW: 300, GPUs: []api.GPUPower{{Watts: 200}}}},
	}
	jobs := map[api.State]int{api.Running: 2}
	v := ClusterView([]*Node{a, b, c}, func(n *Node) Usage { return usage[n.Name] }, jobs)
	if v.PowerW != 450 || v.Jobs[api.Running] != 2 || len(v.Nodes) != 3 {
		t.Fatalf("view %+v, want 450 W, 2 running jobs, 3 nodes", v)
	}
	if n := v.Nodes[0]; n.Load != 0.75 || *n.PowerW != 150 || !n.PowerAt.Equal(at) {
		t.Errorf("node a = %+v", n)
	}
	if n := v.Nodes[1]; n.Load != 0 || n.PowerW != nil {
		t.Errorf("down node b = %+v, want no load nor power", n)
	}
	want := []api.TypeView{{Type: "k80", GPUs: 1, Free: 1}, {Type: "v100", GPUs: 6, Busy: 3, Free: 1, Down: 2}}
	if fmt.Sprint(v.Types) != fmt.Sprint(want) {
		t.Errorf("types %+v, want %+v", v.Types, want)
	}
}

func TestUsedResources(t *testing.T) {
	n := New("a", "", gpus("v100", 16384, 1), model.Resources{model.ResourceCPU: 8000})
	c, _, err := Cluster([]*Node{n}, map[string]bool{model.ResourceMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	used := make(model.Vec, len(c.Resources()))
	got := UsedResources(n, c, used)
	if len(got) != 1 || got[model.ResourceCPU] != 0 {
		t.Errorf("nothing held: %v, want cpu 0 only (declared)", got)
	}
	for i, name := range c.Resources() {
		if name == model.ResourceMemory {
			used[i] = 1 << 30
		}
	}
	if got := UsedResources(n, c, used); got[model.ResourceMemory] != 1<<30 || len(got) != 2 {
		t.Errorf("memory held: %v", got)
	}
}

// TestWork: a bump gives the work a new version and wakes a waiting
// long-poll; the applied version only moves forward within the node's
// versions; acknowledging a new exit asks for a bump, the same again not.
func TestWork(t *testing.T) {
	n := New("n0", "", gpus("v100", 16384, 1), nil)
	changed := n.Changed
	done := make(chan struct{})
	go func() {
		Wait(context.Background(), changed, nil, time.Minute)
		close(done)
	}()
	n.Bump(5)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a bump did not wake the long-poll")
	}
	if n.Version != 5 || n.Changed == changed {
		t.Fatalf("after a bump: version %d, the same channel %t", n.Version, n.Changed == changed)
	}
	for _, v := range []int64{4, 6, 3} { // 6 is beyond the node's version
		n.NoteApplied(v)
	}
	if n.Applied != 4 {
		t.Errorf("applied %d, want 4", n.Applied)
	}
	if !n.SetAcked([]string{"a"}) || n.SetAcked([]string{"a"}) || n.SetAcked(nil) {
		t.Error("SetAcked: want a bump for a new acknowledgement only")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Wait(ctx, n.Changed, nil, time.Minute) // returns: ctx ended
	stopped := make(chan struct{})
	close(stopped)
	Wait(context.Background(), n.Changed, stopped, time.Minute) // returns: stopped
}
