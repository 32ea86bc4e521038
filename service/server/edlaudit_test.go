package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// TestEDLAuditInTransaction: an EDL call of the control plane (the master
// role, a pserver claim) writes its audit entry in the same transaction as
// its change (the entry and the record share their revision); task
// registration is recorded after it; the data plane — task leases, their
// reports, renewals — is not recorded (telemetry, like progress reports).
func TestEDLAuditInTransaction(t *testing.T) {
	h := newHarness(t, withAuth)
	admin := h.adminToken()
	alice := h.newToken(admin, api.TokenRequest{User: "alice"}).Token
	var j api.Job
	h.callAs(alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j)
	base := "/v1/jobs/" + j.ID
	h.callAs(alice, "POST", base+"/tasks", api.TaskQueueSpec{Tasks: []string{"a"}, TTLS: 600}, http.StatusCreated, nil)

	ctx := context.Background()
	modRev := func(key string) int64 {
		t.Helper()
		kv, ok, err := h.st.Get(ctx, key)
		if err != nil || !ok {
			t.Fatalf("get %s: %v, %v", key, ok, err)
		}
		return kv.ModRev
	}
	entries := func() ([]api.AuditEntry, []store.KV) {
		t.Helper()
		kvs, _, err := h.st.List(ctx, "audit/")
		if err != nil {
			t.Fatal(err)
		}
		es := make([]api.AuditEntry, len(kvs))
		for i, kv := range kvs {
			if err := json.Unmarshal(kv.Value, &es[i]); err != nil {
				t.Fatal(err)
			}
		}
		return es, kvs
	}
	// last returns the newest entry and its revision, checking it records
	// action by alice on the job with status 200.
	last := func(action string) int64 {
		t.Helper()
		es, kvs := entries()
		e := es[len(es)-1]
		if e.Who != "user alice" || e.Action != "POST "+base+action || e.Target != j.ID || e.Status != http.StatusOK {
			t.Fatalf("newest audit entry %+v, want alice's POST %s%s on %s, 200", e, base, action, j.ID)
		}
		return kvs[len(kvs)-1].ModRev
	}
	var l1, l2 api.Lease
	h.callAs(alice, "POST", base+"/tasks/lease", api.LeaseRequest{Holder: "t1"}, http.StatusOK, &l1)
	h.callAs(alice, "POST", base+"/tasks/lease", api.LeaseRequest{Holder: "t2"}, http.StatusOK, &l2)
	if l1.Status != api.LeaseGranted || l2.Status != api.LeaseWait {
		t.Fatalf("leases: %+v, %+v", l1, l2)
	}
	h.callAs(alice, "POST", base+"/tasks/0/done", api.TaskReport{Lease: l1.Task.Lease}, http.StatusOK, nil)
	h.callAs(alice, "POST", base+"/tasks/0/done", api.TaskReport{Lease: l1.Task.Lease}, http.StatusConflict, nil)
	var m api.Master
	h.callAs(alice, "POST", base+"/master", api.MasterRequest{Holder: "r0", Addr: "n1:1", TTLS: 60}, http.StatusOK, &m)
	if rev := last("/master"); rev != modRev("edl/"+j.ID+"/master") {
		t.Errorf("master: audit entry at revision %d, record at %d: want one transaction", rev, modRev("edl/"+j.ID+"/master"))
	}
	var p api.PServer
	h.callAs(alice, "POST", base+"/pservers/claim", api.PServerClaim{Holder: "ps0", Desired: 1, TTLS: 60}, http.StatusOK, &p)
	if rev := last("/pservers/claim"); rev != modRev("edl/"+j.ID+"/ps/0000") {
		t.Errorf("pserver claim: audit entry at revision %d, record at %d: want one transaction", rev, modRev("edl/"+j.ID+"/ps/0000"))
	}
	h.callAs(alice, "POST", base+"/pservers/0/renew", api.PServerClaim{Holder: "ps0", TTLS: 60}, http.StatusOK, nil)
	es, _ := entries()
	var got []string
	for _, e := range es {
		if strings.HasPrefix(e.Action, "POST "+base+"/") {
			got = append(got, strings.TrimPrefix(e.Action, "POST "+base))
		}
	}
	want := []string{"/tasks", "/master", "/pservers/claim"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("audited EDL calls %v, want %v (each once; no lease, report or renewal)", got, want)
	}
}

func TestEDLDataPlane(t *testing.T) {
	for path, want := range map[string]bool{
		"/v1/jobs/j1/tasks/lease":      true,
		"/v1/jobs/j1/tasks/3/done":     true,
		"/v1/jobs/j1/tasks/3/failed":   true,
		"/v1/jobs/j1/pservers/0/renew": true,
		"/v1/jobs/j1/tasks":            false,
		"/v1/jobs/j1/master":           false,
		"/v1/jobs/j1/pservers/claim":   false,
		"/v1/jobs/j1/cancel":           false,
		"/v1/jobs":                     false,
		"/v1/tokens/x/y/done":          false,
	} {
		if got := edlDataPlane(path); got != want {
			t.Errorf("edlDataPlane(%q) = %v, want %v", path, got, want)
		}
	}
}
