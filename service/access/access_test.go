package access_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/access"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
	"github.com/gpusched/gpusched/service/scheduler"
	"github.com/gpusched/gpusched/service/settings"
)

// TestAccess: the lifecycle's rules on behalf of callers, without a
// transport: ownership, queue membership (read-only), job tokens, and the
// kinds of credential that have no part in the job API.
func TestAccess(t *testing.T) {
	w := 1.0
	queues := &config.QueuesSpec{Queues: []config.QueueSpec{
		{Name: "vision", Quota: map[string]int{"v100": 1}, Weight: &w, Users: []string{"alice", "carol"}},
		{Name: "open", Weight: &w},
	}}
	s, err := scheduler.New(settings.Config{DataDir: t.TempDir(), Queues: queues})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	g := access.New(s, queues)
	ctx := context.Background()
	alice := auth.Identity{Kind: auth.KindUser, User: "alice", Role: api.RoleUser}
	bob := auth.Identity{Kind: auth.KindUser, User: "bob", Role: api.RoleUser}
	carol := auth.Identity{Kind: auth.KindUser, User: "carol", Role: api.RoleUser}
	admin := auth.Identity{Kind: auth.KindUser, User: "root", Role: api.RoleAdmin}
	node := auth.Identity{Kind: auth.KindNode, Node: "n1"}
	spec := api.JobSpec{Command: []string{"x"}, GPUs: 1}

	j, err := g.SubmitAs(ctx, alice, spec)
	if err != nil || j.User != "alice" || j.Queue != "vision" {
		t.Fatalf("alice's job: %+v %v", j, err)
	}
	b, err := g.SubmitAs(ctx, bob, spec)
	if err != nil || b.Queue != "default" {
		t.Fatalf("bob's job (bob is in no queue's users) goes to the default queue: %+v %v", b, err)
	}
	forbiddenTo := func(what string, err error, mention string) {
		t.Helper()
		if !errors.Is(err, access.ErrForbidden) || !strings.Contains(err.Error(), mention) {
			t.Errorf("%s: %v, want access.ErrForbidden mentioning %q", what, err, mention)
		}
	}
	bs := spec
	bs.Queue = "vision"
	_, err = g.SubmitAs(ctx, bob, bs)
	forbiddenTo("bob submits to vision", err, "may not submit to queue vision")
	_, err = g.SubmitAs(ctx, node, spec)
	forbiddenTo("a node submits", err, "a user's token is required")
	as := spec
	as.User = "bob"
	if j2, err := g.SubmitAs(ctx, admin, as); err != nil || j2.User != "bob" {
		t.Errorf("an admin submits for bob: %+v %v", j2, err)
	}

	if _, err := g.JobAs(carol, j.ID); err != nil {
		t.Errorf("carol (queue vision) reads alice's job: %v", err)
	}
	_, err = g.CancelAs(carol, j.ID)
	forbiddenTo("carol cancels alice's job", err, "user carol may not cancel")
	_, err = g.JobAs(bob, j.ID)
	forbiddenTo("bob reads alice's job", err, "user bob may not see")
	forbiddenTo("bob reads alice's logs", g.CheckLogs(bob, j.ID), "user bob may not see")
	if got := g.JobsAs(bob); len(got) != 2 || got[0].ID != b.ID {
		t.Errorf("bob lists %+v, want his own job and the one the admin made for him", got)
	}
	if got := g.JobsAs(carol); len(got) != 1 || got[0].ID != j.ID {
		t.Errorf("carol lists %+v, want alice's job of her queue", got)
	}

	self := auth.Identity{Kind: auth.KindJob, Job: j.ID}
	if _, err := g.ProgressAs(self, j.ID, api.Progress{Steps: 3}); err != nil {
		t.Errorf("a job reports its own progress: %v", err)
	}
	_, err = g.ProgressAs(self, b.ID, api.Progress{Steps: 3})
	forbiddenTo("a job reports another's progress", err, "may not report the progress of")
	if _, err := g.CancelAs(alice, j.ID); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Job(j.ID); err != nil || !v.State.Final() {
		t.Fatalf("job %s after its cancel: %v, %v (want it ended: it never ran)", j.ID, v.State, err)
	}
	_, err = g.ProgressAs(self, j.ID, api.Progress{Steps: 4})
	forbiddenTo("the token of an ended job", err, "no longer works")

	if v := g.IdentityView(carol); strings.Join(v.Queues, ",") != "vision,open" {
		t.Errorf("carol's queues: %v", v.Queues)
	}
	if v := g.IdentityView(auth.Identity{}); v.Kind != "anonymous" || v.Role != api.RoleAdmin {
		t.Errorf("anonymous: %+v", v)
	}
}
