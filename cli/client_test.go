package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/api"
	"github.com/gpusched/gpusched/cli"
	"github.com/gpusched/gpusched/client/clienttest"
)

const jobsdata = "../testdata/jobs/"

// fake starts a fake scheduler service and clears $GPUSCHED_SERVER, so that
// only --server (or a test's own setting) names a server.
func fake(t *testing.T) (*clienttest.Server, string) {
	t.Helper()
	t.Setenv("GPUSCHED_SERVER", "")
	s := clienttest.New(t)
	return s, s.URL()
}

// deadURL returns the URL of a port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// mustRun runs gpusched and fails the test unless it exits with 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("gpusched %q: exit %d: %s", args, code, errs)
	}
	return out
}

func TestSubmitFromFlags(t *testing.T) {
	srv, url := fake(t)
	out := mustRun(t, "submit", "--server", url, "--gpus", "2", "--max-gpus", "4", "--env", "A=1",
		"--env", "B=x=y,z", "--grace-period", "2m", "--priority", "3", "--gpu-type", "v100",
		"--", "sh", "-c", "echo hi")
	if out != "j1\n" {
		t.Fatalf("stdout %q, want the ID alone", out)
	}
	spec, _ := srv.Spec("j1")
	want := api.JobSpec{Name: "sh", Command: []string{"sh", "-c", "echo hi"}, GPUs: 2, MaxGPUs: new(4),
		Env: map[string]string{"A": "1", "B": "x=y,z"}, GracePeriodS: new(120), Priority: 3, GPUType: "v100"}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("server got\n %+v\nwant\n %+v", spec, want)
	}
	// Flags after -- belong to the command.
	mustRun(t, "submit", "--server", url, "--name", "n", "--gpus", "1", "--", "python", "train.py", "--gpus", "8", "-o", "x")
	spec, _ = srv.Spec("j2")
	if !slices.Equal(spec.Command, []string{"python", "train.py", "--gpus", "8", "-o", "x"}) || spec.GPUs != 1 || spec.Name != "n" {
		t.Errorf("spec %+v", spec)
	}
}

func TestSubmitFile(t *testing.T) {
	srv, url := fake(t)
	if out := mustRun(t, "submit", "--server", url, jobsdata+"example.yaml"); out != "j1\n" {
		t.Fatalf("stdout %q", out)
	}
	data, _ := os.ReadFile(jobsdata + "example.yaml")
	want, _ := api.DecodeSpecYAML(data)
	if got, _ := srv.Spec("j1"); !reflect.DeepEqual(got, want) {
		t.Errorf("server got %+v, want %+v", got, want)
	}
	out := mustRun(t, "submit", "--server", url, "-o", "json", jobsdata+"minimal.yaml")
	var j api.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.ID != "j2" || j.State != api.Queued {
		t.Errorf("submit -o json: %v, %q", err, out)
	}
	out = mustRun(t, "submit", "--server", url, "-o", "yaml", jobsdata+"minimal.yaml")
	if err := yaml.Unmarshal([]byte(out), &j); err != nil || j.ID != "j3" {
		t.Errorf("submit -o yaml: %v, %q", err, out)
	}
}

func TestSubmitStdin(t *testing.T) {
	srv, url := fake(t)
	var out bytes.Buffer
	root := cli.NewRoot(&out, io.Discard)
	root.SetIn(strings.NewReader("command: [nvidia-smi]\ngpus: 1\n"))
	root.SetArgs([]string{"submit", "--server", url, "-"})
	if err := root.Execute(); err != nil || out.String() != "j1\n" {
		t.Fatalf("submit -: %v, %q", err, out.String())
	}
	if s, _ := srv.Spec("j1"); s.Command[0] != "nvidia-smi" {
		t.Errorf("spec %+v", s)
	}
}

