package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// The bad-request corpus (issue 18): malformed and hostile requests — bad
// JSON, huge bodies, unknown fields, negative GPUs, path traversal in log
// paths, wrong and revoked tokens, replayed and borrowed agent credentials,
// slow headers and bodies — each answered with the right 4xx (the API's
// JSON error where the handler answers), and the store byte for byte what
// it was before them.
//
// Its counterpart on the nodes is the hostile-job corpus (issue 27:
// hostileJobs in e2e/confine_test.go): job commands that try to escape
// their account and their cgroup — each fails.

// corpusCase is one hostile request.
type corpusCase struct {
	name   string
	token  string // "": none; the raw Authorization value when it starts with "raw:"
	method string
	path   string
	body   string
	want   int
}

// corpusServer runs the harness's handler behind a real http.Server with
// short limits, so that slow clients meet the real timeouts.
func corpusServer(t *testing.T, h *harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHTTPServer(h.s.Handler(), log.New(io.Discard, "", 0), Limits{ReadHeaderTimeout: time.Second, MaxHeaderBytes: 16 << 10})
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// snapshot returns every key of the store with its value and revision.
func snapshot(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	kvs, _, err := st.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.Key] = fmt.Sprintf("%d:%s", kv.ModRev, kv.Value)
	}
	return out
}

