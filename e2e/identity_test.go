package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// addAccount creates Unix account name with useradd for the test and
// removes it (userdel) at its end.
func addAccount(t testing.TB, name string) {
	t.Helper()
	if _, err := user.Lookup(name); err == nil {
		t.Skipf("Unix account %s exists already; the test creates and removes its own accounts", name)
	}
	if out, err := exec.Command("useradd", "--no-create-home", "--user-group", "--shell", "/bin/sh", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Logf("userdel %s: %v\n%s", name, err, out)
		}
	})
}

// replicaDir is the directory of job id's first replica under agent data
// directory data.
func replicaDir(t testing.TB, data, id string) string {
	t.Helper()
	var dir string
	eventually(t, 20*time.Second, "the replica directory of "+id, func() bool {
		m, _ := filepath.Glob(filepath.Join(data, "replicas", id+".*"))
		if len(m) > 0 {
			dir = m[0]
		}
		return dir != ""
	})
	return dir
}

// rootCluster is a server that requires authentication and its agent n1,
// running as root: jobs run as their owners' Unix accounts.
type rootCluster struct {
	url, admin string
	tokens     map[string]string // each user's token
	data       string            // the test's directory (0711)
	agentData  string
	tokenFile  string // the server's admin token
	nodeToken  string // the agent's credential
	agent      *proc
}

// startRootCluster starts a server with --auth and agent n1 (as root, with
// an empty user map: every owner runs as the account of the same name,
// --stop-replicas-on-exit and agentArgs, where a later --user-map wins),
// and makes a token for each of users.
func startRootCluster(t testing.TB, users []string, agentArgs ...string) *rootCluster {
	t.Helper()
	// The replicas' accounts pass through the data directories (0711).
	data := sharedDir(t, "gpusched-root-", 0o711)
	c := &rootCluster{data: data, tokens: map[string]string{}, agentData: filepath.Join(data, "agent")}
	addr := freeAddr(t)
	c.url = "http://" + addr
	start(t, "server", "server", "--listen", addr, "--data", filepath.Join(data, "server"), "--auth")
	c.tokenFile = filepath.Join(data, "server", "admin.token")
	eventually(t, 20*time.Second, "the admin token", func() bool { _, err := os.Stat(c.tokenFile); return err == nil })
	waitHealthy(t, c.url)
	raw, _ := os.ReadFile(c.tokenFile)
	c.admin = strings.TrimSpace(string(raw))
	for _, u := range users {
		c.tokens[u] = strings.TrimSpace(mustSecure(t, c.url, c.admin, "", "token", "create", "--user", u))
	}
	join := strings.TrimSpace(mustSecure(t, c.url, c.admin, "", "token", "create", "--join"))
	// An empty user map: every owner runs as the account of the same name.
	usersFile := filepath.Join(data, "users.yaml")
	if err := os.WriteFile(usersFile, []byte("users: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"agent", "--server", c.url, "--name", "n1", "--data", c.agentData, "--join-token", join,
		"--user-map", usersFile, "--stop-replicas-on-exit"}, agentArgs...)
	c.agent = start(t, "agent n1", args...)
	eventually(t, 20*time.Second, "node n1 ready", func() bool {
		return strings.Contains(mustSecure(t, c.url, c.admin, "", "nodes"), "n1")
	})
	c.nodeToken = filepath.Join(c.agentData, "node.token")
	return c
}

// sharedDir makes a temporary directory of mode perm, which other
// accounts may enter (t.TempDir's are 0700 under a 0700 directory), and
// removes it at the test's end.
func sharedDir(t testing.TB, prefix string, perm os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startSleeper submits user's job that writes its PID (pid) and a secret
// (notes) into its working directory and sleeps; it returns the job's ID,
// its replica's directory and PID.
func startSleeper(t *testing.T, c *rootCluster, user string) (id, dir string, pid int) {
	t.Helper()
	id = strings.TrimSpace(mustSecure(t, c.url, c.tokens[user], "", "submit", "--name", user+"s", "--gpus", "1", "--",
		"sh", "-c", "echo $$ > pid; echo "+user+"-secret > notes; exec sleep 300"))
	dir = replicaDir(t, c.agentData, id)
	eventually(t, 20*time.Second, user+"'s job writes its PID", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "work", "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return id, dir, pid
}

// TestJobsRunAsTheirOwners (issue 27, identity and secrets): an agent
// running as root starts alice's job as Unix account alice; the job cannot
// read the admin token, the node credential or bob's job directory, cannot
// kill bob's replica, and sees no credential of the agent but its own job
// token; bob's job runs on; a job whose owner has no account on the node
// fails saying so.
func TestJobsRunAsTheirOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: an agent runs jobs as their owners' accounts only as root, and the test needs useradd")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("useradd not found: the test creates Unix accounts alice and bob with it")
	}
	addAccount(t, "alice")
	addAccount(t, "bob")
	t.Setenv("AGENT_SECRET_TOKEN", "agent-secret-value") // the agent's environment; no job may see it
	c := startRootCluster(t, []string{"alice", "bob", "carol"}, "--gpus", "v100=4")
	url, admin, tokens, tokenFile, nodeToken := c.url, c.admin, c.tokens, c.tokenFile, c.nodeToken

	bobJob, bobDir, bobPID := startSleeper(t, c, "bob")

	aliceJob := strings.TrimSpace(mustSecure(t, url, tokens["alice"], "", "submit", "--name", "alices", "--gpus", "1", "--",
		"sh", "-c", aliceScript(tokenFile, nodeToken, bobDir, bobPID)))
	var j api.Job
	eventually(t, 60*time.Second, "alice's job ends", func() bool {
		j = jobAs(t, url, admin, aliceJob)
		return j.State == api.Succeeded || j.State == api.Failed
	})
	var logs string
	eventually(t, 20*time.Second, "alice's output", func() bool {
		logs = mustSecure(t, url, admin, "", "logs", aliceJob)
		return strings.Contains(logs, "read-env-file") || j.State != api.Succeeded
	})
	if j.State != api.Succeeded {
		t.Fatalf("alice's job: %s (%s)\n%s", j.State, j.Reason, logs)
	}
	checkAliceLogs(t, logs)

	if err := syscall.Kill(bobPID, 0); err != nil {
		t.Errorf("bob's replica (pid %d) is gone: %v", bobPID, err)
	}
	if j := jobAs(t, url, admin, bobJob); j.State != api.Running {
		t.Errorf("bob's job: %s, want running", j.State)
	}
	checkOwners(t, bobDir)

	// carol has no account on n1: her job is not started there.
	carolJob := strings.TrimSpace(mustSecure(t, url, tokens["carol"], "", "submit", "--name", "carols", "--gpus", "1", "--", "id", "-un"))
	want := `no Unix account "carol" on node n1`
	eventually(t, 30*time.Second, "carol's job fails saying why", func() bool {
		j = jobAs(t, url, admin, carolJob)
		return j.State == api.Failed || j.State == api.Succeeded
	})
	if j.State != api.Failed || !strings.Contains(j.Reason, want) {
		t.Errorf("carol's job: %s (%s), want failed with %q", j.State, j.Reason, want)
	}
	mustSecure(t, url, admin, "", "cancel", bobJob)
}