func TestSubmitBadInput(t *testing.T) {
	srv, url := fake(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"min above gpus in file", []string{jobsdata + "bad-min.yaml"}, "bad-min.yaml: min_gpus: 5: want 1..gpus (4)"},
		{"typo in file", []string{jobsdata + "typo.yaml"}, "typo.yaml: gpu: unknown field"},
		{"missing file", []string{jobsdata + "nope.yaml"}, "nope.yaml"},
		{"file and flags", []string{"--gpus", "2", jobsdata + "example.yaml"}, "--gpus cannot be combined with a spec file"},
		{"command without --", []string{"--gpus", "2", "python", "train.py"}, "--gpus cannot be combined"},
		{"nothing", nil, "want a spec file"},
		{"two files", []string{"a.yaml", "b.yaml"}, "want a spec file"},
		{"file and command", []string{"a.yaml", "--", "x"}, `"a.yaml" before --`},
		{"empty command", []string{"--gpus", "1", "--"}, "no command after --"},
		{"no gpus", []string{"--", "x"}, "--gpus K is required"},
		{"zero gpus", []string{"--gpus", "0", "--", "x"}, "--gpus: 0: want 1..4096"},
		{"min above gpus", []string{"--gpus", "4", "--min-gpus", "5", "--", "x"}, "--min-gpus: 5: want 1..gpus (4)"},
		{"max below gpus", []string{"--gpus", "4", "--max-gpus", "2", "--", "x"}, "--max-gpus: 2"},
		{"env without =", []string{"--gpus", "1", "--env", "K", "--", "x"}, `--env "K": want NAME=VALUE`},
		{"env twice", []string{"--gpus", "1", "--env", "K=1", "--env", "K=2", "--", "x"}, "--env K given twice"},
		{"bad env name", []string{"--gpus", "1", "--env", "1K=v", "--", "x"}, "--env: \"1K\" is not a valid"},
		{"bad grace", []string{"--gpus", "1", "--grace-period", "1.5s", "--", "x"}, "--grace-period \"1.5s\": want whole seconds"},
		{"negative grace", []string{"--gpus", "1", "--grace-period", "-5", "--", "x"}, "--grace-period: -5"},
		{"gpus not a number", []string{"--gpus", "four", "--", "x"}, "invalid argument \"four\""},
		{"bad output", []string{"-o", "xml", jobsdata + "example.yaml"}, `"xml": want table, json or yaml`},
		{"bad server", []string{"--server", "localhost:7070", jobsdata + "example.yaml"}, "no scheme, want http://localhost:7070"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"submit", "--server", url}, tt.args...)
			code, out, errs := run(t, args...)
			if code != 2 || out != "" || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errs, tt.want)
			}
		})
	}
	if r := srv.Requests(); len(r) != 0 {
		t.Errorf("bad input reached the server: %q", r)
	}
}

// TestServerRejects: a 400 or 413 from the server is bad input (exit 2)
// and shows the server's message; a 5xx exits with 1.
func TestServerRejects(t *testing.T) {
	t.Setenv("GPUSCHED_SERVER", "")
	answers := map[string]struct {
		code int
		body string
	}{
		"v100": {400, `{"error":"gpu_type: no node has GPUs of type \"a100\"","field":"gpu_type"}`},
		"huge": {413, `{"error":"request body larger than 1048576 bytes"}`},
		"boom": {500, `{"error":"store: disk full"}`},
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s api.JobSpec
		json.NewDecoder(r.Body).Decode(&s)
		a := answers[s.GPUType]
		w.WriteHeader(a.code)
		io.WriteString(w, a.body)
	}))
	defer ts.Close()
	for typ, want := range map[string]struct {
		code int
		msg  string
	}{
		"v100": {2, `gpusched: server: 400 gpu_type: no node has GPUs of type "a100"`},
		"huge": {2, "server: 413 request body larger"},
		"boom": {1, "server: 500 store: disk full"},
	} {
		code, _, errs := run(t, "submit", "--server", ts.URL, "--gpus", "1", "--gpu-type", typ, "--", "x")
		if code != want.code || !strings.Contains(errs, want.msg) {
			t.Errorf("%s: exit %d, %q; want %d, %q", typ, code, errs, want.code, want.msg)
		}
	}
}

