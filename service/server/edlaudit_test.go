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

// TestEDLAuditInTransaction: an EDL call that changes the job's EDL state
// writes its audit entry in the same transaction as the change (the entry
// and the record share their revision); a call that changes nothing (a
// lease answered "wait") is recorded all the same, after it. Every call is
// recorded once, with who, what and the job.
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
	task := "edl/" + j.ID + "/tasks/000000"

	var l1, l2 api.Lease
	h.callAs(alice, "POST", base+"/tasks/lease", api.LeaseRequest{Holder: "t1"}, http.StatusOK, &l1)
	if l1.Status != api.LeaseGranted {
		t.Fatalf("first lease: %+v", l1)
	}
	if rev := last("/tasks/lease"); rev != modRev(task) {
		t.Errorf("granted lease: audit entry at revision %d, task record at %d: want one transaction", rev, modRev(task))
	}
	h.callAs(alice, "POST", base+"/tasks/lease", api.LeaseRequest{Holder: "t2"}, http.StatusOK, &l2)
	if l2.Status != api.LeaseWait {
		t.Fatalf("second lease: %+v, want wait", l2)
	}
	if rev := last("/tasks/lease"); rev <= modRev(task) {
		t.Errorf("lease answered wait: audit entry at revision %d, not after the task record's %d", rev, modRev(task))
	}
	h.callAs(alice, "POST", base+"/tasks/0/done", api.TaskReport{Lease: l1.Task.Lease}, http.StatusOK, nil)
	if rev := last("/tasks/0/done"); rev != modRev(task) {
		t.Errorf("report: audit entry at revision %d, task record at %d: want one transaction", rev, modRev(task))
	}
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
	es, _ := entries()
	var got []string
	for _, e := range es {
		if strings.HasPrefix(e.Action, "POST "+base+"/") {
			got = append(got, strings.TrimPrefix(e.Action, "POST "+base))
		}
	}
	want := []string{"/tasks", "/tasks/lease", "/tasks/lease", "/tasks/0/done", "/master", "/pservers/claim"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("audited EDL calls %v, want %v (each once; the refused report not at all)", got, want)
	}
}
