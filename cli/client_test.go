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
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/cli"
	"github.com/gpusched/gpusched/internal/testbed/servicetest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/server"
)

const jobsdata = "../testdata/jobs/"

// service starts a real scheduler service (no agent: jobs stay queued) and
// clears $GPUSCHED_SERVER, so that only --server (or a test's own setting)
// names a server.
func service(t *testing.T) (*servicetest.Service, string) {
	t.Helper()
	t.Setenv("GPUSCHED_SERVER", "")
	s := servicetest.Start(t, nil)
	return s, s.URL
}

// serviceWithNode is service with a real agent for node n0 with gpus, so
// that jobs run.
func serviceWithNode(t *testing.T, gpus string) (*servicetest.Service, string) {
	t.Helper()
	s, url := service(t)
	s.StartAgent("n0", gpus)
	return s, url
}

// storedSpec returns the spec the server holds for job id, rebuilt from
// the job as GET /v1/jobs/{id} answers it (defaults filled in).
func storedSpec(svc *servicetest.Service, id string) api.JobSpec {
	j := svc.Job(id)
	return normalized(api.JobSpec{Name: j.Name, Command: j.Command, Env: j.Env, Workdir: j.Workdir,
		GPUs: j.GPUsRequested, MinGPUs: &j.MinGPUs, MaxGPUs: &j.MaxGPUs, GPUType: j.GPUType, Model: j.Model,
		Priority: j.Priority, User: j.User, GracePeriodS: &j.GracePeriodS})
}

// normalized returns s with its defaults made explicit, as the server
// stores it.
func normalized(s api.JobSpec) api.JobSpec {
	lo, hi, grace := s.Min(), s.Max(), s.Grace()
	s.MinGPUs, s.MaxGPUs, s.GracePeriodS = &lo, &hi, &grace
	s.GPUType = strings.ToLower(s.GPUType)
	if len(s.Env) == 0 {
		s.Env = nil
	}
	return s
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
	svc, url := service(t)
	out := mustRun(t, "submit", "--server", url, "--gpus", "2", "--max-gpus", "4", "--env", "A=1",
		"--env", "B=x=y,z", "--grace-period", "2m", "--priority", "3", "--gpu-type", "v100",
		"--", "sh", "-c", "echo hi")
	if out != "j1\n" {
		t.Fatalf("stdout %q, want the ID alone", out)
	}
	want := normalized(api.JobSpec{Name: "sh", Command: []string{"sh", "-c", "echo hi"}, GPUs: 2, MaxGPUs: new(4),
		Env: map[string]string{"A": "1", "B": "x=y,z"}, GracePeriodS: new(120), Priority: 3, GPUType: "v100"})
	if got := storedSpec(svc, "j1"); !reflect.DeepEqual(got, want) {
		t.Errorf("server stored\n %+v\nwant\n %+v", got, want)
	}
	// Flags after -- belong to the command.
	mustRun(t, "submit", "--server", url, "--name", "n", "--gpus", "1", "--", "python", "train.py", "--gpus", "8", "-o", "x")
	if spec := storedSpec(svc, "j2"); !slices.Equal(spec.Command, []string{"python", "train.py", "--gpus", "8", "-o", "x"}) ||
		spec.GPUs != 1 || spec.Name != "n" {
		t.Errorf("spec %+v", spec)
	}
}

