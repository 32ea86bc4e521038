package machine

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParsePowerDoc(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		nodeW float64
		gpus  int
		err   string
	}{
		{"812.5\n", 812.5, 0, ""},
		{`{"node_w": 400}`, 400, 0, ""},
		{`{"gpus": [{"index": 0, "watts": 50}, {"index": 1, "watts": 60}]}`, 0, 2, ""},
		{`{"node_w": 300, "gpus": [{"index": 3, "watts": 250}]}`, 300, 1, ""},
		{"", 0, 0, "empty power document"},
		{"abc", 0, 0, "want a number of watts or a JSON object"},
		{"-5", 0, 0, "is not a number of watts ≥ 0"},
		{`{}`, 0, 0, `neither "node_w" nor "gpus"`},
		{`{"node_w": 1, "watts": 2}`, 0, 0, "unknown field"},
		{`{"node_w": -1}`, 0, 0, "node_w: -1"},
		{`{"gpus": [{"index": 2, "watts": -3}]}`, 0, 0, "GPU 2: -3"},
	} {
		gpus, w, err := ParsePowerDoc([]byte(tc.doc))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil || w != tc.nodeW || len(gpus) != tc.gpus {
			t.Errorf("%q: %v W, %v, %v", tc.doc, w, gpus, err)
		}
	}
}

func FuzzParsePowerDoc(f *testing.F) {
	for _, s := range []string{"1", `{"node_w": 2}`, `{"gpus":[{"index":0,"watts":1}]}`, "{", "NaN", "1e400"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gpus, w, err := ParsePowerDoc(data)
		if err != nil {
			return
		}
		if !(w >= 0) || w > 1e308 {
			t.Fatalf("accepted node watts %v", w)
		}
		for _, g := range gpus {
			if !(g.Watts >= 0) || g.Watts > 1e308 {
				t.Fatalf("accepted GPU watts %v", g.Watts)
			}
		}
	})
}

func TestFilePower(t *testing.T) {
	dir := t.TempDir()
	src := PowerSources{File: filepath.Join(dir, NodePlaceholder+".json")}
	ss := src.Samplers("n7", nil, nil, nil)
	if len(ss) != 1 {
		t.Fatalf("%d samplers, want the file's alone (no NVML here)", len(ss))
	}
	if _, _, err := ss[0].Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "n7.json") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "n7.json"), []byte(`{"node_w": 512}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, w, err := ss[0].Sample(context.Background()); err != nil || w != 512 {
		t.Errorf("Sample = %v W, %v; want 512", w, err)
	}
}

// TestHTTPPowerLoad: the agent passes its node's name and load to an HTTP
// power source, which answers with a curve of the load: the reading the
// agent reports follows it.
func TestHTTPPowerLoad(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []string
	)
	meter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Query().Get("node")+"@"+r.URL.Query().Get("load"))
		mu.Unlock()
		if r.URL.Query().Get("load") == "" {
			http.Error(w, "no load", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("100"))
	}))
	t.Cleanup(meter.Close)
	h := &HTTPPower{URL: meter.URL + "/power?site=a", Node: "gpu3"}
	if _, w, err := h.SampleLoad(context.Background(), 0.25); err != nil || w != 100 {
		t.Fatalf("SampleLoad = %v, %v", w, err)
	}
	if _, _, err := h.Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("an answer other than 200: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked[0] != "gpu3@0.25" {
		t.Errorf("asked %v", asked)
	}
}

// TestProbe measures a TCP endpoint and an HTTP endpoint that answers
// after 30 ms; a closed port fails.
func TestProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if rtt, err := Probe(ctx, l.Addr().String()); err != nil || rtt <= 0 || rtt > time.Second {
		t.Errorf("TCP probe: %v, %v", rtt, err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.WriteHeader(http.StatusForbidden) // any answer is a round trip
	}))
	defer slow.Close()
	if rtt, err := Probe(ctx, slow.URL+"/bucket"); err != nil || rtt < 30*time.Millisecond || rtt > 2*time.Second {
		t.Errorf("HTTP probe: %v, %v; want at least 30ms", rtt, err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := Probe(ctx, addr); err == nil {
		t.Error("a closed port is reachable")
	}
}
