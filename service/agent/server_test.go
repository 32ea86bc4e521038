package agent

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// fakeServer is a test server that speaks the agent protocol: it hands out
// the work the test sets, records statuses, acknowledges exits (when
// autoAck) and appends log chunks at its length.
type fakeServer struct {
	srv *httptest.Server

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced when the work changes
	version   int64
	work      []api.Replica
	acked     []string
	known     bool // the node is registered
	autoAck   bool // acknowledge exits and drop them from the work
	registers int
	capacity  map[string]string            // the latest registration's
	reports   int                          // status reports received
	applied   int64                        // the latest report's Version
	lastAfter int64                        // the latest poll's after
	status    map[string]api.ReplicaStatus // latest status per replica
	exits     map[string]int               // exits recorded per replica
	logs      map[string][]byte
	failLogs  int // fail this many log requests with 500
}

// newFakeServer starts a fake server on addr ("" for any free port).
func newFakeServer(t *testing.T, addr string, autoAck bool) *fakeServer {
	t.Helper()
	f := &fakeServer{
		changed: make(chan struct{}), autoAck: autoAck, version: 1,
		status: map[string]api.ReplicaStatus{}, exits: map[string]int{}, logs: map[string][]byte{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents/register", f.register)
	mux.HandleFunc("GET /v1/agents/{name}/work", f.poll)
	mux.HandleFunc("POST /v1/agents/{name}/status", f.report)
	mux.HandleFunc("POST /v1/agents/{name}/logs", f.logChunk)
	f.srv = httptest.NewUnstartedServer(mux)
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen %s: %v", addr, err)
		}
		f.srv.Listener.Close()
		f.srv.Listener = l
	}
	f.srv.Start()
	t.Cleanup(f.close)
	return f
}

// close stops the server, dropping open connections.
func (f *fakeServer) close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// bump marks the work changed; f.mu must be held.
func (f *fakeServer) bump() {
	f.version++
	close(f.changed)
	f.changed = make(chan struct{})
}

// setWork replaces the node's work and returns its version.
func (f *fakeServer) setWork(acked []string, rs ...api.Replica) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.work = rs
	f.acked = append(f.acked, acked...)
	f.bump()
	return f.version
}

// with runs fn under the server's lock.
func (f *fakeServer) with(fn func(f *fakeServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeServer) register(w http.ResponseWriter, r *http.Request) {
	var reg api.Register
	if err := json.NewDecoder(r.Body).Decode(&reg); err != nil || reg.Name == "" || len(reg.GPUs) == 0 {
		http.Error(w, `{"error":"bad registration"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.known = true
	f.registers++
	f.capacity = reg.Capacity
	f.record(reg.Replicas)
	f.mu.Unlock()
	writeJSONAnswer(w, api.RegisterReply{HeartbeatS: 0.05})
}

func (f *fakeServer) poll(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	timeout := time.After(500 * time.Millisecond)
	for {
		f.mu.Lock()
		if !f.known {
			f.mu.Unlock()
			http.Error(w, `{"error":"unknown node"}`, http.StatusNotFound)
			return
		}
		f.lastAfter = after
		work := api.Work{Version: f.version, Replicas: slices.Clone(f.work), Acked: slices.Clone(f.acked)}
		changed := f.changed
		f.mu.Unlock()
		if work.Version > after {
			writeJSONAnswer(w, work)
			return
		}
		select {
		case <-changed:
		case <-timeout:
			writeJSONAnswer(w, work)
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (f *fakeServer) report(w http.ResponseWriter, r *http.Request) {
	var st api.Status
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		http.Error(w, `{"error":"bad status"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.known {
		http.Error(w, `{"error":"unknown node"}`, http.StatusNotFound)
		return
	}
	f.reports++
	f.applied = st.Version
	f.record(st.Replicas)
	writeJSONAnswer(w, api.Work{Version: f.version, Replicas: slices.Clone(f.work), Acked: slices.Clone(f.acked)})
}

// record stores reported statuses and the first report of each exit; f.mu
// must be held.
func (f *fakeServer) record(rs []api.ReplicaStatus) {
	for _, s := range rs {
		f.status[s.ID] = s
		if s.Phase != api.ReplicaExited || slices.Contains(f.acked, s.ID) {
			continue
		}
		if f.exits[s.ID]++; f.autoAck {
			f.acked = append(f.acked, s.ID)
			f.work = slices.DeleteFunc(f.work, func(r api.Replica) bool { return r.ID == s.ID })
			f.bump()
		}
	}
}

func (f *fakeServer) logChunk(w http.ResponseWriter, r *http.Request) {
	var ch api.LogChunk
	if err := json.NewDecoder(r.Body).Decode(&ch); err != nil {
		http.Error(w, `{"error":"bad chunk"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failLogs > 0 {
		f.failLogs--
		http.Error(w, `{"error":"try again"}`, http.StatusServiceUnavailable)
		return
	}
	have := f.logs[ch.Replica]
	if end := ch.Offset + int64(len(ch.Data)); ch.Offset <= int64(len(have)) && end > int64(len(have)) {
		f.logs[ch.Replica] = append(have, ch.Data[int64(len(have))-ch.Offset:]...)
	}
	writeJSONAnswer(w, api.LogAck{Length: int64(len(f.logs[ch.Replica]))})
}

// writeJSONAnswer writes v as a 200 JSON answer.
func writeJSONAnswer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
