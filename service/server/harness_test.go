package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// harness runs a server on a real bbolt store in a temporary directory,
// behind an httptest server, with its scheduling loop, and drives it over
// HTTP.
type harness struct {
	t      testing.TB
	dir    string
	cfg    func(*Config)
	st     *store.Bolt
	s      *Server
	http   *httptest.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// newHarness starts a server; cfg may change its configuration.
func newHarness(t testing.TB, cfg func(*Config)) *harness {
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
	cfg := Config{Config: settings.Config{Store: st, DataDir: h.dir, Round: 20 * time.Millisecond, Coalesce: time.Millisecond},
		PollTimeout: 5 * time.Second}
	if h.cfg != nil {
		h.cfg(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.st, h.s, h.cancel, h.done = st, s, cancel, make(chan struct{})
	h.http = httptest.NewServer(s.Handler())
	go func() {
		defer close(h.done)
		_ = s.Run(ctx)
	}()
}

func (h *harness) stop() {
	if h.s == nil {
		return
	}
	h.cancel()
	<-h.done
	h.http.CloseClientConnections()
	h.http.Close()
	if err := h.s.Close(); err != nil {
		h.t.Error(err)
	}
	if err := h.st.Close(); err != nil {
		h.t.Error(err)
	}
	h.s = nil
}

// restart stops the server and starts a new one on the same data.
func (h *harness) restart() {
	h.stop()
	h.start()
}

// do sends a request; body is JSON-encoded unless it is a string or nil.
func (h *harness) do(method, path string, body any) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.http.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// call sends a request, wants status code want and decodes the answer.
func (h *harness) call(method, path string, body any, want int, out any) {
	h.t.Helper()
	code, data := h.do(method, path, body)
	if code != want {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			h.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// submit submits a JSON spec and returns the job.
func (h *harness) submit(spec string) api.Job {
	h.t.Helper()
	var j api.Job
	h.call("POST", "/v1/jobs", spec, http.StatusCreated, &j)
	return j
}

// job returns a job by id.
func (h *harness) job(id string) api.Job {
	h.t.Helper()
	var j api.Job
	h.call("GET", "/v1/jobs/"+id, nil, http.StatusOK, &j)
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

// jobPrefix is the prefix of the job records' keys in the store (the
// scheduler's layout, docs/SERVER.md).
const jobPrefix = "jobs/"

// stored returns the job as its record in the store holds it (ok false if
// absent).
func (h *harness) stored(id string) (api.Job, bool) {
	h.t.Helper()
	kv, ok, err := h.st.Get(context.Background(), jobPrefix+id)
	if err != nil {
		h.t.Fatal(err)
	}
	var r api.Job
	if ok {
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			h.t.Fatal(err)
		}
	}
	return r, ok
}

// storedJobs returns the number of job records in the store.
func (h *harness) storedJobs() int {
	h.t.Helper()
	kvs, _, err := h.st.List(context.Background(), jobPrefix)
	if err != nil {
		h.t.Fatal(err)
	}
	return len(kvs)
}

// testAgent speaks the agent protocol with plain HTTP calls.
type testAgent struct {
	h    *harness
	name string
	gpus []api.GPU
	// applied is the version of the last work it got.
	applied int64
}

func (h *harness) agent(name, typ string, n int) *testAgent {
	return &testAgent{h: h, name: name, gpus: agenttest.GPUs(typ, n)}
}

// register registers the node with the replicas it reports.
func (a *testAgent) register(reps ...api.ReplicaStatus) {
	a.h.t.Helper()
	var reply api.RegisterReply
	a.h.call("POST", "/v1/agents/register", api.Register{Name: a.name, Addr: a.name + ".example", GPUs: a.gpus, Replicas: reps},
		http.StatusOK, &reply)
	if reply.HeartbeatS <= 0 {
		a.h.t.Fatalf("register: heartbeat %v", reply.HeartbeatS)
	}
}

// work long-polls once.
func (a *testAgent) work(after int64, wait string) api.Work {
	a.h.t.Helper()
	var w api.Work
	a.h.call("GET", fmt.Sprintf("/v1/agents/%s/work?after=%d&wait=%s", a.name, after, wait), nil, http.StatusOK, &w)
	a.applied = w.Version
	return w
}

// waitWork polls until the work satisfies ok.
func (a *testAgent) waitWork(what string, ok func(api.Work) bool) api.Work {
	a.h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	after := int64(0)
	for {
		w := a.work(after, "1s")
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
	var w api.Work
	a.h.call("POST", "/v1/agents/"+a.name+"/status", api.Status{Replicas: reps, Version: a.applied}, http.StatusOK, &w)
	return w
}
