package client_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/servicetest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

func ptr[T any](v T) *T { return &v }

// newClient starts a real server (no agent) and a client of it.
func newClient(t *testing.T) (*servicetest.Service, *client.Client) {
	t.Helper()
	srv := servicetest.Start(t, nil)
	c, err := client.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func TestServerURL(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == client.EnvServer {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name, flag string
		getenv     func(string) string
		want       string
	}{
		{"flag wins", "http://a:1", env("http://b:2"), "http://a:1"},
		{"env", "", env("http://b:2"), "http://b:2"},
		{"env blank", "", env("  "), client.DefaultServer},
		{"default", "", env(""), "http://127.0.0.1:7070"},
		{"nil getenv", "", nil, client.DefaultServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.ServerURL(tt.flag, tt.getenv); got != tt.want {
				t.Errorf("ServerURL(%q) = %q, want %q", tt.flag, got, tt.want)
			}
		})
	}
}

func TestNewValidatesURL(t *testing.T) {
	tests := []struct{ url, wantErr string }{
		{"http://127.0.0.1:7070", ""},
		{"https://sched.example.com/gpusched/", ""},
		{"", "empty"},
		{"127.0.0.1:7070", "no scheme, want http://127.0.0.1:7070"},
		{"localhost:7070", "no scheme"},
		{"ftp://host:21", "scheme must be http or https, e.g. http://host:21"},
		{"http://", "no host"},
		{"http://h:1/?x=1", "query"},
		{"http://u:p@h:1", "user"},
		{"http://h:1/%zz", "invalid URL escape"},
	}
	for _, tt := range tests {
		c, err := client.New(tt.url, nil)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("New(%q): %v", tt.url, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("New(%q) = %v, %v; want error containing %q", tt.url, c, err, tt.wantErr)
		}
	}
	c, _ := client.New("https://sched.example.com/gpusched/", nil)
	if c.URL() != "https://sched.example.com/gpusched" {
		t.Errorf("URL() = %q", c.URL())
	}
}

