package client

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFailover drives a Failover against real HTTP servers: a dead first
// server, a follower that redirects (307) to the leader, a follower that
// answers 503 with Retry-After until a leader exists, and a POST whose body
// must arrive whole after the redirect.
func TestFailover(t *testing.T) {
	var posts atomic.Int64
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Write([]byte("leader got " + r.Method + " " + r.URL.Path + " " + string(body)))
	}))
	defer leader.Close()
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", leader.URL+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer follower.Close()
	var electing atomic.Int64
	waiting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if electing.Add(1) <= 3 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Location", leader.URL+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer waiting.Close()
	dead := "http://" + deadAddr(t)

	cases := []struct {
		name    string
		servers []string
	}{
		{"dead server, then a follower", []string{dead, follower.URL}},
		{"no leader yet", []string{waiting.URL}},
		{"the leader itself", []string{leader.URL}},
	}
	for _, c := range cases {
		c1, err := NewList(strings.Join(c.servers, ","), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c1.do(t.Context(), http.MethodPost, "/v1/jobs", []byte(`{"gpus":1}`))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != `leader got POST /v1/jobs {"gpus":1}` {
			t.Errorf("%s: %q", c.name, got)
		}
	}
	if posts.Load() != 3 {
		t.Errorf("the leader got %d POSTs, want 3 (one per case, none repeated)", posts.Load())
	}
	// Every server dead: an UnreachableError naming the list, at once.
	c2, _ := NewList(dead+","+dead+"1", nil)
	start := time.Now()
	_, err := c2.Jobs(t.Context(), "")
	if _, ok := err.(*UnreachableError); !ok || !strings.Contains(err.Error(), dead) || time.Since(start) > 5*time.Second {
		t.Fatalf("all dead: %v after %v", err, time.Since(start))
	}
}

func TestParseServers(t *testing.T) {
	got, err := ParseServers("http://a:1, http://b:2/,http://a:1")
	if err != nil || strings.Join(got, " ") != "http://a:1 http://b:2" {
		t.Fatalf("ParseServers = %v %v", got, err)
	}
	for _, bad := range []string{"", "http://a:1,,http://b:2", "a:1", "http://a:1,ftp://b"} {
		if _, err := ParseServers(bad); err == nil {
			t.Errorf("ParseServers(%q): no error", bad)
		}
	}
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