func TestJobsOutput(t *testing.T) {
	srv, url := fake(t)
	if out := mustRun(t, "jobs", "--server", url, "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("no jobs as JSON: %q, want []", out)
	}
	mustRun(t, "submit", "--server", url, "--name", "resnet", "--gpus", "2", "--", "python", "train.py")
	mustRun(t, "submit", "--server", url, "--gpus", "4", "--min-gpus", "2", "--max-gpus", "8", "--", "sleep", "1")
	srv.Start("j1", "n0/0", "n0/1")

	table := mustRun(t, "jobs", "--server", url)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID NAME STATE GPUS ALLOC SUBMITTED" {
		t.Fatalf("table:\n%s", table)
	}
	for _, want := range []string{"resnet", "running", "n0/0-1", "4 (2-8)", "queued", "s ago"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	var arr []map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "jobs", "--server", url, "-o", "json")), &arr); err != nil || len(arr) != 2 {
		t.Fatalf("jobs -o json is not an array of 2: %v", err)
	}
	for _, k := range []string{"id", "name", "state", "gpus_requested", "alloc", "exit_code", "submitted_at", "started_at", "finished_at"} {
		if _, ok := arr[0][k]; !ok {
			t.Errorf("job JSON lacks %q: %v", k, arr[0])
		}
	}
	if _, err := time.Parse(time.RFC3339, arr[0]["started_at"].(string)); err != nil {
		t.Errorf("started_at not RFC 3339: %v", err)
	}

	var jobs []api.Job
	if err := yaml.Unmarshal([]byte(mustRun(t, "jobs", "--server", url, "-o", "yaml")), &jobs); err != nil ||
		len(jobs) != 2 || jobs[1].MaxGPUs != 8 {
		t.Errorf("jobs -o yaml: %v, %+v", err, jobs)
	}

	out := mustRun(t, "jobs", "--server", url, "--state", "running", "-o", "json")
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 || jobs[0].ID != "j1" {
		t.Errorf("--state running: %v, %s", err, out)
	}
	if !slices.Contains(srv.Requests(), "GET /v1/jobs?state=running") {
		t.Errorf("the state filter did not reach the server: %q", srv.Requests())
	}
	if code, _, errs := run(t, "jobs", "--server", url, "--state", "sleeping"); code != 2 || !strings.Contains(errs, "queued, running") {
		t.Errorf("--state sleeping: exit %d, %s", code, errs)
	}
	if code, _, _ := run(t, "jobs", "--server", url, "-o", "wide"); code != 2 {
		t.Errorf("-o wide: exit %d, want 2", code)
	}
}

