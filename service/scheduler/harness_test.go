package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// harness runs a scheduler on a real bbolt store in a temporary directory,
// with its scheduling loop, and drives it through its exported API, as a
// transport does (package server's tests drive the same over HTTP).
type harness struct {
	t   testing.TB
	dir string
	cfg func(*settings.Config)
	st  *store.Bolt
	s   *Scheduler
	// stopLoop ends Run; done is closed when it has returned.
	stopLoop context.CancelFunc
	done     chan struct{}
}

// newHarness starts a scheduler; cfg may change its configuration.
func newHarness(t testing.TB, cfg func(*settings.Config)) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), cfg: cfg}
	h.start()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) start() {
	h.t.Helper()
	st, err := store.OpenBolt(settings.StorePath(h.dir), store.BoltOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := settings.Config{Store: st, DataDir: h.dir, Round: 20 * time.Millisecond, Coalesce: time.Millisecond}
	if h.cfg != nil {
		h.cfg(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.st, h.s, h.stopLoop, h.done = st, s, cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		_ = s.Run(ctx)
	}()
}

func (h *harness) stop() {
	if h.s == nil {
		return
	}
	h.stopLoop()
	<-h.done
	if err := h.s.Close(); err != nil {
		h.t.Error(err)
	}
	if err := h.st.Close(); err != nil {
		h.t.Error(err)
	}
	h.s = nil
}

// restart stops the scheduler and starts a new one on the same data.
func (h *harness) restart() {
	h.stop()
	h.start()
}

// submit submits a JSON spec (decoded strictly, as the REST API does) and
// returns the job.
func (h *harness) submit(spec string) api.Job {
	h.t.Helper()
	sp, err := api.DecodeSpec([]byte(spec))
	if err != nil {
		h.t.Fatalf("spec %s: %v", spec, err)
	}
	j, err := h.s.Submit(context.Background(), sp)
	if err != nil {
		h.t.Fatalf("submit %s: %v", spec, err)
	}
	return j
}

// job returns a job by id.
func (h *harness) job(id string) api.Job {
	h.t.Helper()
	j, err := h.s.Job(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// cancel cancels job id, which must not have ended.
func (h *harness) cancel(id string) api.Job {
	h.t.Helper()
	j, err := h.s.Cancel(id)
	if err != nil {
		h.t.Fatalf("cancel %s: %v", id, err)
	}
	return j
}

// waitJob waits until job id satisfies ok.
func (h *harness) waitJob(id string, what string, ok func(api.Job) bool) api.Job {
	h.t.Helper()
	return agenttest.Poll(h.t, 10*time.Second, "job "+id+": "+what, func() api.Job { return h.job(id) }, ok)
}

// waitState waits until job id is in state st.
func (h *harness) waitState(id string, st api.State) api.Job {
	h.t.Helper()
	return h.waitJob(id, string(st), func(j api.Job) bool { return j.State == st })
}

// stored returns the record of a job in the store (ok false if absent).
func (h *harness) stored(id string) (record, bool) {
	h.t.Helper()
	kv, ok, err := h.st.Get(context.Background(), ledger.JobKey(id))
	if err != nil {
		h.t.Fatal(err)
	}
	var r record
	if ok {
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			h.t.Fatal(err)
		}
	}
	return r, ok
}

// testAgent speaks the agent protocol through the scheduler's methods.
type testAgent struct {
	h    *harness
	name string
	gpus []api.GPU
	// capacity is what it registers besides GPUs (api.Register.Capacity).
	capacity map[string]string
	// applied is the version of the last work it got.
	applied int64
}

func (h *harness) agent(name, typ string, n int) *testAgent {
	return &testAgent{h: h, name: name, gpus: agenttest.GPUs(typ, n)}
}

// register registers the node with the replicas it reports.
func (a *testAgent) register(reps ...api.ReplicaStatus) {
	a.h.t.Helper()
	reply, err := a.h.s.Register(api.Register{Name: a.name, Addr: a.name + ".example", GPUs: a.gpus, Replicas: reps,
		Capacity: a.capacity})
	if err != nil {
		a.h.t.Fatalf("register %s: %v", a.name, err)
	}
	if reply.HeartbeatS <= 0 {
		a.h.t.Fatalf("register: heartbeat %v", reply.HeartbeatS)
	}
}

// work long-polls once, waiting at most wait.
func (a *testAgent) work(after int64, wait time.Duration) api.Work {
	a.h.t.Helper()
	w, err := a.h.s.Work(context.Background(), a.name, after, wait)
	if err != nil {
		a.h.t.Fatalf("work of %s: %v", a.name, err)
	}
	a.applied = w.Version
	return w
}

// waitWork polls until the work satisfies ok.
func (a *testAgent) waitWork(what string, ok func(api.Work) bool) api.Work {
	a.h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	after := int64(0)
	for {
		w := a.work(after, time.Second)
		if ok(w) {
			return w
		}
		if time.Now().After(deadline) {
			a.h.t.Fatalf("node %s: timed out waiting for work %s; got %+v", a.name, what, w)
		}
		after = w.Version
	}
}

// status reports replicas with the applied version.
func (a *testAgent) status(reps ...api.ReplicaStatus) api.Work {
	a.h.t.Helper()
	return a.statusPower(nil, reps...)
}

// statusPower reports replicas and a power reading with the applied
// version.
func (a *testAgent) statusPower(p *api.PowerReading, reps ...api.ReplicaStatus) api.Work {
	a.h.t.Helper()
	w, err := a.h.s.Status(a.name, api.Status{Replicas: reps, Version: a.applied, Power: p})
	if err != nil {
		a.h.t.Fatalf("status of %s: %v", a.name, err)
	}
	return w
}

// node returns the named node as Nodes shows it.
func (h *harness) node(name string) api.Node {
	h.t.Helper()
	for _, n := range h.s.Nodes() {
		if n.Name == name {
			return n
		}
	}
	h.t.Fatalf("no node %s in %+v", name, h.s.Nodes())
	return api.Node{}
}

// wantKind fails unless err is of kind (ErrNotFound, ErrConflict, ...).
func wantKind(t testing.TB, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %v, want %v", what, err, kind)
	}
}
