package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/api"
)

// withAuth turns authentication on, the bootstrap token in the data
// directory.
func withAuth(c *Config) {
	c.Auth = &AuthConfig{AdminTokenFile: filepath.Join(c.DataDir, "admin.token")}
}

// adminToken reads the bootstrap admin token.
func (h *harness) adminToken() string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "admin.token"))
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// doAs sends a request with a bearer token ("" for none).
func (h *harness) doAs(token, method, path string, body any) (int, []byte, http.Header) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.http.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

// callAs is doAs wanting status want, decoding the answer into out.
func (h *harness) callAs(token, method, path string, body any, want int, out any) {
	h.t.Helper()
	code, data, _ := h.doAs(token, method, path, body)
	if code != want {
		h.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			h.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// newToken creates a token as admin.
func (h *harness) newToken(admin string, req api.TokenRequest) api.TokenCreated {
	h.t.Helper()
	var c api.TokenCreated
	h.callAs(admin, "POST", "/v1/tokens", req, http.StatusCreated, &c)
	return c
}

// wantDenied checks a 401/403 answer with an api.Error.
func wantDenied(t *testing.T, what string, code int, data []byte, want int, mention string) {
	t.Helper()
	var e api.Error
	if code != want || json.Unmarshal(data, &e) != nil || !strings.Contains(e.Error, mention) {
		t.Errorf("%s: %d %s, want %d mentioning %q", what, code, data, want, mention)
	}
}

// TestAuthUsers: anonymous requests are 401; alice's job is hers: bob can
// neither see it, read its logs nor cancel it (403), an admin can; a
// revoked token stops working at once; denials change nothing.
func TestAuthUsers(t *testing.T) {
	h := newHarness(t, withAuth)
	admin := h.adminToken()
	code, data, hdr := h.doAs("", "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`)
	wantDenied(t, "anonymous submit", code, data, http.StatusUnauthorized, "no bearer token")
	if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("401 without WWW-Authenticate: %v", hdr)
	}
	if code, _, _ := h.doAs("", "GET", "/healthz", nil); code != http.StatusOK {
		t.Errorf("healthz without a token: %d", code)
	}
	alice := h.newToken(admin, api.TokenRequest{User: "alice"})
	bob := h.newToken(admin, api.TokenRequest{User: "bob"})
	var j api.Job
	h.callAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j)
	if j.User != "alice" {
		t.Errorf("job user %q, want alice", j.User)
	}
	code, data, _ = h.doAs(bob.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1,"user":"alice"}`)
	wantDenied(t, "bob submits as alice", code, data, http.StatusForbidden, "may not submit jobs as user alice")
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/jobs/" + j.ID}, {"GET", "/v1/jobs/" + j.ID + "/logs"}, {"POST", "/v1/jobs/" + j.ID + "/cancel"},
		{"GET", "/v1/jobs/" + j.ID + "/hostfile"}, {"POST", "/v1/jobs/" + j.ID + "/progress"},
	} {
		body := any(nil)
		if c.method == "POST" {
			body = `{"steps":1}`
		}
		code, data, _ := h.doAs(bob.Token, c.method, c.path, body)
		wantDenied(t, "bob: "+c.method+" "+c.path, code, data, http.StatusForbidden, "user bob may not")
	}
	var list api.JobList
	h.callAs(bob.Token, "GET", "/v1/jobs", nil, http.StatusOK, &list)
	if len(list.Jobs) != 0 {
		t.Errorf("bob lists %d jobs, want none", len(list.Jobs))
	}
	h.callAs(admin, "GET", "/v1/jobs/"+j.ID, nil, http.StatusOK, nil)
	code, data, _ = h.doAs(bob.Token, "POST", "/v1/tokens", api.TokenRequest{User: "eve", Role: "admin"})
	wantDenied(t, "bob creates a token", code, data, http.StatusForbidden, "admin role required")
	if rec, _ := h.stored(j.ID); rec.State != api.Queued {
		t.Errorf("denials changed the job: %+v", rec)
	}
	var who api.Identity
	h.callAs(alice.Token, "GET", "/v1/whoami", nil, http.StatusOK, &who)
	if who.User != "alice" || who.Role != api.RoleUser || who.TokenID != alice.ID {
		t.Errorf("whoami %+v", who)
	}
	h.callAs(admin, "DELETE", "/v1/tokens/"+alice.ID, nil, http.StatusOK, nil)
	code, data, _ = h.doAs(alice.Token, "GET", "/v1/jobs", nil)
	wantDenied(t, "revoked token", code, data, http.StatusUnauthorized, "unknown or revoked token")
	h.callAs(admin, "POST", "/v1/jobs/"+j.ID+"/cancel", nil, http.StatusOK, nil)
}

// TestAuthAgents: only a join token or a node's own credential registers;
// a credential acts for its node only; a name is claimed once.
func TestAuthAgents(t *testing.T) {
	h := newHarness(t, withAuth)
	admin := h.adminToken()
	user := h.newToken(admin, api.TokenRequest{User: "alice"})
	join := h.newToken(admin, api.TokenRequest{Join: true})
	reg := func(name string) api.Register {
		return api.Register{Name: name, Addr: name, GPUs: []api.GPU{{Index: 0, Type: "v100", MemMiB: 16384}}}
	}
	code, data, _ := h.doAs("", "POST", "/v1/agents/register", reg("n1"))
	wantDenied(t, "register without a token", code, data, http.StatusUnauthorized, "no bearer token")
	code, data, _ = h.doAs(user.Token, "POST", "/v1/agents/register", reg("n1"))
	wantDenied(t, "register with a user's token", code, data, http.StatusForbidden, "join token")
	var reply api.RegisterReply
	h.callAs(join.Token, "POST", "/v1/agents/register", reg("n1"), http.StatusOK, &reply)
	cred := reply.Credential
	if !strings.HasPrefix(cred, "gps_n_") {
		t.Fatalf("register with a join token: %+v", reply)
	}
	h.callAs(cred, "POST", "/v1/agents/n1/status", api.Status{}, http.StatusOK, nil)
	code, data, _ = h.doAs(cred, "POST", "/v1/agents/n2/status", api.Status{})
	wantDenied(t, "n1's credential for n2", code, data, http.StatusForbidden, "may act only for node n1")
	code, data, _ = h.doAs(cred, "GET", "/v1/jobs", nil)
	wantDenied(t, "a node's credential on the user API", code, data, http.StatusForbidden, "user's token is required")
	code, data, _ = h.doAs(join.Token, "POST", "/v1/agents/register", reg("n1"))
	wantDenied(t, "join token for a claimed name", code, data, http.StatusForbidden, "already has a credential")
	code, data, _ = h.doAs(cred, "POST", "/v1/agents/register", reg("n2"))
	wantDenied(t, "n1's credential registers n2", code, data, http.StatusForbidden, "may not register node")
	reply = api.RegisterReply{}
	h.callAs(cred, "POST", "/v1/agents/register", reg("n1"), http.StatusOK, &reply)
	if reply.Credential != "" {
		t.Error("a re-registration got a new credential")
	}
	// A bad registration with a join token leaves no credential behind.
	code, _, _ = h.doAs(join.Token, "POST", "/v1/agents/register", api.Register{Name: "n3"})
	var tokens api.TokenList
	h.callAs(admin, "GET", "/v1/tokens", nil, http.StatusOK, &tokens)
	nodes := 0
	for _, tk := range tokens.Tokens {
		if tk.Kind == "node" {
			nodes++
			if tk.Node != "n1" {
				t.Errorf("credential for %s", tk.Node)
			}
		}
	}
	if code != http.StatusBadRequest || nodes != 1 {
		t.Errorf("bad registration: %d, %d node credentials", code, nodes)
	}
	var id api.Identity
	h.callAs(cred, "GET", "/v1/agents/n1/work?wait=0", nil, http.StatusOK, nil)
	_ = id
	for _, tk := range tokens.Tokens {
		if tk.Kind == "node" {
			h.callAs(admin, "DELETE", "/v1/tokens/"+tk.ID, nil, http.StatusOK, nil)
		}
	}
	code, data, _ = h.doAs(cred, "POST", "/v1/agents/n1/status", api.Status{})
	wantDenied(t, "revoked credential", code, data, http.StatusUnauthorized, "revoked")
}

// TestAuditLog: accepted mutations are recorded with who and what; agent
// reports and reads are not; denials are not.
func TestAuditLog(t *testing.T) {
	h := newHarness(t, withAuth)
	admin := h.adminToken()
	alice := h.newToken(admin, api.TokenRequest{User: "alice"})
	var j api.Job
	h.callAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j)
	h.callAs(alice.Token, "POST", "/v1/jobs/"+j.ID+"/cancel", nil, http.StatusOK, nil)
	h.doAs("", "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`) // denied: not recorded
	h.callAs(alice.Token, "GET", "/v1/jobs", nil, http.StatusOK, nil)
	var log api.AuditList
	h.callAs(admin, "GET", "/v1/audit", nil, http.StatusOK, &log)
	var got []string
	for _, e := range log.Entries {
		got = append(got, e.Who+" "+e.Action+" "+e.Target)
	}
	want := []string{"admin admin POST /v1/tokens " + alice.ID, "user alice POST /v1/jobs " + j.ID,
		"user alice POST /v1/jobs/" + j.ID + "/cancel " + j.ID}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	code, data, _ := h.doAs(alice.Token, "GET", "/v1/audit", nil)
	wantDenied(t, "a user reads the audit log", code, data, http.StatusForbidden, "admin role required")
}

