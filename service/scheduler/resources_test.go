package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// agentWith is h.agent with a capacity besides GPUs, as
// "cpu=8,memory=16Gi".
func (h *harness) agentWith(name, typ string, n int, capacity string) *testAgent {
	h.t.Helper()
	r, err := config.ParseResourceList(capacity)
	if err != nil {
		h.t.Fatal(err)
	}
	a := h.agent(name, typ, n)
	a.capacity = api.FormatResources(r)
	return a
}

// runOn waits until job id runs, starts its replicas on the agents that
// got them and returns the job's nodes.
func runOn(t *testing.T, h *harness, id string, agents ...*testAgent) []string {
	t.Helper()
	j := h.waitState(id, api.Running)
	nodes := map[string]bool{}
	for _, g := range j.Alloc {
		node, _, _ := strings.Cut(g, "/")
		nodes[node] = true
	}
	var out []string
	for _, a := range agents {
		if nodes[a.name] {
			r := agenttest.FindReplica(a.waitWork("with "+id, agenttest.HasReplica(id)), id)
			a.status(agenttest.Running(*r))
			out = append(out, a.name)
		}
	}
	return out
}

// TestRequestsStored: a job's cpus, memory and resources are in its view
// and its record, per GPU as quantities, and survive a restart; a job
// without them has none.
func TestRequestsStored(t *testing.T) {
	h := newHarness(t, nil)
	h.agentWith("a", "v100", 2, "cpu=16,memory=64Gi,rdma/hca=2").register()
	j := h.submit(`{"command":["x"],"gpus":2,"cpus":"1.5","memory":"8Gi","resources":{"rdma/hca":1}}`)
	plain := h.submit(`{"command":["x"],"gpus":1}`)
	want := map[string]string{"cpu": "1500m", "memory": "8Gi", "rdma/hca": "1"}
	if rec, _ := h.stored(j.ID); !maps.Equal(j.Requests, want) || !maps.Equal(rec.Requests, want) {
		t.Fatalf("requests: view %v, record %v; want %v", j.Requests, rec.Requests, want)
	}
	if ev := h.job(j.ID).Events[0].Message; !strings.Contains(ev, "each with cpu=1500m,memory=8Gi,rdma/hca=1") {
		t.Errorf("submitted event %q", ev)
	}
	if rec, _ := h.stored(plain.ID); rec.Requests != nil || plain.Requests != nil {
		t.Errorf("a job without requests: %v, %v", plain.Requests, rec.Requests)
	}
	h.restart()
	if got := h.job(j.ID); !maps.Equal(got.Requests, want) {
		t.Errorf("after a restart: %v", got.Requests)
	}
	h.s.mu.Lock()
	got := h.s.tab.Active[j.ID].Model.Spec.Requests
	h.s.mu.Unlock()
	if !got.Equal(model.Resources{"cpu": 1500, "memory": 8 << 30, "rdma/hca": 1}) {
		t.Errorf("model requests after a restart: %v", got)
	}
}

