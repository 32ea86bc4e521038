package scheduler

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
)

// fulfillment configures the fulfillment scaler allowed to fill the whole
// cluster.
func fulfillment(c *settings.Config) {
	o := recipe.DefaultOptions()
	o.MaxLoad = 1
	c.Names.Scaler, c.Options = "fulfillment", &o
}

// hostfile returns the host list of job id and the error of Hostfile.
func (h *harness) hostfile(id string) (string, error) {
	h.t.Helper()
	return h.s.Hostfile(id)
}

// TestLiveResize runs an elastic job (1 to 4 GPUs) on two 2-GPU nodes with
// the fulfillment scaler: it starts on all 4; a rigid 2-GPU job makes it
// shrink in place to node n1 (same replica there, new generation, host list
// and environment; n2's replica is stopped, and the rigid job starts on n2
// only once that replica is gone, its exit not failing the job); when the
// rigid job ends, it grows back onto n2 with a new replica.
func TestLiveResize(t *testing.T) {
	h := newHarness(t, fulfillment)
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 2)
	a.register()
	b.register()
	e := h.submit(`{"command":["x"],"gpus":1,"min_gpus":1,"max_gpus":4}`)
	got := h.waitState(e.ID, api.Running)
	if strings.Join(got.Alloc, ",") != "n1/0,n1/1,n2/0,n2/1" || got.Generation != 1 {
		t.Fatalf("elastic job started on %v, generation %d; want all 4 GPUs, generation 1", got.Alloc, got.Generation)
	}
	ra := *agenttest.FindReplica(a.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	rb := *agenttest.FindReplica(b.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	if ra.ID != "j1.1.0" || rb.ID != "j1.1.1" || ra.Env["WORLD_SIZE"] != "4" {
		t.Fatalf("replicas %s %s, env %v", ra.ID, rb.ID, ra.Env)
	}
	if list, err := h.hostfile(e.ID); err != nil || list != "n1:2\nn2:2\n" {
		t.Fatalf("hostfile: %v %q", err, list)
	}

	// A rigid job arrives: the elastic job shrinks to n1.
	r := h.submit(`{"command":["y"],"gpus":2}`)
	_, err := h.hostfile(r.ID)
	wantKind(t, "hostfile of a queued job", err, ErrConflict)
	got = h.waitJob(e.ID, "shrunk", func(j api.Job) bool { return j.Generation == 2 })
	if got.State != api.Running || got.Attempt != 1 || strings.Join(got.Alloc, ",") != "n1/0,n1/1" {
		t.Fatalf("after the shrink: %+v", got)
	}
	w := a.waitWork("n1's replica updated", func(w api.Work) bool {
		x := agenttest.FindReplica(w, e.ID)
		return x != nil && x.Env["GPUSCHED_GENERATION"] == "2"
	})
	if x := agenttest.FindReplica(w, e.ID); x.ID != ra.ID || x.HostFile != "n1:2\n" || x.Env["WORLD_SIZE"] != "2" ||
		x.Env["NNODES"] != "1" || x.Env["NODE_RANK"] != "0" {
		t.Errorf("n1's replica after the shrink: %s %q %v", x.ID, x.HostFile, x.Env)
	}
	b.waitWork("n2's replica taken out", agenttest.NoReplica(e.ID))
	if list, err := h.hostfile(e.ID); err != nil || list != "n1:2\n" {
		t.Errorf("hostfile after the shrink: %v %q", err, list)
	}
	if j := h.job(r.ID); j.State != api.Queued {
		t.Fatalf("the rigid job %s before n2's replica is gone: want it waiting for the GPUs", j.State)
	}
	st := agenttest.Exited(rb, 143)
	st.Signal = "SIGTERM"
	b.status(st)
	h.waitState(r.ID, api.Running)
	rr := *agenttest.FindReplica(b.waitWork("with "+r.ID, agenttest.HasReplica(r.ID)), r.ID)
	if got = h.job(e.ID); got.State != api.Running || got.Reason != "" {
		t.Fatalf("the elastic job after its removed replica exited: %+v", got)
	}

	// The rigid job ends: the elastic job grows back onto n2.
	b.status(agenttest.Exited(rr, 0))
	got = h.waitJob(e.ID, "grown", func(j api.Job) bool { return j.Generation == 3 })
	if strings.Join(got.Alloc, ",") != "n1/0,n1/1,n2/0,n2/1" || got.Attempt != 1 {
		t.Fatalf("after the grow: %+v", got)
	}
	nb := agenttest.FindReplica(b.waitWork("a new replica on n2", agenttest.HasReplica(e.ID)), e.ID)
	if nb.ID != "j1.1.2" || nb.Env["NODE_RANK"] != "1" || nb.Env["WORLD_SIZE"] != "4" || nb.HostFile != "n1:2\nn2:2\n" ||
		nb.Env["MASTER_ADDR"] != "n1.example" {
		t.Errorf("n2's new replica: %s %q %v", nb.ID, nb.HostFile, nb.Env)
	}
	ev := eventText(h.job(e.ID))
	for _, want := range []string{"resized to 2 GPUs by the fulfillment scaler, generation 2: n1:2 (replica j1.1.1 on n2 stops)",
		"replica-exited: j1.1.1 on n2 was killed by SIGTERM",
		"resized to 4 GPUs by the fulfillment scaler, generation 3: n1:2,n2:2 (new replica j1.1.2 on n2)"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, ev)
		}
	}

	// Both replicas exit 0: the job succeeds.
	a.status(agenttest.Running(ra))
	nbr := *nb
	a.status(agenttest.Exited(ra, 0))
	b.status(agenttest.Exited(nbr, 0))
	if done := h.waitState(e.ID, api.Succeeded); done.Attempt != 1 {
		t.Errorf("done: %+v", done)
	}
	_, err = h.hostfile("j99")
	wantKind(t, "hostfile of an unknown job", err, ErrNotFound)
}