// TestJobToken: a replica gets its job's token; with it the job reports
// its progress and reads its host list, not another job's.
func TestJobToken(t *testing.T) {
	h := newHarness(t, withAuth)
	admin := h.adminToken()
	join := h.newToken(admin, api.TokenRequest{Join: true})
	var reply api.RegisterReply
	h.callAs(join.Token, "POST", "/v1/agents/register", api.Register{Name: "n1", Addr: "n1",
		GPUs: []api.GPU{{Index: 0, Type: "v100", MemMiB: 16384}}}, http.StatusOK, &reply)
	var j1, j2 api.Job
	h.callAs(admin, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j1)
	h.callAs(admin, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j2)
	var w api.Work
	h.callAs(reply.Credential, "GET", "/v1/agents/n1/work?wait=2s", nil, http.StatusOK, &w)
	for len(w.Replicas) == 0 {
		h.callAs(reply.Credential, "GET", "/v1/agents/n1/work?wait=2s&after="+jsonInt(w.Version), nil, http.StatusOK, &w)
	}
	tok := w.Replicas[0].Env["GPUSCHED_TOKEN"]
	job := w.Replicas[0].Job
	if !strings.HasPrefix(tok, "gps_b_"+job+"_") {
		t.Fatalf("replica env token %q", tok)
	}
	h.callAs(tok, "POST", "/v1/jobs/"+job+"/progress", `{"steps":3}`, http.StatusOK, nil)
	other := j1.ID
	if other == job {
		other = j2.ID
	}
	code, data, _ := h.doAs(tok, "POST", "/v1/jobs/"+other+"/progress", `{"steps":3}`)
	wantDenied(t, "job token for another job", code, data, http.StatusForbidden, "may only report its progress")
	code, data, _ = h.doAs(tok, "GET", "/v1/jobs", nil)
	wantDenied(t, "job token lists jobs", code, data, http.StatusForbidden, "may only report its progress")

	// The job's token uses its own EDL state, not another job's.
	h.callAs(tok, "POST", "/v1/jobs/"+job+"/tasks", `{"tasks":["a"]}`, http.StatusCreated, nil)
	h.callAs(tok, "POST", "/v1/jobs/"+job+"/master", `{"holder":"r0","ttl_s":5}`, http.StatusOK, nil)
	h.callAs(tok, "GET", "/v1/jobs/"+job+"/pservers", nil, http.StatusOK, nil)
	code, data, _ = h.doAs(tok, "POST", "/v1/jobs/"+other+"/tasks/lease", `{"holder":"r0"}`)
	wantDenied(t, "job token leases another job's task", code, data, http.StatusForbidden, "may only report its progress")
}

