package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// elasticScript is an elastic job's process: it records its PID (the
// replica's process group leader) and, on SIGUSR1, appends the generation
// its environment file holds and its host file to usr1; it runs until the
// file stop exists.
const elasticScript = `echo $$ > %[1]s/pid
trap 'echo "pid=$$ gen=$(sed -n "s/^GPUSCHED_GENERATION=//p" "$GPUSCHED_ENV_FILE") hosts=$(tr "\n" " " < "$GPUSCHED_HOSTFILE")" >> %[1]s/usr1' USR1
touch %[1]s/ready
while [ ! -e %[1]s/stop ]; do sleep 0.05; done`

// TestLiveElasticResize runs `gpusched dev` on 4 GPUs with the fulfillment
// scaler allowed to fill the node (max_load 1). The fulfillment scaler
// acts in every round, and rounds follow events (submissions, exits), so
// the sizes below follow from the order of events alone: no scaler period
// to wait for, nothing timing-dependent. An elastic job (1 to 4 GPUs)
// starts on the one GPU a 3-GPU job leaves free; when that job ends it
// grows in place to 4 GPUs, and when a 2-GPU job arrives it shrinks in
// place to 2. Each resize raises the membership generation, rewrites the
// job's host and environment files and sends SIGUSR1 to its process, which
// keeps running throughout (same PID, one attempt).
func TestLiveElasticResize(t *testing.T) {
	addr := freeAddr(t)
	cfg := policyConfig(t, "scaler: fulfillment\nfulfillment: {max_load: 1}\n")
	start(t, "dev", "dev", "--listen", addr, "--data", t.TempDir(), "--gpus", "v100=4", "--config", cfg)
	url := "http://" + addr
	waitHealthy(t, url)
	dir := t.TempDir()
	defer touch(t, filepath.Join(dir, "stop"))

	blocker := submit(t, url, "blocker", 3, gate(filepath.Join(dir, "blocker-go")))
	waitState(t, url, blocker, 20*time.Second, api.Running)
	id := strings.TrimSpace(mustCLI(t, url, "submit", "--name", "elastic", "--gpus", "1", "--min-gpus", "1", "--max-gpus", "4",
		"--grace-period", "2s", "--", "sh", "-c", fmt.Sprintf(elasticScript, dir)))
	j := waitState(t, url, id, 20*time.Second, api.Running)
	if len(j.Alloc) != 1 || j.Generation != 1 {
		t.Fatalf("elastic job started on %v, generation %d; want 1 GPU, generation 1", j.Alloc, j.Generation)
	}
	node, _, _ := strings.Cut(j.Alloc[0], "/")
	eventually(t, 10*time.Second, "the elastic job's process ready", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ready"))
		return err == nil
	})
	pid := readInt(t, filepath.Join(dir, "pid"))

	// The 3-GPU job ends: the elastic job grows to 4 GPUs.
	touch(t, filepath.Join(dir, "blocker-go"))
	eventually(t, 10*time.Second, "the elastic job grown to 4 GPUs", func() bool {
		j = job(t, url, id)
		return len(j.Alloc) == 4
	})
	if j.State != api.Running || j.Generation != 2 || j.Attempt != 1 {
		t.Fatalf("after the grow: %s, generation %d, attempt %d", j.State, j.Generation, j.Attempt)
	}
	grown := fmt.Sprintf("pid=%d gen=2 hosts=%s:4 ", pid, node)
	eventually(t, 10*time.Second, "SIGUSR1 for generation 2", func() bool { return usr1(t, dir) == grown+"\n" })

	// A 2-GPU job arrives: the elastic job shrinks to 2 GPUs and it starts.
	other := submit(t, url, "other", 2, gate(filepath.Join(dir, "stop")))
	waitState(t, url, other, 10*time.Second, api.Running)
	j = job(t, url, id)
	if j.State != api.Running || len(j.Alloc) != 2 || j.Generation != 3 || j.Attempt != 1 {
		t.Fatalf("after the shrink: %s on %v, generation %d, attempt %d", j.State, j.Alloc, j.Generation, j.Attempt)
	}
	shrunk := fmt.Sprintf("pid=%d gen=3 hosts=%s:2 ", pid, node)
	eventually(t, 10*time.Second, "SIGUSR1 for generation 3", func() bool { return usr1(t, dir) == grown+"\n"+shrunk+"\n" })
	if out := mustCLI(t, url, "hostfile", "--job", id); out != node+":2\n" {
		t.Errorf("gpusched hostfile --job %s = %q, want %q", id, out, node+":2\n")
	}
	if !groupAlive(pid) || readInt(t, filepath.Join(dir, "pid")) != pid {
		t.Errorf("the elastic job's process %d did not keep running", pid)
	}
	out := mustCLI(t, url, "job", id)
	for _, want := range []string{"resized to 4 GPUs by the fulfillment scaler, generation 2",
		"resized to 2 GPUs by the fulfillment scaler, generation 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("gpusched job %s lacks %q:\n%s", id, want, out)
		}
	}
	if code, _, errs := cli(t, url, "hostfile", "--job", blocker); code != 1 || !strings.Contains(errs, "succeeded") {
		t.Errorf("hostfile of an ended job: exit %d, stderr %q; want 1 saying it succeeded", code, errs)
	}
	if os.Getenv("GPUSCHED_JOB_ID") == "" {
		if code, _, errs := cli(t, url, "hostfile"); code != 2 || !strings.Contains(errs, "--job") {
			t.Errorf("hostfile without a job: exit %d, stderr %q; want 2 asking for --job", code, errs)
		}
	}
}

// usr1 returns what the elastic job's SIGUSR1 handler has written.
func usr1(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "usr1"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
