package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// secureCLI runs a client command with a token ("" for none) and the CA,
// and no config file.
func secureCLI(t testing.TB, server, token, ca string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "GPUSCHED_SERVER="+server, "GPUSCHED_TOKEN="+token, "GPUSCHED_CA="+ca,
		"GPUSCHED_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// mustSecure is secureCLI that fails the test on a non-zero exit.
func mustSecure(t testing.TB, server, token, ca string, args ...string) string {
	t.Helper()
	code, out, errs := secureCLI(t, server, token, ca, args...)
	if code != 0 {
		t.Fatalf("gpusched %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// wantRefused runs a command that the server must refuse with status
// (401 or 403): exit 1 and the status in the message.
func wantRefused(t testing.TB, what string, status int, server, token, ca string, args ...string) {
	t.Helper()
	code, out, errs := secureCLI(t, server, token, ca, args...)
	if code != 1 || !strings.Contains(errs, fmt.Sprintf("server: %d", status)) {
		t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 with %d", what, code, out, errs, status)
	}
}

// TestAuthEndToEnd (issue 18): `gpusched server` over TLS with a
// self-signed CA and authentication (the default); agents join with a join
// token; the CLI logs in with the CA. Anonymous requests are 401; bob can
// neither see, read the logs of, nor cancel alice's job (403) while an
// admin can; a revoked token stops working at once; an agent without a join
// token cannot register; a node's credential cannot act for another node;
// a job reads its host list with its own token over TLS; and `server
// --listen 0.0.0.0:PORT` without TLS, or without authentication, exits 2.
func TestAuthEndToEnd(t *testing.T) {
	data := t.TempDir()
	addr := freeAddr(t)
	url := "https://" + addr
	start(t, "server", "server", "--listen", addr, "--data", filepath.Join(data, "server"), "--tls-self-signed")
	ca := filepath.Join(data, "server", "tls", "ca.crt")
	tokenFile := filepath.Join(data, "server", "admin.token")
	eventually(t, 20*time.Second, "the admin token and the CA", func() bool {
		_, e1 := os.Stat(tokenFile)
		_, e2 := os.Stat(ca)
		return e1 == nil && e2 == nil
	})
	hc, err := client.Options{CAFile: ca}.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "server healthy over TLS", func() bool {
		r, err := hc.Get(url + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token: %v %v", fi, err)
	}
	rawAdmin, _ := os.ReadFile(tokenFile)
	admin := strings.TrimSpace(string(rawAdmin))

	// The CLI over TLS: without the CA it refuses the certificate; login
	// with it keeps server, token and CA in the config file.
	if code, _, errs := secureCLI(t, url, admin, "", "whoami"); code == 0 || !strings.Contains(errs, "--ca") {
		t.Errorf("whoami without the CA: exit %d, %q", code, errs)
	}
	cfg := filepath.Join(data, "client.yaml")
	login := exec.Command(binary, "login", "--server", url, "--token", admin, "--ca", ca)
	login.Env = append(os.Environ(), "GPUSCHED_CONFIG="+cfg, "GPUSCHED_SERVER=", "GPUSCHED_TOKEN=", "GPUSCHED_CA=")
	if out, err := login.CombinedOutput(); err != nil || !strings.Contains(string(out), "as user admin (role admin)") {
		t.Fatalf("login: %v\n%s", err, out)
	}
	who := exec.Command(binary, "whoami")
	who.Env = append(os.Environ(), "GPUSCHED_CONFIG="+cfg, "GPUSCHED_SERVER=", "GPUSCHED_TOKEN=", "GPUSCHED_CA=")
	if out, err := who.CombinedOutput(); err != nil || !strings.Contains(string(out), "user admin") {
		t.Errorf("whoami from the config file: %v\n%s", err, out)
	}

	alice := strings.TrimSpace(mustSecure(t, url, admin, ca, "token", "create", "--user", "alice"))
	bob := strings.TrimSpace(mustSecure(t, url, admin, ca, "token", "create", "--user", "bob"))
	join := strings.TrimSpace(mustSecure(t, url, admin, ca, "token", "create", "--join"))

	// Agents: one joins; one without a join token never registers.
	start(t, "agent n1", "agent", "--server", url, "--name", "n1", "--gpus", "v100=2", "--data", filepath.Join(data, "agent-n1"),
		"--join-token", join, "--ca", ca, "--stop-replicas-on-exit")
	intruder := start(t, "agent n2", "agent", "--server", url, "--name", "n2", "--gpus", "v100=2", "--data", filepath.Join(data, "agent-n2"), "--ca", ca)
	eventually(t, 20*time.Second, "node n1 ready", func() bool {
		return strings.Contains(mustSecure(t, url, admin, ca, "nodes"), "n1")
	})
	eventually(t, 10*time.Second, "the intruder refused", func() bool { return strings.Contains(intruder.out.String(), "401") })
	if nodes := mustSecure(t, url, admin, ca, "nodes"); strings.Contains(nodes, "n2") {
		t.Errorf("an agent without a join token registered:\n%s", nodes)
	}
	cred, err := os.ReadFile(filepath.Join(data, "agent-n1", "node.token"))
	if err != nil {
		t.Fatalf("n1's credential: %v", err)
	}
	for _, path := range []string{"/v1/agents/n2/status", "/v1/agents/register"} {
		body := `{"replicas":[]}`
		if strings.HasSuffix(path, "register") {
			body = `{"name":"n2","addr":"n2","gpus":[{"index":0,"type":"v100"}]}`
		}
		req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(cred)))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("n1's credential on %s for n2: %d, want 403", path, resp.StatusCode)
		}
	}

	// Jobs belong to their users.
	wantRefused(t, "anonymous submit", 401, url, "", ca, "submit", "--gpus", "1", "--", "true")
	gpuschedBin, _ := filepath.Abs(binary)
	script := "echo hosts: $(" + gpuschedBin + " hostfile); sleep 30"
	j := strings.TrimSpace(mustSecure(t, url, alice, ca, "submit", "--name", "alices", "--gpus", "1", "--", "sh", "-c", script))
	eventually(t, 20*time.Second, "alice's job prints its host list", func() bool {
		return strings.Contains(mustSecure(t, url, alice, ca, "logs", j), "hosts: n1:1")
	})
	wantRefused(t, "bob reads alice's job", 403, url, bob, ca, "job", j)
	wantRefused(t, "bob reads alice's logs", 403, url, bob, ca, "logs", j)
	wantRefused(t, "bob cancels alice's job", 403, url, bob, ca, "cancel", j)
	wantRefused(t, "bob creates a token", 403, url, bob, ca, "token", "create", "--user", "eve")
	if out := mustSecure(t, url, bob, ca, "jobs"); strings.Contains(out, j+" ") {
		t.Errorf("bob lists alice's job:\n%s", out)
	}
	if !strings.Contains(mustSecure(t, url, admin, ca, "job", j), "alice") {
		t.Error("the admin cannot read alice's job")
	}

	// Revocation takes effect at once.
	var aliceID string
	for _, line := range strings.Split(mustSecure(t, url, admin, ca, "token", "list"), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == "user" && f[2] == "alice" {
			aliceID = f[0]
		}
	}
	mustSecure(t, url, admin, ca, "token", "revoke", aliceID)
	wantRefused(t, "alice after revocation", 401, url, alice, ca, "jobs")
	mustSecure(t, url, admin, ca, "cancel", j)
	waitSecure(t, url, admin, ca, j, api.Cancelled)
	if audit := mustSecure(t, url, admin, ca, "audit"); !strings.Contains(audit, "user alice") || !strings.Contains(audit, "DELETE /v1/tokens/"+aliceID) {
		t.Errorf("audit log:\n%s", audit)
	}

	// Exposed without TLS, or without authentication: refused, exit 2.
	for _, args := range [][]string{
		{"server", "--listen", "0.0.0.0:" + strings.Split(freeAddr(t), ":")[1], "--data", filepath.Join(data, "exposed")},
		{"server", "--listen", "0.0.0.0:" + strings.Split(freeAddr(t), ":")[1], "--data", filepath.Join(data, "exposed"), "--tls-self-signed", "--auth=false"},
	} {
		code, _, errs := cli(t, url, args...)
		if code != 2 || !strings.Contains(errs, "is not a loopback address") || !strings.Contains(errs, "--insecure") {
			t.Errorf("%v: exit %d, %q; want 2 with the reason", args, code, errs)
		}
	}
}

// waitSecure waits until job id is in state st.
func waitSecure(t testing.TB, url, token, ca, id string, st api.State) {
	t.Helper()
	eventually(t, 20*time.Second, "job "+id+" "+string(st), func() bool {
		return strings.Contains(mustSecure(t, url, token, ca, "jobs"), string(st))
	})
}