// TestEDLAccess: a job's EDL state is its owner's and admins'; another
// user gets 403, an unknown job 404.
func TestEDLAccess(t *testing.T) {
	h := newHarness(t, withAuth)
	admin := h.adminToken()
	alice := h.newToken(admin, api.TokenRequest{User: "alice"})
	bob := h.newToken(admin, api.TokenRequest{User: "bob"})
	var j api.Job
	h.callAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j)
	h.callAs(alice.Token, "POST", "/v1/jobs/"+j.ID+"/tasks", `{"tasks":["a","b"]}`, http.StatusCreated, nil)
	h.callAs(admin, "GET", "/v1/jobs/"+j.ID+"/tasks", nil, http.StatusOK, nil)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/tasks", ""},
		{"POST", "/tasks/lease", `{"holder":"b"}`},
		{"POST", "/master", `{"holder":"b","ttl_s":5}`},
		{"POST", "/pservers/claim", `{"holder":"b","desired":1}`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		code, data, _ := h.doAs(bob.Token, c.method, "/v1/jobs/"+j.ID+c.path, body)
		wantDenied(t, "bob "+c.method+" "+c.path, code, data, http.StatusForbidden, "user bob may not")
	}
	h.callAs(alice.Token, "GET", "/v1/jobs/nosuchjob/tasks", nil, http.StatusNotFound, nil)
}