func TestSubmitFile(t *testing.T) {
	svc, url := service(t)
	if out := mustRun(t, "submit", "--server", url, jobsdata+"example.yaml"); out != "j1\n" {
		t.Fatalf("stdout %q", out)
	}
	data, _ := os.ReadFile(jobsdata + "example.yaml")
	want, err := api.DecodeSpecYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := storedSpec(svc, "j1"); !reflect.DeepEqual(got, normalized(want)) {
		t.Errorf("server stored\n %+v\nwant\n %+v", got, normalized(want))
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
	svc, url := service(t)
	var out bytes.Buffer
	root := cli.NewRoot(&out, io.Discard)
	root.SetIn(strings.NewReader("command: [nvidia-smi]\ngpus: 1\n"))
	root.SetArgs([]string{"submit", "--server", url, "-"})
	if err := root.Execute(); err != nil || out.String() != "j1\n" {
		t.Fatalf("submit -: %v, %q", err, out.String())
	}
	if s := storedSpec(svc, "j1"); !slices.Equal(s.Command, []string{"nvidia-smi"}) || s.GPUs != 1 {
		t.Errorf("spec %+v", s)
	}
}

func TestSubmitBadInput(t *testing.T) {
	svc, url := service(t)
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
		{"cpus not a quantity", []string{"--gpus", "1", "--cpus", "x", "--", "x"}, `--cpus: "x" is not a quantity`},
		{"memory fraction", []string{"--gpus", "1", "--memory", "1.5", "--", "x"}, `--memory: "1.5" is not a whole number`},
		{"resource without =", []string{"--gpus", "1", "--resource", "rdma", "--", "x"}, `--resource "rdma": want NAME=N`},
		{"resource twice", []string{"--gpus", "1", "--resource", "a=1", "--resource", "a=2", "--", "x"}, "--resource a given twice"},
		{"cpu as resource", []string{"--gpus", "1", "--resource", "cpu=1", "--", "x"}, "--resource cpu: give CPUs as cpus"},
		{"resource and file", []string{"--cpus", "1", jobsdata + "example.yaml"}, "--cpus cannot be combined with a spec file"},
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
	if r := svc.Requests(); len(r) != 0 {
		t.Errorf("bad input reached the server: %q", r)
	}
}

// TestServerRejects: a 400 or 413 from the server is bad input (exit 2)
// and shows the server's message; a 5xx exits with 1. The 413 comes from
// the real server; the CLI checks a spec with the server's own rules
// before sending it, so a 400 (from a server with stricter rules than this
// CLI, say) and a 500 are canned answers of an inline handler.
func TestServerRejects(t *testing.T) {
	svc, url := service(t)
	huge := strings.Repeat("x", api.MaxBodyBytes)
	code, out, errs := run(t, "submit", "--server", url, "--gpus", "1", "--", "echo", huge)
	if want := "gpusched: server: 413 request body larger than 1048576 bytes"; code != 2 || out != "" || strings.TrimSpace(errs) != want {
		t.Errorf("huge spec: exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errs, want)
	}
	if jobs := mustRun(t, "jobs", "--server", url, "-o", "json"); strings.TrimSpace(jobs) != "[]" {
		t.Errorf("the server stored a rejected spec: %s", jobs)
	}
	if r := svc.Requests(); !slices.Contains(r, "POST /v1/jobs") {
		t.Errorf("the huge spec did not reach the server: %q", r)
	}

	answers := map[string]struct {
		code int
		body string
	}{
		"strict": {400, `{"error":"gpu_type: no node has GPUs of type \"a100\"","field":"gpu_type"}`},
		"boom":   {500, `{"error":"store: disk full"}`},
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s api.JobSpec
		json.NewDecoder(r.Body).Decode(&s)
		a := answers[s.Name]
		w.WriteHeader(a.code)
		io.WriteString(w, a.body)
	}))
	defer ts.Close()
	for name, want := range map[string]struct {
		code int
		msg  string
	}{
		"strict": {2, `gpusched: server: 400 gpu_type: no node has GPUs of type "a100"`},
		"boom":   {1, "gpusched: server: 500 store: disk full"},
	} {
		code, out, errs := run(t, "submit", "--server", ts.URL, "--name", name, "--gpus", "1", "--", "x")
		if code != want.code || out != "" || strings.TrimSpace(errs) != want.msg {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q", name, code, out, errs, want.code, want.msg)
		}
	}
}

