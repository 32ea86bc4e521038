package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// The endpoints' answers over HTTP: bodies refused naming the field, the
// statuses of the scheduler's errors, and the formats (text, CSV,
// Prometheus). What the scheduler does with the requests is its own tests'
// subject.

// TestProgressEndpoint reports progress and checkpoints over HTTP: bad
// bodies and unknown jobs are refused, a checkpoint is in the store when
// the 200 comes, plain progress is not yet, and an ended job answers 409.
func TestProgressEndpoint(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	for _, c := range []struct{ body, field string }{
		{`{}`, "steps"}, {`{"steps":-3}`, "steps"}, {`{"steps":1,"ckpt":true}`, "ckpt"}, {`nope`, ""},
	} {
		code, data := h.do("POST", "/v1/jobs/"+j.ID+"/progress", c.body)
		var e api.Error
		_ = json.Unmarshal(data, &e)
		if code != http.StatusBadRequest || e.Field != c.field {
			t.Errorf("progress %s: %d %s, want 400 naming %q", c.body, code, data, c.field)
		}
	}
	if code, _ := h.do("POST", "/v1/jobs/j99/progress", `{"steps":1}`); code != http.StatusNotFound {
		t.Errorf("progress of an unknown job: %d, want 404", code)
	}
	var got api.Job
	h.call("POST", "/v1/jobs/"+j.ID+"/progress", `{"steps":40,"checkpoint":true}`, http.StatusOK, &got)
	if got.Steps != 40 || got.CheckpointSteps != 40 || got.ProgressAt == nil || got.LastCheckpointAt == nil {
		t.Fatalf("job after a checkpoint: %+v", got)
	}
	if rec, _ := h.stored(j.ID); rec.CheckpointSteps != 40 || rec.LastCheckpointAt == nil {
		t.Errorf("checkpoint not in the store: %+v", rec)
	}
	h.call("POST", "/v1/jobs/"+j.ID+"/progress", `{"steps":55}`, http.StatusOK, &got)
	if got.Steps != 55 || got.CheckpointSteps != 40 {
		t.Errorf("job after plain progress: %+v", got)
	}
	if rec, _ := h.stored(j.ID); rec.Steps != 40 {
		t.Errorf("plain progress written at once (steps %d in the store)", rec.Steps)
	}
	a.status(agenttest.Exited(r, 0))
	h.waitState(j.ID, api.Succeeded)
	code, data := h.do("POST", "/v1/jobs/"+j.ID+"/progress", `{"steps":60}`)
	if code != http.StatusConflict || !strings.Contains(string(data), "job j1 is already succeeded") {
		t.Errorf("progress of an ended job: %d %s, want 409", code, data)
	}
}

// TestHostfileEndpoint: a running job's host list as text, 409 for a job
// that does not run, 404 for an unknown one.
func TestHostfileEndpoint(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("n1", "v100", 2).register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	h.waitState(j.ID, api.Running)
	q := h.submit(`{"command":["y"],"gpus":2}`)
	resp, err := http.Get(h.http.URL + "/v1/jobs/" + j.ID + "/hostfile")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q", ct)
	}
	if code, body := h.do("GET", "/v1/jobs/"+j.ID+"/hostfile", nil); code != http.StatusOK || string(body) != "n1:2\n" {
		t.Errorf("hostfile: %d %q", code, body)
	}
	code, body := h.do("GET", "/v1/jobs/"+q.ID+"/hostfile", nil)
	var e api.Error
	if code != http.StatusConflict || json.Unmarshal(body, &e) != nil || e.Error != "job j2 is queued: only a running job has hosts" {
		t.Errorf("hostfile of a queued job: %d %s, want 409", code, body)
	}
	if code, _ := h.do("GET", "/v1/jobs/j99/hostfile", nil); code != http.StatusNotFound {
		t.Errorf("hostfile of an unknown job: %d", code)
	}
}

// reading builds a power reading of a 4-GPU node.
func reading(at time.Time, load, node float64, gpu ...float64) *api.PowerReading {
	r := &api.PowerReading{At: at, Load: load, NodeW: node}
	for i, w := range gpu {
		r.GPUs = append(r.GPUs, api.GPUPower{Index: i, Watts: w})
	}
	return r
}

