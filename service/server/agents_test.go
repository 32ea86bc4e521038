package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestWorkLongPoll: a long-poll over HTTP waiting on the current version
// wakes up on a submission and delivers the replica; bad parameters are
// refused naming them. (The scheduler's TestAgentRunsJobs follows the
// whole protocol.)
func TestWorkLongPoll(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	w0 := a.work(0, "0")
	if len(w0.Replicas) != 0 {
		t.Fatalf("fresh node has work: %+v", w0)
	}
	got := make(chan api.Work, 1)
	go func() {
		var w api.Work
		h.call("GET", "/v1/agents/n1/work?after="+strconv.FormatInt(w0.Version, 10)+"&wait=10s", nil, http.StatusOK, &w)
		got <- w
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	j := h.submit(`{"command":["python","train.py"],"gpus":2}`)
	var w api.Work
	select {
	case w = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("long-poll did not wake up on the submission")
	}
	if time.Since(start) > 2*time.Second || w.Version <= w0.Version || len(w.Replicas) != 1 || w.Replicas[0].Job != j.ID {
		t.Fatalf("work after submit (%s): %+v", time.Since(start), w)
	}
	if rec, _ := h.stored(j.ID); rec.State != api.Running {
		t.Fatalf("store when the work arrived: %+v", rec)
	}
	// A wait of 0.2 s (seconds) on the current version answers unchanged.
	start = time.Now()
	if again := a.work(w.Version, "0.2"); again.Version != w.Version || time.Since(start) < 150*time.Millisecond {
		t.Errorf("poll of the current version: %+v after %s", again, time.Since(start))
	}
	for _, tc := range []struct{ query, field string }{
		{"after=-1", "after"}, {"after=x", "after"}, {"wait=soon", "wait"}, {"wait=-1s", "wait"}, {"wait=6m", "wait"},
	} {
		code, data := h.do("GET", "/v1/agents/n1/work?"+tc.query, nil)
		var e api.Error
		if code != http.StatusBadRequest || json.Unmarshal(data, &e) != nil || e.Field != tc.field {
			t.Errorf("work?%s: %d %s, want 400 naming %q", tc.query, code, data, tc.field)
		}
	}
}

func TestRegisterRejects(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		name string
		reg  api.Register
		want string
	}{
		{"two types", api.Register{Name: "n", GPUs: []api.GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "k80"}}}, "gpus"},
		{"no GPUs", api.Register{Name: "n"}, "gpus"},
		{"same index twice", api.Register{Name: "n", GPUs: []api.GPU{{Index: 0, Type: "v100"}, {Index: 0, Type: "v100"}}}, "gpus"},
		{"bad name", api.Register{Name: "a:b", GPUs: []api.GPU{{Index: 0, Type: "v100"}}}, "name"},
		{"empty name", api.Register{GPUs: []api.GPU{{Index: 0, Type: "v100"}}}, "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e api.Error
			h.call("POST", "/v1/agents/register", tc.reg, http.StatusBadRequest, &e)
			if e.Field != tc.want {
				t.Errorf("field %q, want %q: %s", e.Field, tc.want, e.Error)
			}
		})
	}
	var nodes api.NodeList
	h.call("GET", "/v1/nodes", nil, http.StatusOK, &nodes)
	if len(nodes.Nodes) != 0 {
		t.Errorf("rejected registrations left nodes: %+v", nodes)
	}
	for _, p := range []string{"/v1/agents/ghost/status", "/v1/agents/ghost/logs"} {
		if code, _ := h.do("POST", p, `{"replicas":[]}`); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("POST %s of an unknown node: %d", p, code)
		}
	}
	if code, _ := h.do("GET", "/v1/agents/ghost/work", nil); code != http.StatusNotFound {
		t.Errorf("work of an unknown node: %d", code)
	}
}