func TestJobsOutput(t *testing.T) {
	svc, url := serviceWithNode(t, "v100=4")
	if out := mustRun(t, "jobs", "--server", url, "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("no jobs as JSON: %q, want []", out)
	}
	// j1 runs; j2 stays queued: no node has a100 GPUs.
	mustRun(t, "submit", "--server", url, "--name", "resnet", "--gpus", "2", "--grace-period", "1", "--", "sleep", "600")
	mustRun(t, "submit", "--server", url, "--gpus", "4", "--min-gpus", "2", "--max-gpus", "8", "--gpu-type", "a100", "--", "sleep", "1")
	svc.WaitState("j1", api.Running)

	table := mustRun(t, "jobs", "--server", url)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID NAME STATE GPUS ALLOC SUBMITTED" {
		t.Fatalf("table:\n%s", table)
	}
	row := regexp.MustCompile(`^j1 resnet running 2 n0/\d-\d \d+s ago$`)
	if got := strings.Join(strings.Fields(lines[1]), " "); !row.MatchString(got) {
		t.Errorf("row %q, want it to match %s", got, row)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); !regexp.MustCompile(`^j2 sleep queued 4 \(2-8\) - \d+s ago$`).MatchString(got) {
		t.Errorf("row %q", got)
	}

	var arr []map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "jobs", "--server", url, "-o", "json")), &arr); err != nil || len(arr) != 2 {
		t.Fatalf("jobs -o json is not an array of 2: %v", err)
	}
	for _, k := range []string{"id", "name", "state", "gpus_requested", "alloc", "exit_code", "submitted_at", "started_at", "finished_at"} {
		for i := range arr {
			if _, ok := arr[i][k]; !ok {
				t.Errorf("job JSON lacks %q: %v", k, arr[i])
			}
		}
	}
	if _, err := time.Parse(time.RFC3339, arr[0]["started_at"].(string)); err != nil {
		t.Errorf("started_at not RFC 3339: %v", err)
	}
	if arr[1]["started_at"] != nil || arr[1]["exit_code"] != nil {
		t.Errorf("a queued job's started_at and exit_code: %v, %v; want null", arr[1]["started_at"], arr[1]["exit_code"])
	}

	var jobs []api.Job
	if err := yaml.Unmarshal([]byte(mustRun(t, "jobs", "--server", url, "-o", "yaml")), &jobs); err != nil ||
		len(jobs) != 2 || jobs[1].MaxGPUs != 8 || len(jobs[0].Alloc) != 2 {
		t.Errorf("jobs -o yaml: %v, %+v", err, jobs)
	}

	out := mustRun(t, "jobs", "--server", url, "--state", "running", "-o", "json")
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 || jobs[0].ID != "j1" {
		t.Errorf("--state running: %v, %s", err, out)
	}
	if !slices.Contains(svc.Requests(), "GET /v1/jobs?state=running") {
		t.Errorf("the state filter did not reach the server: %q", svc.Requests())
	}
	if code, _, errs := run(t, "jobs", "--server", url, "--state", "sleeping"); code != 2 || !strings.Contains(errs, "queued, paused, running") {
		t.Errorf("--state sleeping: exit %d, %s", code, errs)
	}
	if code, _, _ := run(t, "jobs", "--server", url, "-o", "wide"); code != 2 {
		t.Errorf("-o wide: exit %d, want 2", code)
	}
}