// TestPowerEndpoints sends power readings with status reports over HTTP:
// the latest are gauges in /metrics, and the samples come out of
// /v1/nodes/{name}/power-samples as the CSV gpusched calibrate reads, also
// after a restart; an unknown node is 404.
func TestPowerEndpoints(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	j1 := h.submit(`{"command":["x"],"gpus":1}`)
	j2 := h.submit(`{"command":["x"],"gpus":2}`)
	w := a.waitWork("both jobs", func(w api.Work) bool {
		return agenttest.FindReplica(w, j1.ID) != nil && agenttest.FindReplica(w, j2.ID) != nil
	})
	reps := []api.ReplicaStatus{agenttest.Running(*agenttest.FindReplica(w, j1.ID)), agenttest.Running(*agenttest.FindReplica(w, j2.ID))}
	report := func(r *api.PowerReading) {
		t.Helper()
		var got api.Work
		h.call("POST", "/v1/agents/n1/status", api.Status{Replicas: reps, Version: a.applied, Power: r}, http.StatusOK, &got)
	}
	t0 := time.Now().Add(-time.Minute)
	report(reading(t0, 0.75, 1000, 100, 200, 300, 50))
	report(reading(t0.Add(10*time.Second), 0.75, 1400, 300, 200, 100, 50))
	if h.job(j1.ID).EnergyKWh <= 0 {
		t.Errorf("no energy for %s", j1.ID)
	}
	_, body := h.do("GET", "/metrics", nil)
	for _, want := range []string{
		`gpusched_gpu_power_watts{gpu="0",node="n1"} 300`,
		`gpusched_gpu_power_watts{gpu="3",node="n1"} 50`,
		`gpusched_node_power_watts{node="n1"} 1400`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	reps = reps[:1]
	report(reading(t0.Add(20*time.Second), 0.25, 0, 60, 40, 40, 40))
	checkCSV := func(when string) {
		t.Helper()
		code, csv := h.do("GET", "/v1/nodes/n1/power-samples", nil)
		if code != http.StatusOK {
			t.Fatalf("%s: power-samples: %d %s", when, code, csv)
		}
		byType, err := calibrate.ParseCSV("power-samples", bytes.NewReader(csv))
		if err != nil {
			t.Fatalf("%s: %v\n%s", when, err, csv)
		}
		want := []calibrate.Sample{{Load: 0.25, PowerW: 180, Throughput: 1}, {Load: 0.75, PowerW: 1200, Throughput: 3}}
		if got := byType["n1"]; len(byType) != 1 || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: samples %v, want n1: %v\n%s", when, byType, want, csv)
		}
	}
	checkCSV("before the restart")
	if code, _ := h.do("GET", "/v1/nodes/nope/power-samples", nil); code != http.StatusNotFound {
		t.Errorf("power samples of an unknown node: %d, want 404", code)
	}
	h.restart()
	checkCSV("after a restart")
}

// TestProfilesEndpoint lists the learned throughputs, with the pre-run
// matrix on request; a bad prerun is 400.
func TestProfilesEndpoint(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	var list api.ProfileList
	h.call("GET", "/v1/profiles", nil, http.StatusOK, &list)
	if list.Profiles == nil || len(list.Profiles) != 0 {
		t.Errorf("GET /v1/profiles before learning: %+v", list)
	}
	j := h.submit(`{"command":["x"],"gpus":2,"model":"A0-learned"}`)
	rs := agenttest.Running(*agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID))
	now := time.Now()
	rs.Progress = &api.ReplicaProgress{Steps: 100, At: now.Add(-40 * time.Second)}
	a.status(rs)
	rs.Progress = &api.ReplicaProgress{Steps: 300, At: now.Add(-20 * time.Second)} // 200 steps in 20 s
	a.status(rs)
	h.call("GET", "/v1/profiles", nil, http.StatusOK, &list)
	want := api.ProfileEntry{Model: "A0-learned", GPUType: "v100", GPUs: 2, StepsPerS: 10, Samples: 1, Source: api.ProfileOnline}
	if len(list.Profiles) != 1 || list.Profiles[0] != want {
		t.Fatalf("GET /v1/profiles: %+v, want [%+v]", list.Profiles, want)
	}
	h.call("GET", "/v1/profiles?prerun=true", nil, http.StatusOK, &list)
	if len(list.Profiles) < 10 || list.Profiles[0] != want || list.Profiles[1].Source != api.ProfilePreRun || list.Profiles[1].Samples != 0 {
		t.Errorf("GET /v1/profiles?prerun=true: %d entries, first %+v", len(list.Profiles), list.Profiles[:min(2, len(list.Profiles))])
	}
	code, data := h.do("GET", "/v1/profiles?prerun=maybe", nil)
	var e api.Error
	if code != http.StatusBadRequest || json.Unmarshal(data, &e) != nil || e.Field != "prerun" {
		t.Errorf("prerun=maybe: %d %s, want 400 naming prerun", code, data)
	}
}

// TestDownNodeMustRegister: the agent requests of a node marked down are
// 404 with the hint to register again; after registering they work.
func TestDownNodeMustRegister(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.HeartbeatInterval, c.HeartbeatTimeout = 100*time.Millisecond, time.Second
	})
	a := h.agent("n1", "v100", 2)
	a.register()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var nodes api.NodeList
		h.call("GET", "/v1/nodes", nil, http.StatusOK, &nodes)
		if nodes.Nodes[0].State == api.NodeDown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node not marked down: %+v", nodes)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/agents/n1/status"}, {"GET", "/v1/agents/n1/work?wait=0"},
	} {
		code, data := h.do(c.method, c.path, api.Status{})
		var e api.Error
		if code != http.StatusNotFound || json.Unmarshal(data, &e) != nil ||
			e.Error != `node "n1" is not registered: register again (POST /v1/agents/register)` {
			t.Errorf("%s %s of a down node: %d %s, want 404", c.method, c.path, code, data)
		}
	}
	a.register()
	a.status()
}