func jsonInt(v int64) string { b, _ := json.Marshal(v); return string(b) }

// TestQueueAccess: users submit to their queues; another user's queue is
// 403, an unknown one 400; a queue's users see its jobs read-only.
func TestQueueAccess(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		withAuth(c)
		w := 1.0
		c.Queues = &config.QueuesSpec{Queues: []config.QueueSpec{
			{Name: "vision", Quota: map[string]int{"v100": 2}, Weight: &w, Users: []string{"alice", "carol"}},
			{Name: "nlp", Quota: map[string]int{"v100": 2}, Weight: &w, Users: []string{"bob"}},
		}}
	})
	admin := h.adminToken()
	alice := h.newToken(admin, api.TokenRequest{User: "alice"})
	carol := h.newToken(admin, api.TokenRequest{User: "carol"})
	var j api.Job
	h.callAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1}`, http.StatusCreated, &j)
	if j.Queue != "vision" {
		t.Errorf("alice's job in queue %q, want vision", j.Queue)
	}
	code, data, _ := h.doAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1,"queue":"nlp"}`)
	var e api.Error
	if code != http.StatusForbidden || json.Unmarshal(data, &e) != nil || e.Field != "queue" {
		t.Errorf("alice submits to nlp: %d %s", code, data)
	}
	code, data, _ = h.doAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1,"queue":"nope"}`)
	if code != http.StatusBadRequest || !strings.Contains(string(data), "unknown queue nope") {
		t.Errorf("unknown queue: %d %s", code, data)
	}
	h.callAs(carol.Token, "GET", "/v1/jobs/"+j.ID, nil, http.StatusOK, nil)
	code, data, _ = h.doAs(carol.Token, "POST", "/v1/jobs/"+j.ID+"/cancel", nil)
	wantDenied(t, "carol cancels alice's job of their queue", code, data, http.StatusForbidden, "user carol may not cancel")
	var ql api.QueueList
	h.callAs(alice.Token, "GET", "/v1/queues", nil, http.StatusOK, &ql)
	if len(ql.Queues) != 3 || ql.Queues[0].Name != "vision" || ql.Queues[0].PendingJobs != 1 || ql.FairShare != "type-weighted" {
		t.Errorf("queues %+v", ql)
	}
}