func TestJobDetailAndCancel(t *testing.T) {
	svc, url := serviceWithNode(t, "v100=4")
	mustRun(t, "submit", "--server", url, "--name", "hi", "--gpus", "1", "--env", "K=V", "--grace-period", "1",
		"--", "sh", "-c", "echo hi; exec sleep 600")
	alloc := svc.WaitState("j1", api.Running).Alloc
	if len(alloc) != 1 {
		t.Fatalf("alloc %q, want one GPU", alloc)
	}
	out := mustRun(t, "job", "j1", "--server", url)
	for _, want := range []string{"ID:", "j1", "State:", "running", "Command:", "sh -c 'echo hi; exec sleep 600'",
		"Env:", "K=V", "Alloc:", alloc[0], "Exit code:", "Events:", "submitted", "started"} {
		if !strings.Contains(out, want) {
			t.Errorf("job detail lacks %q:\n%s", want, out)
		}
	}
	var j api.Job
	if err := json.Unmarshal([]byte(mustRun(t, "job", "j1", "--server", url, "-o", "json")), &j); err != nil ||
		j.ID != "j1" || len(j.Events) < 2 || j.Events[0].Event != "submitted" || j.Events[len(j.Events)-1].Event != "started" {
		t.Errorf("job -o json: %v, %+v", err, j)
	}
	if code, out, errs := run(t, "job", "j9", "--server", url); code != 1 || out != "" || strings.TrimSpace(errs) != "gpusched: job j9 not found" {
		t.Errorf("job j9: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := run(t, "job", "--server", url); code != 2 {
		t.Errorf("job without ID: exit %d, want 2", code)
	}

	// A running job stays running until its process is gone (docs/SERVER.md).
	if out := mustRun(t, "cancel", "j1", "--server", url); out != "j1 running\n" {
		t.Errorf("cancel of a running job: %q, want it still running while it stops", out)
	}
	svc.WaitState("j1", api.Cancelled)
	if out := mustRun(t, "job", "j1", "--server", url); !strings.Contains(out, "cancelled by the user") {
		t.Errorf("cancelled job's detail lacks the reason:\n%s", out)
	}
	if code, out, errs := run(t, "cancel", "j1", "--server", url); code != 1 || out != "" ||
		strings.TrimSpace(errs) != "gpusched: server: 409 job j1 is already cancelled" {
		t.Errorf("second cancel: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A queued job (no node has a100 GPUs) is cancelled at once.
	mustRun(t, "submit", "--server", url, "--gpus", "1", "--gpu-type", "a100", "--", "sleep", "1")
	if out := mustRun(t, "cancel", "j2", "--server", url); out != "j2 cancelled\n" {
		t.Errorf("cancel of a queued job: %q", out)
	}
	if code, _, errs := run(t, "cancel", "j9", "--server", url); code != 1 || !strings.Contains(errs, "job j9 not found") {
		t.Errorf("cancel j9: exit %d, %s", code, errs)
	}
}

// TestFailedJob: a command that exits with 3 fails its job; every output
// shows the exit code.
func TestFailedJob(t *testing.T) {
	svc, url := serviceWithNode(t, "v100=1")
	mustRun(t, "submit", "--server", url, "--gpus", "1", "--", "sh", "-c", "echo hi; exit 3")
	if j := svc.WaitState("j1", api.Failed); j.ExitCode == nil || *j.ExitCode != 3 || !strings.Contains(j.Reason, "exited with code 3") {
		t.Fatalf("failed job %+v", j)
	}
	table := mustRun(t, "jobs", "--server", url)
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 2 ||
		!regexp.MustCompile(`^j1 sh failed\(3\) 1 - \d+s ago$`).MatchString(strings.Join(strings.Fields(lines[1]), " ")) {
		t.Errorf("table:\n%s", table)
	}
	if out := mustRun(t, "job", "j1", "--server", url); !regexp.MustCompile(`(?m)^Exit code:\s+3$`).MatchString(out) {
		t.Errorf("job detail lacks the exit code:\n%s", out)
	}
	var j api.Job
	if err := json.Unmarshal([]byte(mustRun(t, "job", "j1", "--server", url, "-o", "json")), &j); err != nil ||
		j.ExitCode == nil || *j.ExitCode != 3 || j.FinishedAt == nil {
		t.Errorf("job -o json: %v, %+v", err, j)
	}
	waitFor(t, "the job's output", func() bool { return mustRun(t, "logs", "j1", "--server", url) == "hi\n" })
}

// waitFor polls until cond holds or fails the test after servicetest.Timeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(servicetest.Timeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestLogsFollow follows a real job that prints a line, waits for the
// test, prints the next, and so on.
func TestLogsFollow(t *testing.T) {
	svc, url := serviceWithNode(t, "v100=1")
	g1, g2 := servicetest.NewGate(t, "g1"), servicetest.NewGate(t, "g2")
	mustRun(t, "submit", "--server", url, "--gpus", "1", "--grace-period", "1", "--", "sh", "-c",
		"echo 'epoch 1'; "+g1.Wait()+"; echo 'epoch 2'; "+g2.Wait()+"; echo done")
	waitFor(t, "the first line", func() bool { return mustRun(t, "logs", "j1", "--server", url) == "epoch 1\n" })
	var out servicetest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- cli.Execute([]string{"logs", "-f", "j1", "--server", url}, &out, io.Discard) }()
	waitFor(t, "the first line", func() bool { return out.String() == "epoch 1\n" })
	g1.Open(t)
	waitFor(t, "the streamed line", func() bool { return out.String() == "epoch 1\nepoch 2\n" })
	select {
	case code := <-done:
		t.Fatalf("logs -f ended (exit %d) while the job runs", code)
	case <-time.After(50 * time.Millisecond):
	}
	g2.Open(t)
	select {
	case code := <-done:
		if code != 0 || out.String() != "epoch 1\nepoch 2\ndone\n" {
			t.Errorf("logs -f: exit %d, %q", code, out.String())
		}
	case <-time.After(servicetest.Timeout):
		t.Fatal("logs -f did not end with the job")
	}
	if j := svc.Job("j1"); j.State != api.Succeeded {
		t.Errorf("logs -f ended with the job %s, want succeeded", j.State)
	}
	if code, _, errs := run(t, "logs", "j9", "--server", url); code != 1 || !strings.Contains(errs, "job j9 not found") {
		t.Errorf("logs j9: exit %d, %s", code, errs)
	}
	if code, _, _ := run(t, "logs", "j1", "--server", url, "-o", "json"); code != 2 {
		t.Errorf("logs -o json: exit %d, want 2", code)
	}
}

// TestNodesOutput lists a ready node running a job and a node whose agent
// stopped (down after the heartbeat timeout, 1 s here). Tables of nodes
// the real server cannot have (mixed GPU types, old heartbeats) are
// TestWriteNodesTable's.
func TestNodesOutput(t *testing.T) {
	t.Setenv("GPUSCHED_SERVER", "")
	svc := servicetest.Start(t, func(c *server.Config) {
		c.HeartbeatInterval, c.HeartbeatTimeout = 100*time.Millisecond, time.Second
	})
	url := svc.URL
	svc.StartAgent("n0", "v100=4")
	svc.StartAgent("n1", "k80=2").Stop()
	mustRun(t, "submit", "--server", url, "--gpus", "1", "--gpu-type", "v100", "--grace-period", "1", "--", "sleep", "600")
	svc.WaitState("j1", api.Running)
	svc.WaitNode("n1", api.NodeDown)

	table := mustRun(t, "nodes", "--server", url)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME STATE GPUS USED TYPE LAST-HEARTBEAT" {
		t.Fatalf("table:\n%s", table)
	}
	for i, want := range []string{`^n0 ready 4 1 v100 \d+s ago$`, `^n1 down 2 0 k80 \d+s ago$`} {
		if got := strings.Join(strings.Fields(lines[i+1]), " "); !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("row %q, want it to match %s", got, want)
		}
	}
	var nodes []api.Node
	if err := json.Unmarshal([]byte(mustRun(t, "nodes", "--server", url, "-o", "json")), &nodes); err != nil ||
		len(nodes) != 2 || nodes[0].Name != "n0" || nodes[0].GPUsUsed != 1 || len(nodes[0].Replicas) != 1 {
		t.Fatalf("nodes -o json: %v, %+v", err, nodes)
	}
	if hb := nodes[0].LastHeartbeat; hb.IsZero() || time.Since(hb) > servicetest.Timeout || hb.Location() != time.UTC {
		t.Errorf("n0's last_heartbeat %v, want a recent UTC time", hb)
	}
	if err := yaml.Unmarshal([]byte(mustRun(t, "nodes", "--server", url, "-o", "yaml")), &nodes); err != nil ||
		len(nodes) != 2 || nodes[1].State != api.NodeDown || nodes[1].GPUs[0].Type != "k80" {
		t.Errorf("nodes -o yaml: %v, %+v", err, nodes)
	}
}

func TestServerResolution(t *testing.T) {
	_, url := service(t)
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
	svc, url := service(t)
	code, out, errs := exe(t, "submit", "--server", url, "--gpus", "1", "--", "sh", "-c", "echo hi; echo $HOME", "x y")
	if code != 0 || out != "j1\n" {
		t.Fatalf("exit %d, %q, %s", code, out, errs)
	}
	if s := storedSpec(svc, "j1"); !slices.Equal(s.Command, []string{"sh", "-c", "echo hi; echo $HOME", "x y"}) {
		t.Errorf("command %q", s.Command)
	}
	if code, _, _ := exe(t, "job", "j9", "--server", url); code != 1 {
		t.Errorf("job j9: exit %d, want 1", code)
	}
}
