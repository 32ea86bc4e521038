package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
	"github.com/gpusched/gpusched/service/store"
)

// TestAuditRetention: a server with a 30-day retention deletes, when its
// loop starts, the audit entries older than 30 days, keeps the younger
// ones, and records the pruning in the log itself; restarted, it has
// nothing to prune and records nothing, and new mutations are audited.
func TestAuditRetention(t *testing.T) {
	now := time.Now()
	seeded := false
	h := newHarness(t, func(c *Config) {
		c.AuditRetention = 30 * 24 * time.Hour
		if seeded { // a restart
			return
		}
		seeded = true
		for _, e := range []struct {
			age    time.Duration
			target string
		}{{40 * 24 * time.Hour, "old"}, {31 * 24 * time.Hour, "old"}, {29 * 24 * time.Hour, "kept"}, {time.Hour, "kept"}} {
			at := now.Add(-e.age)
			a := auth.NewAudit(c.Store, func() time.Time { return at })
			entry := api.AuditEntry{Who: "user alice", Action: "POST /v1/jobs", Target: fmt.Sprintf("%s-%s", e.target, e.age), Status: 201}
			if err := a.Record(context.Background(), entry); err != nil {
				t.Fatal(err)
			}
		}
	})
	pruned := func(got []string) bool {
		return slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "server: PRUNE") })
	}
	got := waitAudit(t, h, pruned)
	if len(got) != 3 || !strings.HasPrefix(got[0], "user alice: POST /v1/jobs kept-696h") || !strings.HasPrefix(got[1], "user alice: POST /v1/jobs kept-1h") ||
		!strings.HasPrefix(got[2], "server: PRUNE audit log before ") {
		t.Fatalf("audit log after pruning:\n%s\nwant the two entries younger than 30 days and the pruning", strings.Join(got, "\n"))
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "old-") }) {
		t.Errorf("an old entry survived: %q", got)
	}
	h.restart()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	got = waitAudit(t, h, func(got []string) bool { return len(got) >= 4 })
	if len(got) != 4 || !strings.HasSuffix(got[3], "POST /v1/jobs "+j.ID) || !strings.HasPrefix(got[2], "server: PRUNE") {
		t.Fatalf("audit log after a restart and a submission:\n%s\nwant the same three entries and the submission", strings.Join(got, "\n"))
	}
}

// waitAudit waits up to 10 s for the audit log to satisfy ok and returns
// its entries as "who: action target", oldest first.
func waitAudit(t *testing.T, h *harness, ok func([]string) bool) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		es, err := h.s.audit.List(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range es {
			got = append(got, e.Who+": "+e.Action+" "+e.Target)
		}
		if ok(got) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPruneEvery: the pruning interval is a tenth of the shortest
// retention, within a minute and an hour; 0 is no retention.
func TestPruneEvery(t *testing.T) {
	for _, tc := range []struct{ audit, jobs, every time.Duration }{
		{time.Minute, 0, time.Minute},
		{20 * time.Minute, 0, 2 * time.Minute},
		{90 * 24 * time.Hour, 0, time.Hour},
		{0, 30 * time.Minute, 3 * time.Minute},
		{90 * 24 * time.Hour, 40 * time.Minute, 4 * time.Minute},
	} {
		if got := pruneEvery(tc.audit, tc.jobs); got != tc.every {
			t.Errorf("retentions %v, %v: every %v, want %v", tc.audit, tc.jobs, got, tc.every)
		}
	}
}

// TestHAAuditRetention: in an HA group on etcd, the leader prunes through
// its fence, in transactions within etcd's --max-txn-ops (150 old entries
// need two).
func TestHAAuditRetention(t *testing.T) {
	c := etcdtest.Start(t, 1)
	st, err := store.OpenEtcd(store.EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/ret/"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for i := range 152 {
		age := 40 * 24 * time.Hour
		if i >= 150 {
			age = time.Hour
		}
		at := now.Add(-age + time.Duration(i)*time.Millisecond)
		a := auth.NewAudit(st, func() time.Time { return at })
		if err := a.Record(t.Context(), api.AuditEntry{Who: "user alice", Action: "POST /v1/jobs", Target: fmt.Sprintf("j%d", i), Status: 201}); err != nil {
			t.Fatal(err)
		}
	}
	n := startHA(t, c, "/ret/", func(c *Config) { c.AuditRetention = 30 * 24 * time.Hour })
	waitLeader(t, n)
	deadline := time.Now().Add(15 * time.Second)
	var got []api.AuditEntry
	for time.Now().Before(deadline) {
		if got, err = auth.NewAudit(st, nil).List(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		if len(got) == 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != 3 || got[0].Target != "j150" || got[1].Target != "j151" || got[2].Who != "server" || got[2].Action != "PRUNE audit log" {
		t.Fatalf("audit log after the leader's pruning: %+v\nwant j150, j151 and the pruning", got)
	}
}

// TestJobRetention: jobs cancelled two hours before a server with a
// one-hour job retention starts are pruned when its loop starts — the API
// answers 404 for them — a queued job is kept, and the pruning is in the
// audit log.
func TestJobRetention(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	retention := time.Duration(0)
	h := newHarness(t, func(c *Config) { c.Clock, c.JobRetention = clock, retention })
	for range 3 {
		h.submit(`{"command":["x"],"gpus":1}`)
	}
	h.call("POST", "/v1/jobs/j1/cancel", nil, 200, nil)
	h.call("POST", "/v1/jobs/j3/cancel", nil, 200, nil)
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	retention = time.Hour
	h.restart()
	got := waitAudit(t, h, func(got []string) bool {
		return slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "server: PRUNE jobs") })
	})
	if last := got[len(got)-1]; !strings.HasPrefix(last, "server: PRUNE jobs 2 ended before ") || !strings.HasSuffix(last, "(j1 … j3)") {
		t.Fatalf("audit log:\n%s\nwant the pruning of j1 and j3 last", strings.Join(got, "\n"))
	}
	for _, id := range []string{"j1", "j3"} {
		if code, body := h.do("GET", "/v1/jobs/"+id, nil); code != 404 {
			t.Errorf("GET %s after the pruning: %d %s, want 404", id, code, body)
		}
	}
	if j := h.job("j2"); j.State != "queued" {
		t.Errorf("j2 is %s, want still queued", j.State)
	}
}
