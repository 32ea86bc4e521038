package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestEDL runs docs/EDL.md's PaddlePaddle-style job: 4 replicas (one per
// node) of e2e/testdata/edl/trainer.py, each restarted by its shell when it
// dies (as Kubernetes restarts a pod), compete for the master role (whose
// holder registers 1,000 data tasks), ranks 0 and 1 claim the 2 pserver
// slots, and all lease and train on the tasks. Mid-pass the master and a
// pserver are killed with SIGKILL: the master role moves to another process
// under a new epoch, the restarted pserver reclaims a free index and finds
// the checkpoint path of its predecessor, the killed trainers' tasks are
// leased again after their TTL, and in the end every task is done exactly
// once.
func TestEDL(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed (Debian python3)")
	}
	data, edl := t.TempDir(), t.TempDir()
	client, _ := filepath.Abs("../clients/python")
	trainer, _ := filepath.Abs("testdata/edl/trainer.py")
	t.Setenv("EDL_DIR", edl)
	t.Setenv("EDL_CLIENT", client)
	addr := freeAddr(t)
	url := "http://" + addr
	start(t, "server", "server", "--listen", addr, "--data", filepath.Join(data, "server"), "--auth=false")
	waitHealthy(t, url)
	for i := range 4 {
		n := fmt.Sprintf("n%d", i)
		start(t, "agent "+n, "agent", "--server", url, "--name", n, "--gpus", "v100=1", "--data", filepath.Join(data, n))
	}
	id := submit(t, url, "edl", 4, "for i in 1 2 3 4 5; do python3 "+trainer+" && exit 0; done; exit 1")
	t.Cleanup(func() {
		if t.Failed() {
			_, out, _ := cli(t, url, "logs", id)
			t.Logf("--- the job's output:\n%s", out[max(0, len(out)-4000):])
		}
	})
	waitState(t, url, id, 30*time.Second, api.Running)

	var q api.TaskQueue
	eventually(t, 60*time.Second, "200 tasks done", func() bool {
		return getJSON(url+"/v1/jobs/"+id+"/tasks", &q) == nil && q.DoneTotal >= 200
	})
	var m api.Master
	if err := getJSON(url+"/v1/jobs/"+id+"/master", &m); err != nil || m.Holder == "" {
		t.Fatalf("master: %+v %v", m, err)
	}
	var ps api.PServerList
	eventually(t, 10*time.Second, "2 pservers", func() bool {
		return getJSON(url+"/v1/jobs/"+id+"/pservers", &ps) == nil && ps.Live == 2
	})
	victim := ""
	for _, p := range ps.PServers {
		if p.Holder != m.Holder {
			victim = p.Holder
		}
	}
	t.Logf("mid-pass (%d done): killing the master %s (epoch %d) and the pserver %s", q.Done, m.Holder, m.Epoch, victim)
	killHolding(t, edl, m.Holder)
	killHolding(t, edl, victim)
	eventually(t, 20*time.Second, "the master role moves", func() bool {
		var now api.Master
		return getJSON(url+"/v1/jobs/"+id+"/master", &now) == nil && now.Holder != "" && now.Holder != m.Holder && now.Epoch > m.Epoch
	})
	waitState(t, url, id, 90*time.Second, api.Succeeded)
	if err := getJSON(url+"/v1/jobs/"+id+"/tasks", &q); err != nil || q.DoneTotal != 1000 || q.Failed != 0 || !q.Finished {
		t.Fatalf("queue at the end: %+v %v", q, err)
	}
	checkEDLLogs(t, edl, m.Holder, victim)
}

// killHolding waits until holder's last event is a lease (it trains on a
// task), then kills it.
func killHolding(t *testing.T, dir, holder string) {
	t.Helper()
	eventually(t, 5*time.Second, holder+" holding a lease", func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, holder+".log"))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		return strings.HasPrefix(lines[len(lines)-1], "lease ")
	})
	kill(t, holder)
}

// kill sends SIGKILL to the process of holder "<replica>:<pid>".
func kill(t *testing.T, holder string) {
	t.Helper()
	_, p, _ := strings.Cut(holder, ":")
	pid, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("holder %q: no pid", holder)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", holder, err)
	}
}

// checkEDLLogs reads every process's event log and checks: each task done
// exactly once; a task leased by a killed process leased again; the master
// role held by more than one process; a restarted pserver that found its
// predecessor's checkpoint path.
func checkEDLLogs(t *testing.T, dir, master, pserver string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	done := map[int]string{}
	leasedBy := map[int][]string{}
	masters, reclaimed := 0, ""
	reporting := map[int]bool{}
	lastLease := map[string]int{} // holder → the task it holds (leased, not reported)
	for _, f := range logs {
		holder := strings.TrimSuffix(filepath.Base(f), ".log")
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			w := strings.Fields(sc.Text())
			switch {
			case len(w) >= 2 && w[0] == "done":
				delete(lastLease, holder)
				i, _ := strconv.Atoi(w[1])
				if prev, dup := done[i]; dup {
					t.Errorf("task %d done twice: by %s and %s", i, prev, holder)
				}
				done[i] = holder
			case len(w) >= 2 && w[0] == "reporting" && (holder == master || holder == pserver):
				delete(lastLease, holder) // it reported: the task may be done
				i, _ := strconv.Atoi(w[1])
				reporting[i] = true // killed after reporting, maybe before logging "done"
			case len(w) >= 2 && w[0] == "lease":
				i, _ := strconv.Atoi(w[1])
				leasedBy[i] = append(leasedBy[i], holder)
				lastLease[holder] = i
			case w[0] == "master":
				masters++
			case len(w) == 3 && w[0] == "pserver" && w[2] != "-":
				reclaimed = holder + " got index " + w[1] + " with " + w[2]
			}
		}
		fh.Close()
		if t.Failed() {
			data, _ := os.ReadFile(f)
			if lines := strings.Split(string(data), "\n"); len(lines) > 0 {
				t.Logf("%s: first lines %q", holder, lines[:min(3, len(lines))])
			}
		}
	}
	again := 0
	for _, victim := range []string{master, pserver} {
		i, held := lastLease[victim]
		if !held { // it finished its task between the check and the kill
			t.Logf("%s was killed after reporting its task", victim)
			continue
		}
		if hs := leasedBy[i]; len(hs) < 2 || done[i] == "" || done[i] == victim {
			t.Errorf("task %d of the killed %s: leased by %v, done by %q; want it leased again and done by another", i, victim, hs, done[i])
			continue
		}
		again++
	}
	for i := range 1000 {
		if _, ok := done[i]; !ok && !reporting[i] {
			t.Errorf("task %d: no done report, and no killed process was reporting it", i)
		}
	}
	t.Logf("%d processes; %d tasks done once each; %d tasks of the killed processes leased again; %d master grants; %s",
		len(logs), len(done), again, masters, reclaimed)
	if again == 0 {
		t.Error("no task of a killed process was leased again")
	}
	if masters < 2 {
		t.Errorf("the master role was granted %d times, want a second master", masters)
	}
	if reclaimed == "" {
		t.Error("no restarted pserver found its predecessor's checkpoint path")
	}
}