// TestRequestsKeepJobsApart: nodes a (8 CPUs) and b (6 CPUs) with two
// GPUs each; three 1-GPU jobs of 5 CPUs: two run, one per node, the third
// waits naming cpu although GPUs are free, and runs when one ends. Nodes
// show what is used.
func TestRequestsKeepJobsApart(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.agentWith("a", "v100", 2, "cpu=8,memory=32Gi"), h.agentWith("b", "v100", 2, "cpu=6,memory=32Gi")
	a.register()
	b.register()
	const spec = `{"command":["x"],"gpus":1,"cpus":5,"memory":"1Gi"}`
	j1, j2 := h.submit(spec), h.submit(spec)
	n1, n2 := runOn(t, h, j1.ID, a, b), runOn(t, h, j2.ID, a, b)
	if len(n1) != 1 || len(n2) != 1 || n1[0] == n2[0] {
		t.Fatalf("jobs of 5 CPUs on %v and %v, want one per node", n1, n2)
	}
	j3 := h.submit(spec)
	q := h.waitJob(j3.ID, "a reason naming cpu", func(j api.Job) bool { return strings.Contains(j.Reason, "cpu") })
	if q.State != api.Queued {
		t.Fatalf("third job: %+v", q)
	}
	for _, n := range []string{"a", "b"} {
		v := h.node(n)
		if v.Used["cpu"] != "5" || v.Used["memory"] != "1Gi" || v.Capacity["cpu"] == "" {
			t.Errorf("node %s: capacity %v, used %v; want 5 CPUs and 1Gi used", n, v.Capacity, v.Used)
		}
	}
	h.cancel(j1.ID)
	first := a
	if n1[0] == "b" {
		first = b
	}
	first.waitWork("without "+j1.ID, agenttest.NoReplica(j1.ID))
	first.status() // stopped: gone
	if got := runOn(t, h, j3.ID, a, b); len(got) != 1 || got[0] != n1[0] {
		t.Errorf("third job on %v, want %s (the node the first left)", got, n1[0])
	}
}

