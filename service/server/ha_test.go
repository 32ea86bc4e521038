package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
	"github.com/gpusched/gpusched/service/leader"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// haNode is one of several servers on one etcd store, in this process.
type haNode struct {
	url    string
	ha     *HA
	st     *store.Etcd
	http   *httptest.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// startHA starts a server on the etcd cluster c under prefix; the test's
// cleanup stops it (if stop was not called). opts may change its
// configuration.
func startHA(t testing.TB, c *etcdtest.Cluster, prefix string, opts ...func(*Config)) *haNode {
	t.Helper()
	st, err := store.OpenEtcd(store.EtcdOptions{Endpoints: c.Endpoints(), Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &haNode{url: "http://" + ln.Addr().String(), st: st, done: make(chan struct{})}
	el, err := leader.New(leader.Config{Store: st, Self: n.url, TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Config: settings.Config{DataDir: t.TempDir(), Round: 20 * time.Millisecond,
		Coalesce: time.Millisecond, HeartbeatTimeout: 3 * time.Second, HeartbeatInterval: 500 * time.Millisecond},
		PollTimeout: 2 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	n.ha, err = NewHA(cfg, st, el)
	if err != nil {
		t.Fatal(err)
	}
	n.http = &httptest.Server{Listener: ln, Config: &http.Server{Handler: n.ha.Handler()}}
	n.http.Start()
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		_ = n.ha.Run(ctx)
	}()
	t.Cleanup(n.stop)
	return n
}

// stop shuts the server down gracefully (it resigns).
func (n *haNode) stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	<-n.done
	n.http.CloseClientConnections()
	n.http.Close()
	_ = n.st.Close()
	n.cancel = nil
}

// waitLeader waits until one of nodes leads and every node names it.
func waitLeader(t testing.TB, nodes ...*haNode) *haNode {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var lead *haNode
		agree := true
		for _, n := range nodes {
			l := n.ha.Leader()
			if n.ha.Current() != nil {
				lead = n
			}
			if l.URL == "" || lead != nil && l.URL != lead.url {
				agree = false
			}
		}
		if lead != nil && agree {
			return lead
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader within 15s")
	return nil
}

// TestHAFollowerRedirectsAndReads: two servers on one etcd elect one
// leader; a follower names it (GET /v1/leader), redirects writes there
// (307 with its URL), answers reads from the store, and a Failover client
// of both submits through either. When the leader stops (it resigns), the
// other one takes over with every job.
func TestHAFollowerRedirectsAndReads(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a, b := startHA(t, c, "/ha1/"), startHA(t, c, "/ha1/")
	lead := waitLeader(t, a, b)
	follower := a
	if lead == a {
		follower = b
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Post(follower.url+"/v1/jobs", "application/json", strings.NewReader(`{"command":["x"],"gpus":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != lead.url+"/v1/jobs" {
		t.Fatalf("follower's answer to a submission: %d Location %q, want 307 to %s", resp.StatusCode, resp.Header.Get("Location"), lead.url)
	}
	var l api.Leader
	getJSON(t, follower.url+"/v1/leader", &l)
	if l.URL != lead.url || l.Self || l.Mode != "ha" || l.Term == 0 {
		t.Fatalf("follower's /v1/leader = %+v, want %s", l, lead.url)
	}
	getJSON(t, lead.url+"/v1/leader", &l)
	if !l.Self || l.URL != lead.url {
		t.Fatalf("leader's /v1/leader = %+v", l)
	}
	cl, err := client.NewList(follower.url+","+lead.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := cl.Submit(t.Context(), api.JobSpec{Name: "first", Command: []string{"x"}, GPUs: 1})
	if err != nil {
		t.Fatalf("submit through the follower: %v", err)
	}
	var got api.Job
	getJSON(t, follower.url+"/v1/jobs/"+j.ID, &got)
	if got.ID != j.ID || got.Name != "first" || got.State != api.Queued {
		t.Fatalf("follower's read of %s: %+v", j.ID, got)
	}
	lead.stop()
	newLead := waitLeader(t, follower)
	j2, err := cl.Submit(t.Context(), api.JobSpec{Name: "second", Command: []string{"x"}, GPUs: 1})
	if err != nil {
		t.Fatalf("submit after the failover: %v", err)
	}
	jobs := newLead.ha.Current().Scheduler().Jobs()
	if len(jobs) != 2 || jobs[0].ID != j.ID || jobs[1].ID != j2.ID || j2.ID != "j2" {
		t.Fatalf("jobs after the failover: %+v", jobs)
	}
}

// TestHADeposedLeaderIsFenced: a leader whose election key is gone (its
// lease revoked behind its back, as when it was paused past its TTL)
// changes nothing: its writes fail with ErrFenced and answer 503 with
// Retry-After.
func TestHADeposedLeaderIsFenced(t *testing.T) {
	c := etcdtest.Start(t, 1)
	n := startHA(t, c, "/ha2/")
	waitLeader(t, n)
	cur := n.ha.Current()
	key, rev := cur.Scheduler().Store().(*store.Fenced).Key()
	if _, err := n.st.Delete(t.Context(), key); err != nil { // depose it
		t.Fatal(err)
	}
	before := currentRev(t, n.st)
	h := httptest.NewServer(cur.Handler()) // the old term's transport, as a late request sees it
	defer h.Close()
	resp, err := http.Post(h.URL+"/v1/jobs", "application/json", strings.NewReader(`{"command":["x"],"gpus":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), "lost the leadership") {
		t.Fatalf("deposed leader's submission: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if after := currentRev(t, n.st); after != before {
		t.Fatalf("the deposed leader changed the store: revision %d → %d (fence %s@%d)", before, after, key, rev)
	}
}

func currentRev(t testing.TB, s store.Store) int64 {
	t.Helper()
	_, rev, err := s.List(context.Background(), "\xff")
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func getJSON(t testing.TB, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSubmitStores measures acknowledged durable submissions per
// second from 32 concurrent HTTP clients, side by side in one run: on the
// embedded bbolt store, and on a 3-member etcd cluster on loopback (the
// leader of one server, every write fenced by its election key).
func BenchmarkSubmitStores(b *testing.B) {
	b.Run("bolt", func(b *testing.B) {
		h := newHarness(b, nil)
		benchSubmit(b, h.http.URL)
	})
	b.Run("etcd-3-members", func(b *testing.B) {
		c := etcdtest.Start(b, 3)
		n := startHA(b, c, "/bench/")
		waitLeader(b, n)
		benchSubmit(b, n.url)
	})
}

// benchSubmit POSTs b.N jobs to url from benchClients goroutines.
func benchSubmit(b *testing.B, url string) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients}}
	defer hc.CloseIdleConnections()
	body := []byte(`{"name":"bench","command":["python","train.py","--epochs","90"],"env":{"DATA":"/data/imagenet"},` +
		`"gpus":4,"min_gpus":2,"max_gpus":8,"model":"ResNet-50 (batch size 64)","user":"alice"}`)
	var (
		wg   sync.WaitGroup
		next = make(chan struct{})
	)
	b.ResetTimer()
	start := time.Now()
	for range benchClients {
		wg.Go(func() {
			for range next {
				resp, err := hc.Post(url+"/v1/jobs", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
	}
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "submits/s")
	var l api.JobList
	getJSON(b, url+"/v1/jobs", &l)
	if len(l.Jobs) < b.N {
		b.Errorf("%d jobs stored, %d acknowledged", len(l.Jobs), b.N)
	}
}

// BenchmarkTaskLeases measures task leases per second for 64 trainers
// over HTTP: each trainer's request reports its previous task done and
// leases the next one (both durable before the answer), on bbolt and on a
// 3-member etcd, side by side.
func BenchmarkTaskLeases(b *testing.B) {
	b.Run("bolt", func(b *testing.B) {
		h := newHarness(b, nil)
		benchLeases(b, h.http.URL)
	})
	b.Run("etcd-3-members", func(b *testing.B) {
		c := etcdtest.Start(b, 3)
		n := startHA(b, c, "/bench-leases/")
		waitLeader(b, n)
		benchLeases(b, n.url)
	})
}

// benchLeases registers b.N tasks on a new job and lets 64 trainers lease
// and finish them.
func benchLeases(b *testing.B, url string) {
	const trainers = 64
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * trainers}}
	defer hc.CloseIdleConnections()
	post := func(path string, body any, out any) int {
		data, _ := json.Marshal(body)
		resp, err := hc.Post(url+path, "application/json", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		_, _ = io.Copy(io.Discard, resp.Body) // keep the connection
		return resp.StatusCode
	}
	var j api.Job
	post("/v1/jobs", api.JobSpec{Command: []string{"train"}, GPUs: 1}, &j)
	tasks := make([]string, b.N)
	for i := range tasks {
		tasks[i] = "shard-" + strconv.Itoa(i)
	}
	if code := post("/v1/jobs/"+j.ID+"/tasks", api.TaskQueueSpec{Tasks: tasks, TTLS: 600}, nil); code != http.StatusCreated {
		b.Fatalf("register tasks: %d", code)
	}
	var leases atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range trainers {
		wg.Go(func() {
			req := api.LeaseRequest{Holder: "t" + strconv.Itoa(w)}
			for {
				var l api.Lease
				if code := post("/v1/jobs/"+j.ID+"/tasks/lease", req, &l); code != http.StatusOK {
					b.Errorf("lease: %d", code)
					return
				}
				if l.Status != api.LeaseGranted {
					return // finished (or the last tasks are leased by others)
				}
				leases.Add(1)
				req.Done = &api.TaskDone{Index: l.Task.Index, Lease: l.Task.Lease}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(leases.Load())/elapsed.Seconds(), "leases/s")
	var q api.TaskQueue
	getJSON(b, url+"/v1/jobs/"+j.ID+"/tasks", &q)
	if q.DoneTotal != int64(b.N) {
		b.Errorf("%d tasks done, want %d", q.DoneTotal, b.N)
	}
}

// TestHAAuthentication: several servers with authentication on. Exactly
// one writes the cluster's bootstrap admin token; a follower serves no
// data (it sends every API request but the public ones to the leader);
// the leader refuses an anonymous request and serves the admin, and a
// client with the token and the server list follows the leader.
func TestHAAuthentication(t *testing.T) {
	c := etcdtest.Start(t, 1)
	withAuth := func(cfg *Config) {
		cfg.Auth = &AuthConfig{AdminTokenFile: filepath.Join(cfg.DataDir, "admin.token")}
	}
	a, b := startHA(t, c, "/auth/", withAuth), startHA(t, c, "/auth/", withAuth)
	if a.ha.AdminTokenWritten == b.ha.AdminTokenWritten {
		t.Fatalf("bootstrap tokens written: %v and %v, want exactly one", a.ha.AdminTokenWritten, b.ha.AdminTokenWritten)
	}
	writer := a
	if b.ha.AdminTokenWritten {
		writer = b
	}
	tok, err := os.ReadFile(filepath.Join(writer.ha.cfg.DataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(tok))
	lead := waitLeader(t, a, b)
	follower := a
	if lead == a {
		follower = b
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url, token string) int {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		url, token string
		want       int
	}{
		{follower.url + "/v1/jobs", admin, http.StatusTemporaryRedirect},
		{follower.url + "/v1/nodes", "", http.StatusTemporaryRedirect},
		{follower.url + "/healthz", "", http.StatusOK},
		{lead.url + "/v1/jobs", "", http.StatusUnauthorized},
		{lead.url + "/v1/jobs", admin, http.StatusOK},
	} {
		if got := get(tc.url, tc.token); got != tc.want {
			t.Errorf("GET %s (token %v): %d, want %d", tc.url, tc.token != "", got, tc.want)
		}
	}
	cl, err := client.NewWithOptions(follower.url+","+lead.url, client.Options{Token: admin})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Submit(t.Context(), api.JobSpec{Name: "authed", Command: []string{"x"}, GPUs: 1}); err != nil {
		t.Fatalf("submit with the admin token through the follower: %v", err)
	}
}
