// Package servicetest runs the real scheduler service inside a test, for
// the tests of its clients (package client, the gpusched CLI): a server of
// package server on a bbolt store in a temporary directory, behind an
// httptest server, with its scheduling loop; and, when a test wants jobs
// to run, real agents of package agent in the same process, which run the
// jobs' commands as processes. Nothing of the API is faked: a test that
// needs a job in some state submits a command and waits for the state.
//
//	svc := servicetest.Start(t, nil)
//	svc.StartAgent("n0", "v100=4")
//	// submit `sh -c 'echo hi; exit 3'` to svc.URL, then:
//	j := svc.WaitState("j1", api.Failed)
//
// Everything stops when the test ends: the agents first (their running
// replicas are stopped: SIGTERM, the job's grace period, SIGKILL), then
// the HTTP server and the server. Start a job meant to run until the end
// of the test with a short grace period. When the test failed, the
// service's logs are printed.
//
// The agents start every replica through a shim, by default the running
// program with the argument "shim" (agent.Config.Shim): a test package
// that starts agents runs shim.Main from its TestMain when its binary
// is started that way.
package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/agent"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/server"
	"github.com/gpusched/gpusched/service/settings"
)

// Timeout bounds every wait of the package.
const Timeout = 10 * time.Second

// Service is a running scheduler service.
type Service struct {
	// URL is the base URL of the API, e.g. "http://127.0.0.1:40123".
	URL string
	// Server is the service; DataDir holds its store and logs.
	Server  *server.Server
	DataDir string

	t    testing.TB
	logs *SyncBuffer
	log  *slog.Logger

	mu       sync.Mutex
	requests []string
}

// Start starts a server with a fresh bbolt store in t.TempDir(). Its
// scheduling rounds are fast (every 20 ms); agents heartbeat every 200 ms
// and a node is marked down after 5 s of silence. cfg, when not nil, may
// change the configuration before the server is built.
func Start(t testing.TB, cfg func(*server.Config)) *Service {
	t.Helper()
	s := &Service{t: t, DataDir: t.TempDir(), logs: &SyncBuffer{}}
	s.log = slog.New(slog.NewTextHandler(s.logs, nil))
	t.Cleanup(func() { // runs last: the logs are complete
		if t.Failed() {
			t.Logf("--- logs of the service:\n%s", s.logs.String())
		}
	})
	c := server.Config{Config: settings.Config{DataDir: s.DataDir, Round: 20 * time.Millisecond, Coalesce: time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond, HeartbeatTimeout: 5 * time.Second,
		Logger: s.log.With("component", "server")}, PollTimeout: 5 * time.Second}
	if cfg != nil {
		cfg(&c)
	}
	srv, err := server.New(c)
	if err != nil {
		t.Fatalf("servicetest: %v", err)
	}
	s.Server = srv
	hs := httptest.NewServer(s.record(srv.Handler()))
	s.URL = hs.URL
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("servicetest: server Run: %v", err)
		}
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("servicetest: %v", err)
		}
	})
	return s
}

// record notes the requests of clients (every path but the agents'
// /v1/agents/...) for Requests.
func (s *Service) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/agents/") {
			s.mu.Lock()
			s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// Requests returns the clients' requests so far, as "METHOD /path?query"
// (the agents' requests are left out).
func (s *Service) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Agent is a real agent running in the test's process.
type Agent struct {
	Name   string
	cancel context.CancelFunc
	ran    chan error
	once   sync.Once
	t      testing.TB
}

// StartAgent runs an agent for node name with the declared GPUs gpus
// ("v100=4", machine.ParseGPUs) and data in a temporary directory, and waits
// until the server lists the node as ready. It stops when the test ends,
// stopping its running replicas.
func (s *Service) StartAgent(name, gpus string) *Agent {
	s.t.Helper()
	return s.StartAgentWith(name, gpus, "")
}

