package agent

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestProbeReports: the endpoints in the server's work are probed and the
// results reach the server in status reports, each once.
func TestProbeReports(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	var (
		mu      sync.Mutex
		results []api.ProbeResult
	)
	probes := []string{target.Addr().String(), "127.0.0.1:1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents/register", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONAnswer(w, api.RegisterReply{HeartbeatS: 0.05})
	})
	mux.HandleFunc("GET /v1/agents/{name}/work", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(20 * time.Millisecond)
		writeJSONAnswer(w, api.Work{Version: 1, Replicas: []api.Replica{}, Probes: probes})
	})
	mux.HandleFunc("POST /v1/agents/{name}/status", func(w http.ResponseWriter, r *http.Request) {
		var st api.Status
		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		results = append(results, st.Probes...)
		mu.Unlock()
		writeJSONAnswer(w, api.Work{Version: 1, Replicas: []api.Replica{}, Probes: probes})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	startAgent(t, srv.URL, "", func(c *Config) { c.ProbeEvery = 50 * time.Millisecond })
	waitFor(t, "three results of each endpoint", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := map[string]int{}
		for _, r := range results {
			n[r.Endpoint]++
		}
		return n[probes[0]] >= 3 && n[probes[1]] >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	seen := map[api.ProbeResult]bool{}
	for _, r := range results {
		if seen[r] {
			t.Errorf("result reported twice: %+v", r)
		}
		seen[r] = true
		switch ok := r.Error == ""; {
		case r.Endpoint == probes[0] && (!ok || r.RTTMs <= 0):
			t.Errorf("reachable endpoint: %+v", r)
		case r.Endpoint == probes[1] && ok:
			t.Errorf("closed port reported reachable: %+v", r)
		}
	}
}

func TestProbeState(t *testing.T) {
	p := newProbeState()
	for i := range maxPendingProbes + 5 {
		p.add(api.ProbeResult{Endpoint: "e", RTTMs: float64(i)})
	}
	got, upTo := p.take()
	if len(got) != maxPendingProbes || got[0].RTTMs != 5 {
		t.Fatalf("kept %d, first %v", len(got), got[0].RTTMs)
	}
	p.add(api.ProbeResult{Endpoint: "late"})
	p.done(upTo)
	rest, _ := p.take()
	if len(rest) != 1 || rest[0].Endpoint != "late" {
		t.Errorf("after done: %+v", rest)
	}
	if jittered(time.Second) < 800*time.Millisecond || jittered(time.Second) > 1200*time.Millisecond {
		t.Error("jitter beyond ±20 %")
	}
}
