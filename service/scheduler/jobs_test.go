package scheduler

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
)

// TestJobsAPI submits, lists, gets and cancels jobs through the
// lifecycle's methods, with their errors (package server's
// TestSubmitListGetCancel does the same over HTTP).
func TestJobsAPI(t *testing.T) {
	h := newHarness(t, nil)
	j := h.submit(`{"name":"resnet","command":["python","train.py"],"gpus":4,"gpu_type":"V100"}`)
	if j.ID != "j1" || j.State != api.Queued || j.GPUType != "v100" || j.Alloc == nil || j.Events != nil {
		t.Fatalf("submitted job: %+v", j)
	}
	if rec, ok := h.stored("j1"); !ok || rec.State != api.Queued || rec.Name != "resnet" {
		t.Fatalf("store after Submit: %+v %v", rec, ok)
	}
	if _, err := h.s.Submit(context.Background(), api.JobSpec{Command: []string{"x"}, GPUs: 0}); !isField(err, "gpus") {
		t.Errorf("Submit of an invalid spec: %v, want an *api.FieldError naming gpus", err)
	}
	if j2 := h.submit(`{"command":["true"],"gpus":1}`); j2.ID != "j2" {
		t.Errorf("the job after a refused one is %s, want j2", j2.ID)
	}
	if _, err := h.s.Progress("j2", api.Progress{Steps: -1}); !isField(err, "steps") {
		t.Errorf("Progress with negative steps: %v, want an *api.FieldError naming steps", err)
	}
	for _, tc := range []struct {
		states []api.State
		want   string
	}{
		{nil, "j1,j2"},
		{[]api.State{api.Queued}, "j1,j2"},
		{[]api.State{api.Running, api.Succeeded}, ""},
	} {
		var ids []string
		list := h.s.Jobs(tc.states...)
		for _, x := range list {
			ids = append(ids, x.ID)
			if x.Events != nil {
				t.Errorf("Jobs(%v): events in the list", tc.states)
			}
		}
		if strings.Join(ids, ",") != tc.want || list == nil {
			t.Errorf("Jobs(%v): %v, want %s", tc.states, ids, tc.want)
		}
	}
	if got := h.job("j1"); len(got.Events) != 1 || got.Events[0].Event != "submitted" || got.Reason == "" {
		t.Errorf("Job(j1): events %+v, reason %q", got.Events, got.Reason)
	}
	if c := h.cancel("j1"); c.State != api.Cancelled || c.FinishedAt == nil {
		t.Errorf("cancelled: %+v", c)
	}
	_, err := h.s.Cancel("j1")
	wantKind(t, "cancel of an ended job", err, ErrConflict)
	if err == nil || err.Error() != "job j1 is already cancelled" {
		t.Errorf("cancel of an ended job: %v", err)
	}
	_, err = h.s.Cancel("j9")
	wantKind(t, "cancel of an unknown job", err, ErrNotFound)
	_, err = h.s.Job("j9")
	wantKind(t, "an unknown job", err, ErrNotFound)
	if err == nil || err.Error() != `no job "j9"` || errors.Is(err, ErrConflict) {
		t.Errorf("an unknown job: %v", err)
	}
	_, _, err = h.s.Logs().Status("j9")
	wantKind(t, "logs of an unknown job", err, ErrNotFound)
}

// isField reports whether err is an *api.FieldError naming field.
func isField(err error, field string) bool {
	fe, ok := errors.AsType[*api.FieldError](err)
	return ok && fe.Field == field
}

func TestNewRefusesSRTF(t *testing.T) {
	_, err := New(settings.Config{DataDir: t.TempDir(), Names: recipe.Names{Policy: "srtf"}})
	if err == nil || !strings.Contains(err.Error(), "srtf") || !errors.Is(err, settings.ErrConfig) {
		t.Fatalf("New with srtf: %v", err)
	}
	if _, err := New(settings.Config{DataDir: t.TempDir(), HeartbeatInterval: 5e9, HeartbeatTimeout: 1e9}); !errors.Is(err, settings.ErrConfig) {
		t.Fatalf("New with a heartbeat timeout below the interval: %v", err)
	}
}

// TestNoTransport keeps the lifecycle free of transports: no file of the
// package imports net/http, an HTTP helper or a package of the service
// that serves or calls it (server, client, agent). A new shell or
// transport reuses it as it is.
func TestNoTransport(t *testing.T) {
	banned := []string{"net/http", "github.com/prometheus/client_golang/prometheus/promhttp",
		"github.com/gpusched/gpusched/service/server", "github.com/gpusched/gpusched/service/client",
		"github.com/gpusched/gpusched/service/agent", "github.com/gpusched/gpusched/cli"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(banned, p) || strings.HasPrefix(p, "net/http/") {
				t.Errorf("%s imports %s: the lifecycle knows no transport", name, p)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("checked only %d files", checked)
	}
}