func TestJobDetailAndCancel(t *testing.T) {
	srv, url := fake(t)
	mustRun(t, "submit", "--server", url, "--name", "hi", "--gpus", "1", "--env", "K=V", "--", "sh", "-c", "echo hi")
	srv.Start("j1", "n0/3")
	out := mustRun(t, "job", "j1", "--server", url)
	for _, want := range []string{"ID:", "j1", "State:", "running", "Command:", "sh -c 'echo hi'", "Env:", "K=V",
		"Alloc:", "n0/3", "Exit code:", "Events:", "submit", "start"} {
		if !strings.Contains(out, want) {
			t.Errorf("job detail lacks %q:\n%s", want, out)
		}
	}
	var j api.Job
	if err := json.Unmarshal([]byte(mustRun(t, "job", "j1", "--server", url, "-o", "json")), &j); err != nil ||
		j.ID != "j1" || len(j.Events) != 2 {
		t.Errorf("job -o json: %v, %+v", err, j)
	}
	if code, out, errs := run(t, "job", "j9", "--server", url); code != 1 || out != "" || strings.TrimSpace(errs) != "gpusched: job j9 not found" {
		t.Errorf("job j9: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := run(t, "job", "--server", url); code != 2 {
		t.Errorf("job without ID: exit %d, want 2", code)
	}

	if out := mustRun(t, "cancel", "j1", "--server", url); out != "j1 cancelled\n" {
		t.Errorf("cancel: %q", out)
	}
	if code, _, errs := run(t, "cancel", "j1", "--server", url); code != 1 || !strings.Contains(errs, "server: 409") {
		t.Errorf("second cancel: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, "cancel", "j9", "--server", url); code != 1 || !strings.Contains(errs, "job j9 not found") {
		t.Errorf("cancel j9: exit %d, %s", code, errs)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor polls until cond holds or fails the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestLogsFollow(t *testing.T) {
	srv, url := fake(t)
	mustRun(t, "submit", "--server", url, "--gpus", "1", "--", "x")
	srv.Log("j1", "epoch 1\n")
	if out := mustRun(t, "logs", "j1", "--server", url); out != "epoch 1\n" {
		t.Errorf("logs: %q", out)
	}
	var out syncBuffer
	done := make(chan int, 1)
	go func() { done <- cli.Execute([]string{"logs", "-f", "j1", "--server", url}, &out, io.Discard) }()
	waitFor(t, "the first line", func() bool { return out.String() == "epoch 1\n" })
	srv.Log("j1", "epoch 2\n")
	waitFor(t, "the streamed line", func() bool { return out.String() == "epoch 1\nepoch 2\n" })
	select {
	case code := <-done:
		t.Fatalf("logs -f ended (exit %d) while the job runs", code)
	case <-time.After(50 * time.Millisecond):
	}
	srv.Log("j1", "done\n")
	srv.Finish("j1", 0)
	select {
	case code := <-done:
		if code != 0 || out.String() != "epoch 1\nepoch 2\ndone\n" {
			t.Errorf("logs -f: exit %d, %q", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not end with the job")
	}
	if code, _, errs := run(t, "logs", "j9", "--server", url); code != 1 || !strings.Contains(errs, "job j9 not found") {
		t.Errorf("logs j9: exit %d, %s", code, errs)
	}
	if code, _, _ := run(t, "logs", "j1", "--server", url, "-o", "json"); code != 2 {
		t.Errorf("logs -o json: exit %d, want 2", code)
	}
}

func TestNodesOutput(t *testing.T) {
	srv, url := fake(t)
	hb := time.Now().Add(-90 * time.Second).UTC().Truncate(time.Second)
	srv.AddNode(api.Node{Name: "n0", State: api.NodeReady, GPUsUsed: 1, LastHeartbeat: hb,
		GPUs: []api.GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "v100"}, {Index: 2, Type: "k80"}}})
	srv.AddNode(api.Node{Name: "n1", State: api.NodeDown, LastHeartbeat: hb, GPUs: []api.GPU{{Index: 0, Type: "h100"}}})
	table := mustRun(t, "nodes", "--server", url)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME STATE GPUS USED TYPE LAST-HEARTBEAT" {
		t.Fatalf("table:\n%s", table)
	}
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "n0 ready 3 1 v100=2,k80=1 1m ago" {
		t.Errorf("row %q", got)
	}
	var nodes []api.Node
	if err := json.Unmarshal([]byte(mustRun(t, "nodes", "--server", url, "-o", "json")), &nodes); err != nil ||
		len(nodes) != 2 || !nodes[0].LastHeartbeat.Equal(hb) {
		t.Errorf("nodes -o json: %v, %+v", err, nodes)
	}
	if err := yaml.Unmarshal([]byte(mustRun(t, "nodes", "--server", url, "-o", "yaml")), &nodes); err != nil ||
		len(nodes) != 2 || nodes[1].State != api.NodeDown {
		t.Errorf("nodes -o yaml: %v, %+v", err, nodes)
	}
}

func TestServerResolution(t *testing.T) {
	_, url := fake(t)
	dead := deadURL(t)
	t.Setenv("GPUSCHED_SERVER", url)
	mustRun(t, "jobs") // from the environment
	t.Setenv("GPUSCHED_SERVER", dead)
	mustRun(t, "jobs", "--server", url) // the flag wins
	code, _, errs := run(t, "jobs")
	if code != 1 {
		t.Errorf("unreachable server: exit %d, want 1", code)
	}
	for _, want := range []string{dead, "connection refused", "gpusched dev", "--server"} {
		if !strings.Contains(errs, want) {
			t.Errorf("message %q lacks %q", errs, want)
		}
	}
	t.Setenv("GPUSCHED_SERVER", "ftp://x")
	if code, _, errs := run(t, "nodes"); code != 2 || !strings.Contains(errs, "$GPUSCHED_SERVER") {
		t.Errorf("bad $GPUSCHED_SERVER: exit %d, %s", code, errs)
	}
}

// TestBinarySubmitArgv runs the real binary: the command after -- reaches
// the server as argv, untouched by any shell.
func TestBinarySubmitArgv(t *testing.T) {
	srv, url := fake(t)
	code, out, errs := exe(t, "submit", "--server", url, "--gpus", "1", "--", "sh", "-c", "echo hi; echo $HOME", "x y")
	if code != 0 || out != "j1\n" {
		t.Fatalf("exit %d, %q, %s", code, out, errs)
	}
	if s, _ := srv.Spec("j1"); !slices.Equal(s.Command, []string{"sh", "-c", "echo hi; echo $HOME", "x y"}) {
		t.Errorf("command %q", s.Command)
	}
	if code, _, _ := exe(t, "job", "j9", "--server", url); code != 1 {
		t.Errorf("job j9: exit %d, want 1", code)
	}
}