func TestSubmitAndGet(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := context.Background()
	spec := api.JobSpec{Name: "resnet", Command: []string{"sh", "-c", "echo hi"}, GPUs: 4,
		MinGPUs: ptr(2), MaxGPUs: ptr(8), Env: map[string]string{"K": "V"}, GracePeriodS: ptr(0)}
	j, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if j.ID == "" || j.State != api.Queued || j.GPUsRequested != 4 || j.MinGPUs != 2 || j.MaxGPUs != 8 {
		t.Errorf("submitted job = %+v", j)
	}
	full, err := c.Job(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if full.ID != j.ID || len(full.Events) == 0 {
		t.Errorf("Job(%s) = %+v, want the job with its events", j.ID, full)
	}
	// The server stored the spec as sent.
	if full.Name != "resnet" || !slices.Equal(full.Command, spec.Command) || full.GracePeriodS != 0 ||
		full.Env["K"] != "V" || len(full.Env) != 1 {
		t.Errorf("server stored %+v", full)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := context.Background()
	_, err := c.Submit(ctx, api.JobSpec{Command: []string{"x"}, GPUs: 4, MinGPUs: ptr(5)})
	want := "server: 400 min_gpus: 5: want 1..gpus (4)"
	if err == nil || err.Error() != want {
		t.Errorf("Submit: %v, want %q", err, want)
	}
	var ce *client.Error
	if !errors.As(err, &ce) || !ce.BadRequest() || ce.Body.Field != "min_gpus" {
		t.Errorf("Submit error %#v, want a 400 *client.Error naming min_gpus", err)
	}
	_, err = c.Job(ctx, "j9")
	if !errors.As(err, &ce) || !ce.NotFound() || client.StatusOf(err) != 404 {
		t.Errorf("Job(j9): %v, want 404", err)
	}
	if _, err := c.Job(ctx, ""); err == nil {
		t.Error("Job(\"\") succeeded")
	}
	_, err = c.Jobs(ctx, "sleeping")
	if !errors.As(err, &ce) || !ce.BadRequest() || ce.Body.Field != "state" {
		t.Errorf("Jobs(sleeping): %v, want 400 naming state", err)
	}
	big := api.JobSpec{Command: []string{strings.Repeat("x", api.MaxBodyBytes)}, GPUs: 1}
	if _, err := c.Submit(ctx, big); !errors.As(err, &ce) || ce.Status != 413 || !ce.BadRequest() {
		t.Errorf("huge Submit: %v, want 413", err)
	}
	if client.StatusOf(errors.New("x")) != 0 {
		t.Error("StatusOf(plain error) != 0")
	}
	// Nothing was stored for the rejected requests.
	if jobs, err := c.Jobs(ctx, ""); err != nil || len(jobs) != 0 {
		t.Errorf("after rejected submissions: Jobs = %+v, %v", jobs, err)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	svc, c := newClient(t)
	svc.StartAgent("n0", "v100=4")
	ctx := context.Background()
	// A queued job (no node has a100 GPUs) is cancelled at once.
	q, err := c.Submit(ctx, api.JobSpec{Command: []string{"sleep", "600"}, GPUs: 1, GPUType: "a100"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Cancel(ctx, q.ID)
	if err != nil || got.State != api.Cancelled || got.FinishedAt == nil {
		t.Fatalf("Cancel(queued) = %+v, %v; want cancelled", got, err)
	}
	_, err = c.Cancel(ctx, q.ID)
	var ce *client.Error
	if !errors.As(err, &ce) || !ce.Conflict() {
		t.Errorf("second Cancel: %v, want 409", err)
	}
	// A running job stays running until its process is gone.
	r, err := c.Submit(ctx, api.JobSpec{Command: []string{"sleep", "600"}, GPUs: 1, GracePeriodS: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	svc.WaitState(r.ID, api.Running)
	got, err = c.Cancel(ctx, r.ID)
	if err != nil || (got.State != api.Running && got.State != api.Cancelled) || !strings.Contains(got.Reason, "cancelled") {
		t.Fatalf("Cancel(running) = %+v, %v; want running (stopping) or cancelled", got, err)
	}
	if j := svc.WaitState(r.ID, api.Cancelled); j.Reason != "cancelled by the user" {
		t.Errorf("cancelled job's reason %q", j.Reason)
	}
	if _, err = c.Cancel(ctx, r.ID); !errors.As(err, &ce) || !ce.Conflict() {
		t.Errorf("Cancel after the end: %v, want 409", err)
	}
	if _, err = c.Cancel(ctx, "j9"); client.StatusOf(err) != 404 {
		t.Errorf("Cancel(j9): %v, want 404", err)
	}
}

func TestJobsFilterAndNodes(t *testing.T) {
	t.Parallel()
	svc, c := newClient(t)
	ctx := context.Background()
	jobs, err := c.Jobs(ctx, "")
	if err != nil || jobs == nil || len(jobs) != 0 {
		t.Fatalf("empty Jobs = %#v, %v; want an empty non-nil list", jobs, err)
	}
	nodes, err := c.Nodes(ctx)
	if err != nil || nodes == nil || len(nodes) != 0 {
		t.Fatalf("empty Nodes = %#v, %v", nodes, err)
	}
	svc.StartAgent("n0", "v100=4")
	if nodes, err := c.Nodes(ctx); err != nil || len(nodes) != 1 || nodes[0].Name != "n0" ||
		nodes[0].State != api.NodeReady || len(nodes[0].GPUs) != 4 || nodes[0].GPUs[0].Type != "v100" {
		t.Errorf("Nodes = %+v, %v", nodes, err)
	}
	// j1 and j3 never fit (a100, 5 GPUs); j2 runs.
	for _, s := range []api.JobSpec{
		{Command: []string{"sleep", "600"}, GPUs: 1, GPUType: "a100"},
		{Command: []string{"sleep", "600"}, GPUs: 1, GracePeriodS: ptr(1)},
		{Command: []string{"sleep", "600"}, GPUs: 5},
	} {
		if _, err := c.Submit(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	svc.WaitState("j2", api.Running)
	running, err := c.Jobs(ctx, api.Running)
	if err != nil || len(running) != 1 || running[0].ID != "j2" {
		t.Errorf("Jobs(running) = %+v, %v", running, err)
	}
	if r := svc.Requests(); !slices.Contains(r, "GET /v1/jobs?state=running") {
		t.Errorf("requests %q lack the state filter", r)
	}
	queued, err := c.Jobs(ctx, api.Queued)
	if err != nil || len(queued) != 2 || queued[0].ID != "j1" || queued[1].ID != "j3" {
		t.Errorf("Jobs(queued) = %+v, %v", queued, err)
	}
	if all, err := c.Jobs(ctx, ""); err != nil || len(all) != 3 {
		t.Errorf("Jobs() = %+v, %v", all, err)
	}
	if nodes, _ := c.Nodes(ctx); len(nodes) != 1 || nodes[0].GPUsUsed != 1 {
		t.Errorf("Nodes with j2 running = %+v", nodes)
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
}

// TestLogsFollow follows the output of a real job that prints a line, waits
// for the test, prints the next, and so on.
func TestLogsFollow(t *testing.T) {
	t.Parallel()
	svc, c := newClient(t)
	svc.StartAgent("n0", "v100=1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*servicetest.Timeout)
	defer cancel()
	g1, g2 := servicetest.NewGate(t, "g1"), servicetest.NewGate(t, "g2")
	script := "echo one; " + g1.Wait() + "; echo two; " + g2.Wait() + "; echo three"
	j, err := c.Submit(ctx, api.JobSpec{Command: []string{"sh", "-c", script}, GPUs: 1})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.Logs(ctx, j.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	if line, err := br.ReadString('\n'); line != "one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	g1.Open(t)
	if line, err := br.ReadString('\n'); line != "two\n" {
		t.Fatalf("streamed line %q, %v", line, err)
	}
	g2.Open(t)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "three\n" {
		t.Errorf("rest %q, %v; want the last line and EOF", rest, err)
	}
	// The stream ended because the job did.
	if got, err := c.Job(ctx, j.ID); err != nil || got.State != api.Succeeded {
		t.Errorf("job after the stream ended: %+v, %v; want succeeded", got, err)
	}
	if _, err := c.Logs(ctx, "j9", false); client.StatusOf(err) != 404 {
		t.Errorf("Logs(j9): %v, want 404", err)
	}
	rc2, err := c.Logs(ctx, j.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(rc2)
	rc2.Close()
	if string(all) != "one\ntwo\nthree\n" {
		t.Errorf("Logs = %q", all)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	c, _ := client.New(addr, nil)
	_, err = c.Jobs(context.Background(), "")
	var ue *client.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Jobs: %v, want *UnreachableError", err)
	}
	for _, want := range []string{addr, "connection refused", "gpusched dev", "--server"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// TestNonJSONErrorAnswer injects answers the real server never gives (a
// proxy's HTML page, an empty 500, a 200 that is not JSON): a canned
// handler, not a stand-in for the API.
func TestNonJSONErrorAnswer(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/nodes":
			http.Error(w, "<html>bad gateway</html>\nmore", http.StatusBadGateway)
		case "/v1/jobs":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			io.WriteString(w, "{not json")
		}
	}))
	defer ts.Close()
	c, _ := client.New(ts.URL, ts.Client())
	ctx := context.Background()
	if _, err := c.Nodes(ctx); err == nil || err.Error() != "server: 502 <html>bad gateway</html>" {
		t.Errorf("Nodes: %v", err)
	}
	if _, err := c.Jobs(ctx, ""); err == nil || err.Error() != "server: 500 Internal Server Error" {
		t.Errorf("Jobs: %v", err)
	}
	if _, err := c.Job(ctx, "j1"); err == nil || !strings.Contains(err.Error(), "decode answer") {
		t.Errorf("Job: %v", err)
	}
}

func TestErrorMessageAddsField(t *testing.T) {
	e := &client.Error{Status: 400, Body: api.Error{Error: "5 is above max_gpus 4", Field: "min_gpus"}}
	if got := e.Error(); got != "server: 400 min_gpus: 5 is above max_gpus 4" {
		t.Errorf("Error() = %q", got)
	}
	e.Body.Error = "min_gpus: 5 is above max_gpus 4"
	if got := e.Error(); got != "server: 400 min_gpus: 5 is above max_gpus 4" {
		t.Errorf("Error() = %q", got)
	}
}

func TestContextCancelsFollow(t *testing.T) {
	t.Parallel()
	svc, c := newClient(t)
	svc.StartAgent("n0", "v100=1")
	j, err := c.Submit(context.Background(), api.JobSpec{Command: []string{"sh", "-c", "echo x; exec sleep 600"},
		GPUs: 1, GracePeriodS: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := c.Logs(ctx, j.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lines := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		br := bufio.NewReader(rc)
		line, err := br.ReadString('\n')
		if err != nil {
			done <- err
			return
		}
		lines <- line
		_, err = io.ReadAll(br)
		done <- err
	}()
	select {
	case line := <-lines:
		if line != "x\n" {
			t.Fatalf("first line %q", line)
		}
	case err := <-done:
		t.Fatalf("follow ended before the job's output: %v", err)
	case <-time.After(servicetest.Timeout):
		t.Fatal("no output")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read after cancel: %v", err)
		}
	case <-time.After(servicetest.Timeout):
		t.Fatal("follow did not end on cancel")
	}
	if got := svc.Job(j.ID); got.State != api.Running {
		t.Errorf("job %s after the client went away: %s, want still running", j.ID, got.State)
	}
}

func TestHostfile(t *testing.T) {
	t.Parallel()
	svc, c := newClient(t)
	svc.StartAgent("n0", "v100=4")
	ctx := context.Background()
	q, err := c.Submit(ctx, api.JobSpec{Command: []string{"sleep", "600"}, GPUs: 1, GPUType: "a100"})
	if err != nil {
		t.Fatal(err)
	}
	var ce *client.Error
	if _, err := c.Hostfile(ctx, q.ID); !errors.As(err, &ce) || !ce.Conflict() {
		t.Errorf("Hostfile(queued): %v, want 409", err)
	}
	if _, err := c.Hostfile(ctx, "j99"); client.StatusOf(err) != 404 {
		t.Errorf("Hostfile(j99): %v, want 404", err)
	}
	r, err := c.Submit(ctx, api.JobSpec{Command: []string{"sleep", "600"}, GPUs: 2, GracePeriodS: ptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	svc.WaitState(r.ID, api.Running)
	if list, err := c.Hostfile(ctx, r.ID); err != nil || list != "n0:2\n" {
		t.Errorf("Hostfile(running) = %q, %v; want \"n0:2\\n\"", list, err)
	}
	if _, err := c.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
}