// TestSubmitRefusesOversized: a job whose GPUs ask more of a resource
// than any registered node has is refused naming the field, the resource
// and the largest node; before any node registers, or for a GPU type no
// node has, it is accepted.
func TestSubmitRefusesOversized(t *testing.T) {
	h := newHarness(t, nil)
	early := h.submit(`{"command":["x"],"gpus":1,"cpus":64}`)
	if early.State != api.Queued {
		t.Fatalf("before any node: %+v", early)
	}
	h.agentWith("small", "v100", 2, "cpu=4,memory=16Gi").register()
	h.agentWith("big", "v100", 4, "cpu=8,memory=64Gi").register()
	h.agentWith("old", "k80", 4, "cpu=32").register()
	for _, c := range []struct{ spec, field, msg string }{
		{`{"command":["x"],"gpus":1,"cpus":16,"gpu_type":"v100"}`, "cpus", "one replica asks 16 of cpu, the largest v100 node big has 8"},
		{`{"command":["x"],"gpus":1,"memory":"128Gi"}`, "memory", "asks 128Gi of memory, the largest v100 node big has 64Gi"},
		{`{"command":["x"],"gpus":1,"resources":{"rdma/hca":1}}`, "resources.rdma/hca", "1 of rdma/hca, the largest v100 node big has 0"},
	} {
		sp, err := api.DecodeSpec([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.s.Submit(context.Background(), sp)
		fe, ok := errors.AsType[*api.FieldError](err)
		if !ok || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) || !strings.Contains(fe.Message, "no registered node") {
			t.Errorf("submit %s: %v, want a field error on %s containing %q", c.spec, err, c.field, c.msg)
		}
	}
	// Fits a k80 node (any type), or a GPU type no node has: accepted.
	h.submit(`{"command":["x"],"gpus":1,"cpus":16}`)
	h.submit(`{"command":["x"],"gpus":1,"cpus":64,"gpu_type":"a100"}`)
	// Fits one GPU's share, not the whole job on one node: more nodes may
	// come, accepted (it may span nodes).
	h.submit(`{"command":["x"],"gpus":4,"cpus":4,"gpu_type":"v100"}`)
	if n := len(h.s.Jobs()); n != 4 {
		t.Errorf("%d jobs stored, want 4 (the refused ones are not)", n)
	}
}

// TestCapacityRegistration: a node's capacity is validated, stored and
// shown; a node that comes back smaller keeps its running job, which is
// still charged there, so that no other job is put on what it holds.
func TestCapacityRegistration(t *testing.T) {
	h := newHarness(t, nil)
	for capa, field := range map[string]string{"cpu=lots": "capacity.cpu", "pods=110": "capacity.pods", "bad name=1": "capacity.bad name"} {
		name, v, _ := strings.Cut(capa, "=")
		_, err := h.s.Register(api.Register{Name: "x", GPUs: agenttest.GPUs("v100", 1), Capacity: map[string]string{name: v}})
		if fe, ok := errors.AsType[*api.FieldError](err); !ok || fe.Field != field {
			t.Errorf("register with %s: %v, want an error naming %s", capa, err, field)
		}
	}
	a := h.agentWith("a", "v100", 4, "cpu=8")
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1,"cpus":6}`)
	r := agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	a.status(agenttest.Running(*r))
	a.capacity = map[string]string{"cpu": "4"}
	a.register(agenttest.Running(*r))
	var rec nodeRecord
	kv, _, _ := h.st.Get(context.Background(), nodeKey("a"))
	if err := json.Unmarshal(kv.Value, &rec); err != nil || rec.Capacity["cpu"] != "4" {
		t.Fatalf("stored node %s: %v", kv.Value, err)
	}
	next := h.submit(`{"command":["x"],"gpus":1,"cpus":1}`)
	time.Sleep(100 * time.Millisecond) // rounds of 20 ms
	if got := h.job(j.ID); got.State != api.Running {
		t.Errorf("the running job after its node came back smaller: %+v", got)
	}
	if got := h.job(next.ID); got.State != api.Queued {
		t.Errorf("a job of 1 CPU on a node of 4 whose job holds 6: %s", got.State)
	}
	if v := h.node("a"); v.Capacity["cpu"] != "4" || v.Used["cpu"] != "6" {
		t.Errorf("node: capacity %v, used %v", v.Capacity, v.Used)
	}
	h.restart() // the node is pending: it counts as it was stored
	agenttest.Poll(t, 5*time.Second, "node a of 4 CPUs with 6 used after a restart", func() api.Node { return h.node("a") },
		func(v api.Node) bool { return v.Capacity["cpu"] == "4" && v.Used["cpu"] == "6" })
}

// nodeKey is the store key of node name.
func nodeKey(name string) string { return ledger.NodePrefix + name }

// TestUnmodelledRequestWaits: a stored queued job that asks for a
// resource no ready node declares (its node is gone) is not placed as if
// it asked for nothing; it runs once a node that has it registers. A
// stored job of an older server, without requests, loads and runs.
func TestUnmodelledRequestWaits(t *testing.T) {
	h := newHarness(t, nil)
	h.stop()
	st, err := store.OpenBolt(settings.StorePath(h.dir), store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	hca := ledger.NewRecord("j1", api.JobSpec{Command: []string{"x"}, GPUs: 1}, model.Resources{"rdma/hca": 1}, now)
	old := `{"id":"j2","name":"old","state":"queued","gpus_requested":1,"min_gpus":1,"max_gpus":1,"priority":0,` +
		`"command":["y"],"grace_period_s":30,"alloc":[],"exit_code":null,"submitted_at":"2025-01-01T00:00:00Z",` +
		`"started_at":null,"finished_at":null,"attempt":0}`
	data, _ := ledger.MarshalRecord(&hca)
	for k, v := range map[string][]byte{ledger.JobKey("j1"): data, ledger.JobKey("j2"): []byte(old)} {
		if _, err := st.Put(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	h.start()
	a := h.agentWith("a", "v100", 2, "cpu=8")
	a.register()
	h.waitState("j2", api.Running)
	time.Sleep(100 * time.Millisecond)
	if got := h.job("j1"); got.State != api.Queued || !strings.Contains(got.Reason, "rdma/hca") {
		t.Fatalf("job asking for rdma/hca on a node without it: %s, %q", got.State, got.Reason)
	}
	h.agentWith("b", "v100", 1, "cpu=8,rdma/hca=1").register()
	if got := runOn(t, h, "j1", a); len(got) != 0 {
		t.Errorf("j1 on %v, want b", got)
	}
	if got := h.job("j1"); len(got.Alloc) != 1 || got.Alloc[0] != "b/0" {
		t.Errorf("j1 on %v, want b/0", got.Alloc)
	}
}