// StartAgentWith is StartAgent for a node that offers capacity besides
// its GPUs ("cpu=8,memory=32Gi,rdma/hca=1", config.ParseResourceList;
// "": nothing).
func (s *Service) StartAgentWith(name, gpus, capacity string) *Agent {
	s.t.Helper()
	g, err := machine.ParseGPUs(gpus)
	if err != nil {
		s.t.Fatalf("servicetest: %v", err)
	}
	var capa model.Resources
	if capacity != "" {
		if capa, err = config.ParseResourceList(capacity); err != nil {
			s.t.Fatalf("servicetest: %v", err)
		}
	}
	ag, err := agent.New(agent.Config{Server: s.URL, Name: name, DataDir: s.t.TempDir(), GPUs: g, Capacity: capa,
		StopOnExit: true, Logger: s.log.With("component", "agent", "node", name)})
	if err != nil {
		s.t.Fatalf("servicetest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Agent{Name: name, cancel: cancel, ran: make(chan error, 1), t: s.t}
	go func() { a.ran <- ag.Run(ctx) }()
	s.t.Cleanup(a.Stop) // before the server's cleanup: it was registered later
	s.WaitNode(name, api.NodeReady)
	return a
}

// Stop ends the agent, as its process ending would: its running replicas
// are stopped and reported, then it no longer heartbeats (the server marks
// the node down after the heartbeat timeout). Stop waits for it.
func (a *Agent) Stop() {
	a.once.Do(func() {
		a.cancel()
		select {
		case err := <-a.ran:
			if err != nil {
				a.t.Errorf("servicetest: agent %s: %v", a.Name, err)
			}
		case <-time.After(Timeout):
			a.t.Errorf("servicetest: agent %s did not stop within %v", a.Name, Timeout)
		}
	})
}

// Job returns job id as GET /v1/jobs/{id} answers it.
func (s *Service) Job(id string) api.Job {
	s.t.Helper()
	var j api.Job
	s.get("/v1/jobs/"+id, &j)
	return j
}

// WaitJob polls job id until ok holds and returns it; it fails the test
// after Timeout, naming what.
func (s *Service) WaitJob(id, what string, ok func(api.Job) bool) api.Job {
	s.t.Helper()
	var j api.Job
	s.poll("job "+id+" "+what, func() bool { j = s.Job(id); return ok(j) }, func() any { return j })
	return j
}

// WaitState waits until job id is in state st.
func (s *Service) WaitState(id string, st api.State) api.Job {
	s.t.Helper()
	return s.WaitJob(id, "to be "+string(st), func(j api.Job) bool { return j.State == st })
}

// WaitNode waits until GET /v1/nodes lists node name in state st.
func (s *Service) WaitNode(name string, st api.NodeState) api.Node {
	s.t.Helper()
	var n api.Node
	s.poll("node "+name+" to be "+string(st), func() bool {
		var l api.NodeList
		s.get("/v1/nodes", &l)
		for _, n = range l.Nodes {
			if n.Name == name {
				return n.State == st
			}
		}
		n = api.Node{}
		return false
	}, func() any { return n })
	return n
}

// poll checks cond every 10 ms until it holds, failing the test after
// Timeout with last's value.
func (s *Service) poll(what string, cond func() bool, last func() any) {
	s.t.Helper()
	for deadline := time.Now().Add(Timeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("servicetest: timed out after %v waiting for %s; last: %+v", Timeout, what, last())
		}
	}
}

// get decodes the 200 answer of GET path into out. It does not go through
// Requests' record: only clients' requests are listed there.
func (s *Service) get(path string, out any) {
	s.t.Helper()
	rec := httptest.NewRecorder()
	s.Server.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		s.t.Fatalf("servicetest: GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		s.t.Fatalf("servicetest: GET %s: %v", path, err)
	}
}

// Gate is a file a job's command waits for, so that a test decides when
// the job goes on: put Wait() in the command's script, then Open the gate.
type Gate string

// NewGate returns a gate in a fresh temporary directory, closed.
func NewGate(t testing.TB, name string) Gate {
	return Gate(filepath.Join(t.TempDir(), name))
}

// Wait returns a shell command that waits until the gate is open.
func (g Gate) Wait() string {
	return fmt.Sprintf("while [ ! -e '%s' ]; do sleep 0.01; done", strings.ReplaceAll(string(g), "'", `'\''`))
}

// Open opens the gate.
func (g Gate) Open(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(string(g), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers and readers
// (a process's output read by a test while it runs).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