// aliceScript is alice's job: it prints its account and tries each escape,
// printing DENIED or LEAK for each.
func aliceScript(adminToken, nodeToken, bobDir string, bobPID int) string {
	try := func(what, cmd string) string {
		return "if " + cmd + " >/dev/null 2>&1; then echo LEAK-" + what + "; else echo DENIED-" + what + "; fi\n"
	}
	return "echo account=$(id -un)\n" +
		try("admin-token", "cat "+adminToken) +
		try("node-token", "cat "+nodeToken) +
		try("bob-dir", "ls "+bobDir) +
		try("bob-work", "ls "+bobDir+"/work") +
		try("bob-notes", "cat "+bobDir+"/work/notes") +
		try("bob-log", "cat "+bobDir+"/output.log") +
		try("bob-env", "cat "+bobDir+"/env") +
		try("bob-record", "cat "+bobDir+"/replica.json") +
		try("kill-bob", "kill "+strconv.Itoa(bobPID)) +
		try("own-record", "touch $GPUSCHED_REPLICA_DIR/exit.json") +
		"env | grep -q agent-secret-value && echo LEAK-agent-env || echo DENIED-agent-env\n" +
		"case \"$GPUSCHED_TOKEN\" in gps_b_*) echo job-token-ok;; esac\n" +
		"echo home=$HOME user=$USER\n" +
		"touch written && echo wrote-cwd\n" +
		"echo steps=7 >> \"$GPUSCHED_PROGRESS_FILE\" && echo wrote-progress\n" +
		"cat \"$GPUSCHED_ENV_FILE\" >/dev/null && echo read-env-file\n"
}

// checkAliceLogs checks alice's output: her account, every escape denied,
// her own files usable.
func checkAliceLogs(t *testing.T, logs string) {
	t.Helper()
	for _, want := range []string{"account=alice", "job-token-ok", "user=alice", "wrote-cwd", "wrote-progress", "read-env-file"} {
		if !strings.Contains(logs, want) {
			t.Errorf("alice's output lacks %q:\n%s", want, logs)
		}
	}
	for _, what := range []string{"admin-token", "node-token", "bob-dir", "bob-work", "bob-notes", "bob-log", "bob-env",
		"bob-record", "kill-bob", "own-record", "agent-env"} {
		if !strings.Contains(logs, "DENIED-"+what) {
			t.Errorf("alice's job: %s not denied:\n%s", what, logs)
		}
	}
}

// checkOwners checks the owners and modes of bob's replica directory: the
// directory and records the agent's, the working directory, log, progress
// and environment files bob's.
func checkOwners(t *testing.T, dir string) {
	t.Helper()
	u, err := user.Lookup("bob")
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := strconv.Atoi(u.Uid)
	for _, f := range []struct {
		name string
		uid  int
		mode os.FileMode
	}{{".", 0, 0o711}, {"replica.json", 0, 0o600}, {"shim.json", 0, 0o600}, {"work", bob, 0o700}, {"output.log", bob, 0o600},
		{"progress", bob, 0o600}, {"env", bob, 0o600}} {
		fi, err := os.Lstat(filepath.Join(dir, f.name))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != f.uid || fi.Mode().Perm() != f.mode {
			t.Errorf("%s: uid %d mode %04o, want uid %d mode %04o", f.name, st.Uid, fi.Mode().Perm(), f.uid, f.mode)
		}
	}
}

// jobAs reads job id with token.
func jobAs(t testing.TB, url, token, id string) api.Job {
	t.Helper()
	var j api.Job
	if err := json.Unmarshal([]byte(mustSecure(t, url, token, "", "job", id, "-o", "json")), &j); err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
	return j
}
