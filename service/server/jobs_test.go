package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
)

func TestSubmitListGetCancel(t *testing.T) {
	h := newHarness(t, nil)
	j := h.submit(`{"name":"resnet","command":["python","train.py"],"env":{"K":"V"},"gpus":4,"min_gpus":2,"max_gpus":8,"gpu_type":"V100","priority":3,"user":"alice"}`)
	if j.ID != "j1" || j.State != api.Queued || j.GPUsRequested != 4 || j.MinGPUs != 2 || j.MaxGPUs != 8 ||
		j.GPUType != "v100" || j.GracePeriodS != api.DefaultGracePeriodS || j.Alloc == nil || j.ExitCode != nil {
		t.Fatalf("submitted job: %+v", j)
	}
	if rec, ok := h.stored("j1"); !ok || rec.State != api.Queued || rec.Name != "resnet" {
		t.Fatalf("store after the 201: %+v %v", rec, ok)
	}
	j2 := h.submit(`{"command":["true"],"gpus":1}`)
	if j2.ID != "j2" || j2.Name != "j2" {
		t.Fatalf("second job: %+v", j2)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"j1", "j2"}},
		{"?state=queued", []string{"j1", "j2"}},
		{"?state=running,succeeded", nil},
	} {
		var list api.JobList
		h.call("GET", "/v1/jobs"+tc.query, nil, http.StatusOK, &list)
		var ids []string
		for _, x := range list.Jobs {
			ids = append(ids, x.ID)
			if x.Events != nil {
				t.Errorf("list %q: events in the list", tc.query)
			}
		}
		if strings.Join(ids, ",") != strings.Join(tc.want, ",") || list.Jobs == nil {
			t.Errorf("list %q: %v, want %v", tc.query, ids, tc.want)
		}
	}
	got := h.job("j1")
	if len(got.Events) != 1 || got.Events[0].Event != "submitted" || got.Reason == "" {
		t.Errorf("get j1: events %+v, reason %q", got.Events, got.Reason)
	}
	var c api.Job
	h.call("POST", "/v1/jobs/j1/cancel", nil, http.StatusOK, &c)
	if c.State != api.Cancelled || c.FinishedAt == nil {
		t.Errorf("cancelled: %+v", c)
	}
	if rec, _ := h.stored("j1"); rec.State != api.Cancelled {
		t.Errorf("store after cancel: %s", rec.State)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/v1/jobs/j1/cancel", http.StatusConflict},
		{"POST", "/v1/jobs/j9/cancel", http.StatusNotFound},
		{"GET", "/v1/jobs/j9", http.StatusNotFound},
		{"GET", "/v1/jobs/j9/logs", http.StatusNotFound},
		{"GET", "/v1/jobs?state=done", http.StatusBadRequest},
		{"DELETE", "/v1/jobs/j1", http.StatusMethodNotAllowed},
		{"PUT", "/v1/jobs", http.StatusMethodNotAllowed},
		{"GET", "/v1/jobs/j1/cancel", http.StatusMethodNotAllowed},
		{"GET", "/v1/nope", http.StatusNotFound},
		{"GET", "/v1/jobs/", http.StatusNotFound},
		{"GET", "/healthz", http.StatusOK},
	} {
		code, data := h.do(tc.method, tc.path, nil)
		var e api.Error
		if code != tc.want {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, code, tc.want, data)
		} else if code >= 400 && (json.Unmarshal(data, &e) != nil || e.Error == "") {
			t.Errorf("%s %s: body is no api.Error: %s", tc.method, tc.path, data)
		}
	}
}

func TestSubmitRejectsBadInput(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		name, body string
		code       int
		field      string
	}{
		{"negative gpus", `{"command":["x"],"gpus":-1}`, 400, "gpus"},
		{"zero gpus", `{"command":["x"]}`, 400, "gpus"},
		{"min above max", `{"command":["x"],"gpus":4,"min_gpus":4,"max_gpus":2}`, 400, "max_gpus"},
		{"min above gpus", `{"command":["x"],"gpus":4,"min_gpus":5}`, 400, "min_gpus"},
		{"empty command", `{"command":[],"gpus":1}`, 400, "command"},
		{"no command", `{"gpus":1}`, 400, "command"},
		{"unknown field", `{"command":["x"],"gpus":1,"gpu":2}`, 400, "gpu"},
		{"wrong type", `{"command":"x","gpus":1}`, 400, "command"},
		{"bad env name", `{"command":["x"],"gpus":1,"env":{"1X":"y"}}`, 400, "env"},
		{"negative grace", `{"command":["x"],"gpus":1,"grace_period_s":-1}`, 400, "grace_period_s"},
		{"malformed", `{"command":["x"],`, 400, ""},
		{"trailing data", `{"command":["x"],"gpus":1} {}`, 400, ""},
		{"empty body", ``, 400, ""},
		{"too large", `{"command":["` + strings.Repeat("a", api.MaxBodyBytes) + `"],"gpus":1}`, 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := h.do("POST", "/v1/jobs", tc.body)
			var e api.Error
			if err := json.Unmarshal(data, &e); err != nil {
				t.Fatalf("body is no api.Error: %v: %s", err, data)
			}
			if code != tc.code || e.Field != tc.field || e.Error == "" {
				t.Errorf("got %d %+v, want %d field %q", code, e, tc.code, tc.field)
			}
			if n := h.storedJobs(); n != 0 {
				t.Errorf("%d jobs in the store after a rejected request", n)
			}
		})
	}
}

// TestNewRefusesSRTF: New passes the scheduler's configuration errors on
// (settings.ErrConfig: the command line's usage errors).
func TestNewRefusesSRTF(t *testing.T) {
	_, err := New(Config{Config: settings.Config{DataDir: t.TempDir(), Names: recipe.Names{Policy: "srtf"}}})
	if err == nil || !strings.Contains(err.Error(), "srtf") || !errors.Is(err, settings.ErrConfig) {
		t.Fatalf("New with srtf: %v", err)
	}
	if _, err := New(Config{Config: settings.Config{DataDir: t.TempDir(), HeartbeatInterval: 5e9, HeartbeatTimeout: 1e9}}); err == nil {
		t.Fatal("New accepted a heartbeat timeout below the interval")
	}
}