func TestBadRequestCorpus(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		withAuth(c)
		c.BodyTimeout = time.Second
		c.HeartbeatTimeout = time.Hour // no node goes down during the corpus
	})
	addr := corpusServer(t, h)
	admin := h.adminToken()
	alice := h.newToken(admin, api.TokenRequest{User: "alice"})
	bob := h.newToken(admin, api.TokenRequest{User: "bob"})
	join := h.newToken(admin, api.TokenRequest{Join: true})
	gone := h.newToken(admin, api.TokenRequest{User: "carol"})
	h.callAs(admin, "DELETE", "/v1/tokens/"+gone.ID, nil, http.StatusOK, nil)
	short := h.newToken(admin, api.TokenRequest{User: "dave", TTLS: 1})
	k80 := func(name string) api.Register {
		return api.Register{Name: name, Addr: name, GPUs: []api.GPU{{Index: 0, Type: "k80", MemMiB: 12288}}}
	}
	var n1, n9 api.RegisterReply
	h.callAs(join.Token, "POST", "/v1/agents/register", k80("n1"), http.StatusOK, &n1)
	h.callAs(join.Token, "POST", "/v1/agents/register", k80("n9"), http.StatusOK, &n9)
	var tokens api.TokenList
	h.callAs(admin, "GET", "/v1/tokens", nil, http.StatusOK, &tokens)
	for _, tk := range tokens.Tokens {
		if tk.Node == "n9" {
			h.callAs(admin, "DELETE", "/v1/tokens/"+tk.ID, nil, http.StatusOK, nil) // n9's credential is replayed below
		}
	}
	var j1, j2 api.Job // never start: they need V100s, the nodes have K80s
	h.callAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1,"gpu_type":"v100"}`, http.StatusCreated, &j1)
	h.callAs(alice.Token, "POST", "/v1/jobs", `{"command":["x"],"gpus":1,"gpu_type":"v100"}`, http.StatusCreated, &j2)
	jobTok, err := h.s.Tokens().JobToken(context.Background(), j1.ID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // dave's token expires
	before := snapshot(t, h.st)

	cases := corpus(alice.Token, bob.Token, admin, join.Token, gone.Token, short.Token, n1.Credential, n9.Credential, jobTok, j1.ID, j2.ID, alice.ID)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, addr) })
	}
	raw := rawCorpus(admin)
	for _, c := range raw {
		t.Run(c.name, func(t *testing.T) { c.check(t, addr) })
	}
	if n := len(cases) + len(raw); n < 60 {
		t.Errorf("the corpus has %d requests, want at least 60", n)
	}
	after := snapshot(t, h.st)
	for k, v := range after {
		if before[k] != v {
			t.Errorf("store key %s changed: %q → %q", k, before[k], v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("store key %s was deleted", k)
		}
	}
}

// corpus lists the hostile requests sent through an ordinary client.
func corpus(alice, bob, admin, join, revoked, expired, n1, n9, jobTok, j1, j2, aliceID string) []corpusCase {
	spec := func(extra string) string { return `{"command":["x"],"gpus":1` + extra + `}` }
	nested := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	manyArgs := `{"command":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 5000), ",") + `],"gpus":1}`
	huge := `{"command":["` + strings.Repeat("x", 2<<20) + `"],"gpus":1}`
	wrongSecret := alice[:len(alice)-5] + "AAAAA"
	return []corpusCase{
		// Authentication: 401.
		{"no token", "", "POST", "/v1/jobs", spec(""), 401},
		{"basic auth", "raw:Basic YWxpY2U6cHc=", "POST", "/v1/jobs", spec(""), 401},
		{"garbage token", "raw:Bearer hello", "POST", "/v1/jobs", spec(""), 401},
		{"right ID, wrong secret", wrongSecret, "POST", "/v1/jobs", spec(""), 401},
		{"revoked token", revoked, "GET", "/v1/jobs", "", 401},
		{"expired token", expired, "GET", "/v1/jobs", "", 401},
		{"token too long", "gps_u_" + strings.Repeat("a", 600), "GET", "/v1/jobs", "", 401},
		{"replayed revoked node credential", n9, "POST", "/v1/agents/n9/status", `{"replicas":[]}`, 401},
		{"forged job token", strings.Replace(jobTok, "_"+j1+"_", "_"+j2+"_", 1), "POST", "/v1/jobs/" + j2 + "/progress", `{"steps":1}`, 401},
		// Authorization: 403.
		{"join token submits", join, "POST", "/v1/jobs", spec(""), 403},
		{"node credential lists jobs", n1, "GET", "/v1/jobs", "", 403},
		{"n1's credential acts for n2", n1, "POST", "/v1/agents/n2/status", `{"replicas":[]}`, 403},
		{"n1's credential polls for n9", n1, "GET", "/v1/agents/n9/work?wait=0", "", 403},
		{"user registers a node", alice, "POST", "/v1/agents/register", `{"name":"x","addr":"x","gpus":[{"index":0,"type":"v100"}]}`, 403},
		{"user polls a node's work", alice, "GET", "/v1/agents/n1/work", "", 403},
		{"bob reads alice's job", bob, "GET", "/v1/jobs/" + j1, "", 403},
		{"bob cancels alice's job", bob, "POST", "/v1/jobs/" + j1 + "/cancel", "", 403},
		{"bob reads alice's logs", bob, "GET", "/v1/jobs/" + j1 + "/logs", "", 403},
		{"bob follows alice's logs", bob, "GET", "/v1/jobs/" + j1 + "/logs?follow=true", "", 403},
		{"bob reports alice's progress", bob, "POST", "/v1/jobs/" + j1 + "/progress", `{"steps":1}`, 403},
		{"bob submits as alice", bob, "POST", "/v1/jobs", spec(`,"user":"alice"`), 403},
		{"bob creates an admin token", bob, "POST", "/v1/tokens", `{"user":"bob","role":"admin"}`, 403},
		{"bob revokes alice's token", bob, "DELETE", "/v1/tokens/" + aliceID, "", 403},
		{"bob reads the audit log", bob, "GET", "/v1/audit", "", 403},
		{"job token of j1 for j2", jobTok, "POST", "/v1/jobs/" + j2 + "/progress", `{"steps":1}`, 403},
		{"job token lists jobs", jobTok, "GET", "/v1/jobs", "", 403},
		{"join token takes n1's name", join, "POST", "/v1/agents/register", `{"name":"n1","addr":"n1","gpus":[{"index":0,"type":"k80"}]}`, 403},
		{"n1 registers as n2", n1, "POST", "/v1/agents/register", `{"name":"n2","addr":"n2","gpus":[{"index":0,"type":"k80"}]}`, 403},
		// Bad JSON and bad jobs: 400, 413.
		{"half a JSON object", alice, "POST", "/v1/jobs", `{`, 400},
		{"a JSON array", alice, "POST", "/v1/jobs", `[]`, 400},
		{"null", alice, "POST", "/v1/jobs", `null`, 400},
		{"empty body", alice, "POST", "/v1/jobs", ``, 400},
		{"unknown field", alice, "POST", "/v1/jobs", spec(`,"gpu":2`), 400},
		{"field in upper case", alice, "POST", "/v1/jobs", `{"command":["x"],"GPUS":1}`, 400},
		{"field twice", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":1,"gpus":2}`, 400},
		{"trailing data", alice, "POST", "/v1/jobs", spec("") + `{}`, 400},
		{"negative GPUs", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":-1}`, 400},
		{"zero GPUs", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":0}`, 400},
		{"a billion GPUs", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":1000000000}`, 400},
		{"GPUs beyond int64", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":99999999999999999999}`, 400},
		{"GPUs as a string", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":"4"}`, 400},
		{"fractional GPUs", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":1.5}`, 400},
		{"min above gpus", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":2,"min_gpus":3}`, 400},
		{"max below gpus", alice, "POST", "/v1/jobs", `{"command":["x"],"gpus":2,"max_gpus":1}`, 400},
		{"no command", alice, "POST", "/v1/jobs", `{"gpus":1}`, 400},
		{"empty program", alice, "POST", "/v1/jobs", `{"command":[""],"gpus":1}`, 400},
		{"NUL in an argument", alice, "POST", "/v1/jobs", `{"command":["x","a\u0000b"],"gpus":1}`, 400},
		{"5000 arguments", alice, "POST", "/v1/jobs", manyArgs, 400},
		{"bad env name", alice, "POST", "/v1/jobs", spec(`,"env":{"A=B":"c"}`), 400},
		{"NUL in an env value", alice, "POST", "/v1/jobs", spec(`,"env":{"A":"\u0000"}`), 400},
		{"newline in the name", alice, "POST", "/v1/jobs", spec(`,"name":"a\nb"`), 400},
		{"negative grace period", alice, "POST", "/v1/jobs", spec(`,"grace_period_s":-5`), 400},
		{"path in the user name", admin, "POST", "/v1/jobs", spec(`,"user":"../../etc/passwd"`), 400},
		{"unknown queue", alice, "POST", "/v1/jobs", spec(`,"queue":"vip"`), 400},
		{"NUL in workdir", alice, "POST", "/v1/jobs", spec(`,"workdir":"/a\u0000"`), 400},
		{"10000 nested arrays", alice, "POST", "/v1/jobs", nested, 400},
		{"2 MiB body", alice, "POST", "/v1/jobs", huge, 413},
		{"negative steps", alice, "POST", "/v1/jobs/" + j1 + "/progress", `{"steps":-1}`, 400},
		{"steps as text", alice, "POST", "/v1/jobs/" + j1 + "/progress", `{"steps":"x"}`, 400},
		{"progress without steps", alice, "POST", "/v1/jobs/" + j1 + "/progress", `{}`, 400},
		{"progress unknown field", alice, "POST", "/v1/jobs/" + j1 + "/progress", `{"steps":1,"ckpt":true}`, 400},
		// Paths and parameters: 404, 405, 400.
		{"path traversal in a log path", alice, "GET", "/v1/jobs/..%2F..%2Fstore.db/logs", "", 404},
		{"traversal to another job's logs", bob, "GET", "/v1/jobs/" + j2 + "%2F..%2F" + j1 + "/logs", "", 404},
		{"NUL in a job ID", alice, "GET", "/v1/jobs/j1%00/logs", "", 404},
		{"unknown job", alice, "GET", "/v1/jobs/j999", "", 404},
		{"traversal in a node name", admin, "GET", "/v1/nodes/..%2F..%2Fstore.db/power-samples", "", 404},
		{"GET on cancel", alice, "GET", "/v1/jobs/" + j1 + "/cancel", "", 405},
		{"DELETE a job", alice, "DELETE", "/v1/jobs/" + j1, "", 405},
		{"unknown state", alice, "GET", "/v1/jobs?state=bogus", "", 400},
		{"negative audit limit", admin, "GET", "/v1/audit?limit=-1", "", 400},
		{"negative work version", n1, "GET", "/v1/agents/n1/work?after=-1", "", 400},
		{"a 99-hour wait", n1, "GET", "/v1/agents/n1/work?wait=99h", "", 400},
		// The agent protocol: 400, 413.
		{"two GPU types", join, "POST", "/v1/agents/register", `{"name":"x","addr":"x","gpus":[{"index":0,"type":"v100"},{"index":1,"type":"k80"}]}`, 400},
		{"colon in a node name", join, "POST", "/v1/agents/register", `{"name":"a:b","addr":"x","gpus":[{"index":0,"type":"v100"}]}`, 400},
		{"no GPUs", join, "POST", "/v1/agents/register", `{"name":"x","addr":"x","gpus":[]}`, 400},
		{"log chunk for a traversal replica", n1, "POST", "/v1/agents/n1/logs", `{"replica":"../../x","job":"../../x","offset":0,"data":""}`, 400},
		{"log chunk at a negative offset", n1, "POST", "/v1/agents/n1/logs", `{"replica":"` + j1 + `.1.0","job":"` + j1 + `","offset":-1,"data":""}`, 400},
		{"status with an unknown field", n1, "POST", "/v1/agents/n1/status", `{"replicas":[],"extra":1}`, 400},
		{"2 MiB status", n1, "POST", "/v1/agents/n1/status", `{"replicas":[],"x":"` + strings.Repeat("a", 2<<20) + `"}`, 413},
		// Tokens: 400, 404.
		{"token for nobody", admin, "POST", "/v1/tokens", `{"user":""}`, 400},
		{"token for a name with a space", admin, "POST", "/v1/tokens", `{"user":"a b"}`, 400},
		{"token with role root", admin, "POST", "/v1/tokens", `{"user":"x","role":"root"}`, 400},
		{"join token with a user", admin, "POST", "/v1/tokens", `{"join":true,"user":"x"}`, 400},
		{"negative lifetime", admin, "POST", "/v1/tokens", `{"user":"x","ttl_s":-1}`, 400},
		{"revoke a malformed ID", admin, "DELETE", "/v1/tokens/..%2F..%2Fjobs%2Fj1", "", 404},
		{"revoke an unknown ID", admin, "DELETE", "/v1/tokens/0000000000000000", "", 404},
	}
}

// check sends the request and checks its answer: the status, and an
// api.Error body for every 4xx the API answers.
func (c corpusCase) check(t *testing.T, addr string) {
	req, err := http.NewRequest(c.method, "http://"+addr+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(c.token, "raw:"):
		req.Header.Set("Authorization", strings.TrimPrefix(c.token, "raw:"))
	case c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e api.Error
	if resp.StatusCode != c.want || json.Unmarshal(data, &e) != nil || e.Error == "" {
		t.Errorf("%s %s: %d %.300s, want %d with an api.Error", c.method, c.path, resp.StatusCode, data, c.want)
	}
}

// rawCase is a hostile request sent over a bare connection: slow or broken
// HTTP.
type rawCase struct {
	name string
	// send writes the request to the connection (and may stall).
	send func(w io.Writer)
	// want is the status expected, or 0 for the connection being closed
	// without an answer (a request that never arrived has nothing to be
	// answered: a slow header).
	want int
	// within is how soon the answer (or the close) must come.
	within time.Duration
}

func rawCorpus(admin string) []rawCase {
	auth := "Authorization: Bearer " + admin + "\r\n"
	return []rawCase{
		{"slow headers (slowloris)", func(w io.Writer) {
			io.WriteString(w, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\n")
		}, 0, 3 * time.Second},
		{"slow body", func(w io.Writer) {
			io.WriteString(w, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\n"+auth+"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"command\":")
		}, http.StatusRequestTimeout, 3 * time.Second},
		{"slow body to the agent protocol", func(w io.Writer) {
			io.WriteString(w, "POST /v1/tokens HTTP/1.1\r\nHost: x\r\n"+auth+"Content-Length: 50\r\n\r\n{")
		}, http.StatusRequestTimeout, 3 * time.Second},
		{"headers over the limit", func(w io.Writer) {
			io.WriteString(w, "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Pad: "+strings.Repeat("a", 32<<10)+"\r\n\r\n")
		}, http.StatusRequestHeaderFieldsTooLarge, 3 * time.Second},
		{"malformed request line", func(w io.Writer) {
			io.WriteString(w, "HELLO\r\n\r\n")
		}, http.StatusBadRequest, 3 * time.Second},
		{"body shorter than its length", func(w io.Writer) {
			io.WriteString(w, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\n"+auth+"Content-Length: 10\r\nConnection: close\r\n\r\n{}")
		}, http.StatusRequestTimeout, 3 * time.Second},
	}
}

// check runs a raw case.
func (c rawCase) check(t *testing.T, addr string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	c.send(conn)
	_ = conn.SetReadDeadline(time.Now().Add(c.within + 2*time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	switch {
	case c.want == 0 && err == nil:
		t.Errorf("answered %s, want the connection closed", resp.Status)
	case c.want == 0 && took > c.within:
		t.Errorf("closed after %s, want within %s", took, c.within)
	case c.want != 0 && err != nil:
		t.Errorf("no answer after %s: %v, want %d", took, err, c.want)
	case c.want != 0 && (resp.StatusCode != c.want || took > c.within):
		t.Errorf("%s after %s, want %d within %s", resp.Status, took, c.want, c.within)
	}
}
