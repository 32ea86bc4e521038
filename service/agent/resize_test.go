package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// trapScript reports SIGUSR1 with the generation its environment file
// holds then and its host list, and says "ready" once the trap is set.
const trapScript = `trap 'echo "usr1 gen=$(grep ^GPUSCHED_GENERATION= "$GPUSCHED_ENV_FILE" | cut -d= -f2) hosts=$(tr "\n" , < "$GPUSCHED_HOSTFILE")"' USR1
echo ready
while :; do sleep 0.02; done`

// member returns a replica of job with generation gen, node rank rank and
// host list hosts.
func member(id, job, script string, gen, rank string, gpus []int, hosts string) api.Replica {
	r := replica(id, script)
	r.Job, r.GPUs, r.HostFile = job, gpus, hosts
	r.Env = map[string]string{"GPUSCHED_GENERATION": gen, "NODE_RANK": rank, "GPUSCHED_JOB_ID": job}
	return r
}

// TestLiveUpdate changes the work entries of running replicas as a live
// resize does: each keeps running (same PID) and gets new host and
// environment files; only node rank 0's process group leader, and only
// when it handles SIGUSR1, is signalled.
func TestLiveUpdate(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	ta := startAgent(t, f.srv.URL, "")
	r0 := member("j1.1.0", "j1", trapScript, "1", "0", []int{0}, "n1:1\nn2:1\n")
	r1 := member("j1.1.1", "j1", trapScript, "1", "1", []int{1}, "n1:1\nn2:1\n")
	r2 := member("j2.1.0", "j2", "echo ready; while :; do sleep 0.02; done", "1", "0", []int{2}, "n1:1\n")
	f.setWork(nil, r0, r1, r2)
	pids := map[string]int{}
	for _, r := range []api.Replica{r0, r1, r2} {
		pids[r.ID] = f.waitRunning(t, r.ID).PID
		f.waitLog(t, r.ID, "ready\n")
	}
	envOf := func(id string) string {
		b, _ := os.ReadFile(filepath.Join(ta.replicaDir(id), envFile))
		return string(b)
	}
	if e := envOf(r0.ID); !strings.Contains(e, "GPUSCHED_GENERATION=1\n") || !strings.Contains(e, "CUDA_VISIBLE_DEVICES=0\n") ||
		!strings.Contains(e, "GPUSCHED_ENV_FILE="+filepath.Join(ta.replicaDir(r0.ID), envFile)+"\n") {
		t.Fatalf("env file at the start:\n%s", e)
	}

	n0 := member(r0.ID, "j1", trapScript, "2", "0", []int{0, 3}, "n1:2\n")
	n1 := member(r1.ID, "j1", trapScript, "2", "1", []int{1}, "n1:2\nn2:1\n")
	n2 := member(r2.ID, "j2", r2.Command[2], "2", "0", []int{2}, "n1:1\n")
	f.setWork(nil, n0, n1, n2)
	f.waitLog(t, r0.ID, "usr1 gen=2 hosts=n1:2,\n")
	waitFor(t, "the other replicas' env files", func() bool {
		return strings.Contains(envOf(r1.ID), "GPUSCHED_GENERATION=2\n") && strings.Contains(envOf(r2.ID), "GPUSCHED_GENERATION=2\n")
	})
	if e := envOf(r0.ID); !strings.Contains(e, "CUDA_VISIBLE_DEVICES=0,3\n") {
		t.Errorf("env file after the update:\n%s", e)
	}
	time.Sleep(200 * time.Millisecond)
	if out := f.logOf(r1.ID); strings.Contains(out, "usr1") {
		t.Errorf("node rank 1 was signalled: %q", out)
	}
	for _, r := range []api.Replica{r0, r1, r2} {
		if s, _ := f.statusOf(r.ID); s.Phase != api.ReplicaRunning || s.PID != pids[r.ID] {
			t.Errorf("%s after the update: %+v, want still running as PID %d", r.ID, s, pids[r.ID])
		}
	}
	// A restarted agent adopts the replica with its updated entry.
	var rec record
	if err := shim.ReadJSON(filepath.Join(ta.replicaDir(r0.ID), recordFile), &rec); err != nil || rec.Replica.Env["GPUSCHED_GENERATION"] != "2" {
		t.Errorf("record after the update: %+v, %v", rec.Replica, err)
	}
}

// TestAdoptedReplicaKeepsWorking checks progress, output and live resizes
// of a replica that a restarted agent adopted from its shim's files.
func TestAdoptedReplicaKeepsWorking(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	data := t.TempDir()
	ta := startAgent(t, f.srv.URL, data)
	r := member("j1.1.0", "j1", trapScript, "1", "0", []int{0}, "n1:1\nn2:1\n")
	f.setWork(nil, r)
	pid := f.waitRunning(t, r.ID).PID
	f.waitLog(t, r.ID, "ready\n")
	ta.stop(t)

	ta2 := startAgent(t, f.srv.URL, data)
	progress, err := os.OpenFile(filepath.Join(ta2.replicaDir(r.ID), shim.ProgressFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := progress.WriteString("steps=7 checkpoint=1\n"); err != nil {
		t.Fatal(err)
	}
	progress.Close()
	waitFor(t, "the adopted replica's checkpoint", func() bool {
		s, _ := f.statusOf(r.ID)
		return s.Progress != nil && s.Progress.CheckpointSteps == 7
	})
	f.setWork(nil, member(r.ID, "j1", trapScript, "2", "0", []int{0}, "n1:1\n"))
	f.waitLog(t, r.ID, "usr1 gen=2 hosts=n1:1,\n")
	if s, _ := f.statusOf(r.ID); s.Phase != api.ReplicaRunning || s.PID != pid {
		t.Errorf("adopted replica after the resize: %+v, want still running as PID %d", s, pid)
	}
}
