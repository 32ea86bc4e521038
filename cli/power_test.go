package cli_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/internal/testbed/servicetest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/server"
)

// agentCall sends one agent-protocol request as JSON and decodes the answer.
func agentCall(t *testing.T, method, url string, in, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// TestProfilesPowerSamplesAndEnergy speaks the agent protocol to a real
// server (progress and power readings in status reports), then reads what
// it learned with gpusched profiles, job and power-samples.
func TestProfilesPowerSamplesAndEnergy(t *testing.T) {
	t.Setenv("GPUSCHED_SERVER", "")
	svc := servicetest.Start(t, nil)
	url := svc.URL
	var reply api.RegisterReply
	gpus := []api.GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "v100"}, {Index: 2, Type: "v100"}, {Index: 3, Type: "v100"}}
	agentCall(t, "POST", url+"/v1/agents/register", api.Register{Name: "n0", Addr: "n0", GPUs: gpus}, &reply)
	mustRun(t, "submit", "--server", url, "--gpus", "2", "--model", "CycleGAN", "--", "sleep", "600")
	var w api.Work
	deadline := time.Now().Add(servicetest.Timeout)
	for len(w.Replicas) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no work for n0")
		}
		agentCall(t, "GET", url+"/v1/agents/n0/work?after=0&wait=1s", nil, &w)
	}
	r := w.Replicas[0]
	t0 := time.Now().Add(-time.Minute)
	report := func(at time.Duration, steps int64, load, nodeW float64) {
		rs := api.ReplicaStatus{ID: r.ID, Job: r.Job, Phase: api.ReplicaRunning, PID: 1, StartedAt: t0,
			Progress: &api.ReplicaProgress{Steps: steps, At: t0.Add(at)}}
		p := &api.PowerReading{At: t0.Add(at), Load: load, NodeW: nodeW}
		var out api.Work
		agentCall(t, "POST", url+"/v1/agents/n0/status", api.Status{Replicas: []api.ReplicaStatus{rs}, Version: w.Version, Power: p}, &out)
	}
	report(0, 100, 0.5, 1000)
	report(20*time.Second, 300, 0.5, 1400) // 10 steps/s; 24 kJ, half of it the job's (2 of 4 GPUs)

	table := mustRun(t, "profiles", "--server", url)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "MODEL GPU-TYPE GPUS STEPS/S SAMPLES SOURCE" ||
		strings.Join(strings.Fields(lines[1]), " ") != "CycleGAN v100 2 10 1 online" {
		t.Errorf("profiles:\n%s", table)
	}
	var ps []api.ProfileEntry
	if err := json.Unmarshal([]byte(mustRun(t, "profiles", "--server", url, "--all", "-o", "json")), &ps); err != nil ||
		len(ps) < 2 || ps[0].Source != api.ProfileOnline || ps[0].StepsPerS != 10 || ps[1].Source != api.ProfilePreRun {
		t.Errorf("profiles --all -o json: %v %+v", err, ps[:min(len(ps), 2)])
	}

	detail := mustRun(t, "job", "--server", url, r.Job)
	if !regexp.MustCompile(`(?m)^Energy:\s+0\.00333 kWh$`).MatchString(detail) { // 12 kJ
		t.Errorf("job detail lacks the energy line:\n%s", detail)
	}

	csv := mustRun(t, "power-samples", "--server", url, "--node", "n0")
	byType, err := calibrate.ParseCSV("power-samples", strings.NewReader(csv))
	if err != nil {
		t.Fatalf("%v\n%s", err, csv)
	}
	// Samples at 0 s and 20 s, both at load 0.5: averaged. The job's rate
	// was measured by the second: its throughput is 10, the first's is
	// the busy GPUs.
	want := calibrate.Sample{Load: 0.5, PowerW: 1200, Throughput: (2 + 10) / 2.0}
	if got := byType["n0"]; len(got) != 1 || got[0] != want {
		t.Errorf("power-samples: %+v, want n0: [%+v]\n%s", byType, want, csv)
	}
	if code, _, errs := run(t, "power-samples", "--server", url, "--node", "nope"); code != 1 || !strings.Contains(errs, "nope") {
		t.Errorf("power-samples of an unknown node: exit %d, %s", code, errs)
	}
	if code, _, _ := run(t, "power-samples", "--server", url); code != 2 {
		t.Errorf("power-samples without --node: exit %d, want 2", code)
	}
}

// TestPowerSamplesToken: power-samples takes --token, as every other client
// command does, for a server that requires authentication (found on a real
// H200: the flag was missing, only $GPUSCHED_TOKEN worked).
func TestPowerSamplesToken(t *testing.T) {
	t.Setenv("GPUSCHED_SERVER", "")
	t.Setenv("GPUSCHED_TOKEN", "")
	t.Setenv("GPUSCHED_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	var tokenFile string
	svc := servicetest.Start(t, func(c *server.Config) {
		tokenFile = filepath.Join(c.DataDir, "admin.token")
		c.Auth = &server.AuthConfig{AdminTokenFile: tokenFile}
	})
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "power-samples", "--server", svc.URL, "--node", "n0"); code == 0 || !strings.Contains(errs, "401") {
		t.Errorf("without a token: exit %d, %s", code, errs)
	}
	// Authenticated, the request reaches the handler: no node n0 here.
	if code, _, errs := run(t, "power-samples", "--server", svc.URL, "--token", strings.TrimSpace(string(raw)), "--node", "n0"); code == 0 ||
		!strings.Contains(errs, `404 no node "n0"`) {
		t.Errorf("with --token: exit %d, %s", code, errs)
	}
}