// TestRestartWhileDraining restarts the server while a replica that a
// shrink took out is still being stopped: the new server keeps it out of
// the work, keeps its GPUs held, and frees them once it is gone.
func TestRestartWhileDraining(t *testing.T) {
	h := newHarness(t, fulfillment)
	a, b := h.agent("n1", "v100", 2), h.agent("n2", "v100", 2)
	a.register()
	b.register()
	e := h.submit(`{"command":["x"],"gpus":1,"min_gpus":1,"max_gpus":4}`)
	h.waitState(e.ID, api.Running)
	ra := *agenttest.FindReplica(a.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	rb := *agenttest.FindReplica(b.waitWork("with "+e.ID, agenttest.HasReplica(e.ID)), e.ID)
	r := h.submit(`{"command":["y"],"gpus":2}`)
	h.waitJob(e.ID, "shrunk", func(j api.Job) bool { return j.Generation == 2 })
	b.waitWork("n2's replica taken out", agenttest.NoReplica(e.ID))
	h.restart()
	a.register(agenttest.Running(ra))
	b.register(agenttest.Running(rb))
	if w := b.work(0, 0); agenttest.FindReplica(w, e.ID) != nil {
		t.Fatalf("n2's removed replica is back in the work after the restart: %+v", w)
	}
	if w := a.work(0, 0); agenttest.FindReplica(w, e.ID) == nil || agenttest.FindReplica(w, e.ID).Env["GPUSCHED_GENERATION"] != "2" {
		t.Fatalf("n1's work after the restart: %+v", w)
	}
	if j := h.job(r.ID); j.State != api.Queued {
		t.Fatalf("the rigid job is %s while n2's replica still runs", j.State)
	}
	b.status(agenttest.Exited(rb, 143))
	h.waitState(r.ID, api.Running)
	if j := h.job(e.ID); j.State != api.Running || j.Generation != 2 {
		t.Errorf("elastic job: %+v", j)
	}
}
