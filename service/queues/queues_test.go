package queues

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// teams is a queue layer of two queues: a (quota 2 v100, weight 1) and b
// (weight 3), plus the default queue the layer adds.
func teams(t *testing.T) (*quota.Policy, *config.QueuesSpec) {
	t.Helper()
	p, err := quota.New(policy.FIFO{}, quota.Config{Queues: []quota.Queue{
		{Name: "a", Weight: 1, Quota: map[string]int{"v100": 2}},
		{Name: "b", Weight: 3},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return p, &config.QueuesSpec{Queues: []config.QueueSpec{{Name: "a", Users: []string{"ann"}}, {Name: "b"}}}
}

func TestCheck(t *testing.T) {
	p, spec := teams(t)
	for _, tc := range []struct {
		name      string
		p         *quota.Policy
		spec      *config.QueuesSpec
		queue     string
		want      string // the resolved queue
		wantError string
	}{
		{name: "no queues, none named", queue: "", want: ""},
		{name: "no queues, the default named", queue: quota.DefaultQueue, want: quota.DefaultQueue},
		{name: "no queues, one named", queue: "a", wantError: "the server has no queues"},
		{name: "default", p: p, spec: spec, queue: "", want: quota.DefaultQueue},
		{name: "configured default", p: p, spec: &config.QueuesSpec{DefaultQueue: "b"}, queue: "", want: "b"},
		{name: "declared", p: p, spec: spec, queue: "b", want: "b"},
		{name: "unknown", p: p, spec: spec, queue: "c", wantError: "unknown queue c (known: a, b, default)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := api.JobSpec{Queue: tc.queue}
			err := Check(tc.p, tc.spec, &js)
			if tc.wantError != "" {
				var fe *api.FieldError
				if !errors.As(err, &fe) || fe.Field != "queue" || !strings.Contains(fe.Message, tc.wantError) {
					t.Fatalf("Check = %v, want a queue field error with %q", err, tc.wantError)
				}
				return
			}
			if err != nil || js.Queue != tc.want {
				t.Fatalf("Check = %v, queue %q; want nil, %q", err, js.Queue, tc.want)
			}
		})
	}
}

func TestName(t *testing.T) {
	if Name("") != quota.DefaultQueue || Name("a") != "a" {
		t.Fatalf(`Name("") = %q, Name("a") = %q`, Name(""), Name("a"))
	}
	if Default(nil) != quota.DefaultQueue {
		t.Fatalf("Default(nil) = %q", Default(nil))
	}
}

// TestView: queue a runs a 3-GPU job (one beyond its quota of 2: borrowed)
// and waits for a 2-GPU one; b waits for one of at least 1 GPU. Usage a 2,
// b 6 GPU-hours: by weight both 2, so each has half the share.
func TestView(t *testing.T) {
	if got := View(nil, nil, "", nil, nil); got.Queues == nil || len(got.Queues) != 0 {
		t.Fatalf("View without queues = %+v, want an empty list", got)
	}
	p, spec := teams(t)
	p.Restore(map[string]float64{"a": 2, "b": 6})
	c, err := model.NewCluster([]model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}}, []model.Node{{Name: "n0", GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	run := model.NewJob(model.JobSpec{ID: "r", Queue: "a", GPUs: 3, MinGPUs: 3, MaxGPUs: 3}, 0, -1, 0)
	run.State, run.Alloc = model.Running, []model.GPU{{Node: 0, Index: 0}, {Node: 0, Index: 1}, {Node: 0, Index: 2}}
	waitA := model.NewJob(model.JobSpec{ID: "w", Queue: "a", GPUs: 2, MinGPUs: 2, MaxGPUs: 2}, 1, -1, 0)
	waitB := model.NewJob(model.JobSpec{ID: "x", Queue: "b", GPUs: 4, MinGPUs: 1, MaxGPUs: 4}, 2, -1, 0)
	got := View(p, spec, "gpu-hours", []*model.Job{run, waitA, waitB}, c)
	if got.FairShare != "gpu-hours" || len(got.Queues) != 3 {
		t.Fatalf("View = %+v, want gpu-hours and 3 queues", got)
	}
	a, b := got.Queues[0], got.Queues[1]
	if a.Name != "a" || a.RunningJobs != 1 || a.Used["v100"] != 3 || a.Borrowed != 1 || a.PendingJobs != 1 || a.PendingGPUs != 2 ||
		a.UsageGPUHours != 2 || a.Share != 0.5 || len(a.Users) != 1 || a.Users[0] != "ann" {
		t.Errorf("queue a = %+v", a)
	}
	if b.Name != "b" || b.RunningJobs != 0 || b.PendingJobs != 1 || b.PendingGPUs != 1 || b.Borrowed != 0 || b.Share != 0.5 {
		t.Errorf("queue b = %+v", b)
	}
}

// TestUsage: the usage is written when due (at most every UsageEvery,
// always with force) and a new layer restores it.
func TestUsage(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := store.NewMem(store.MemOptions{})
	p, _ := teams(t)
	p.Restore(map[string]float64{"a": 1.5})
	u := NewUsage(p, st, log)
	t0 := time.Unix(1000, 0)
	data := u.Due(t0, false)
	if data == nil {
		t.Fatal("first Due = nil, want the usage")
	}
	u.Write(ctx, data)
	if d := u.Due(t0.Add(UsageEvery-time.Second), false); d != nil {
		t.Fatalf("Due within UsageEvery = %s, want nil", d)
	}
	if d := u.Due(t0.Add(time.Second), true); d == nil {
		t.Fatal("forced Due = nil")
	}
	if d := u.Due(t0.Add(UsageEvery+2*time.Second), false); d == nil {
		t.Fatal("Due after UsageEvery = nil")
	}
	p2, _ := teams(t)
	if err := NewUsage(p2, st, log).Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := p2.Usage()["a"]; got != 1.5 {
		t.Fatalf("restored usage of a = %v, want 1.5", got)
	}
	if _, err := st.Put(ctx, UsageKey, []byte("{")); err != nil {
		t.Fatal(err)
	}
	if err := NewUsage(p2, st, log).Load(ctx); err != nil {
		t.Fatalf("Load of an unreadable usage = %v, want it ignored", err)
	}
	none := NewUsage(nil, st, log)
	if none.Due(t0, true) != nil || none.Load(ctx) != nil {
		t.Fatal("a Usage without queues acts")
	}
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil || m["a"] != 1.5 {
		t.Fatalf("written usage %s: %v", data, err)
	}
}
