package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// TestResourcesKeepJobsApart (issue 26): a server and two agents of two
// V100s with different CPU counts — big offers 8 CPUs and 16 GiB, small 6
// CPUs less 1 reserved (--cpus and --memory override what the host has,
// so the test does not depend on it). Three 1-GPU jobs of 5 CPUs each: no
// two of them fit one node, so two run, one per node, and the third waits
// with a reason naming cpu although two GPUs are free; when one ends, the
// third takes its node. nodes -o wide shows the CPUs used and free. A
// job whose GPUs ask more CPUs or memory than the largest node has is
// refused (exit 2, a 400 from the server) naming the resource and the
// node.
func TestResourcesKeepJobsApart(t *testing.T) {
	addr := freeAddr(t)
	url, data := "http://"+addr, t.TempDir()
	start(t, "server", "server", "--auth=false", "--listen", addr, "--data", filepath.Join(data, "server"))
	waitHealthy(t, url)
	for name, extra := range map[string][]string{
		"big":   {"--cpus", "8", "--memory", "16Gi"},
		"small": {"--cpus", "6", "--memory", "16Gi", "--reserve", "cpu=1"},
	} {
		args := append([]string{"agent", "--server", url, "--name", name, "--gpus", "v100=2",
			"--data", filepath.Join(data, "agent-"+name), "--stop-replicas-on-exit"}, extra...)
		start(t, "agent "+name, args...)
	}
	eventually(t, 20*time.Second, "two ready nodes", func() bool {
		return strings.Count(mustCLI(t, url, "nodes"), "ready") == 2
	})

	var ids []string
	for i := range 3 {
		ids = append(ids, strings.TrimSpace(mustCLI(t, url, "submit", "--name", "cpu5-"+string(rune('a'+i)), "--gpus", "1",
			"--cpus", "5", "--memory", "1Gi", "--grace-period", "1", "--", "sleep", "600")))
	}
	first, second := waitState(t, url, ids[0], 20*time.Second, api.Running), waitState(t, url, ids[1], 20*time.Second, api.Running)
	if node(first) == node(second) {
		t.Fatalf("two jobs of 5 CPUs on node %s (8 CPUs at most)", node(first))
	}
	third := job(t, url, ids[2])
	eventually(t, 10*time.Second, "the third job's reason naming cpu", func() bool {
		third = job(t, url, ids[2])
		return strings.Contains(third.Reason, "cpu")
	})
	if third.State != api.Queued {
		t.Fatalf("third job of 5 CPUs: %s on %v (%s)", third.State, third.Alloc, third.Reason)
	}
	t.Logf("third job waits: %s", third.Reason)
	wide := mustCLI(t, url, "nodes", "-o", "wide")
	t.Logf("nodes -o wide:\n%s", wide)
	for _, want := range []string{"big ready 2 1 v100 5 3 1Gi 15Gi", "small ready 2 1 v100 5 0 1Gi 15Gi"} {
		if !strings.Contains(squeeze(wide), want) {
			t.Errorf("nodes -o wide lacks %q", want)
		}
	}

	for _, c := range []struct{ flags, want string }{
		{"--cpus 16", "cpus: no registered node can ever hold it: one replica asks 16 of cpu, the largest v100 node big has 8"},
		{"--memory 32Gi", "memory: no registered node can ever hold it: one replica asks 32Gi of memory, the largest v100 node big has 16Gi"},
		{"--resource rdma/hca=1", "resources.rdma/hca: no registered node can ever hold it"},
	} {
		args := append([]string{"submit", "--gpus", "1"}, strings.Fields(c.flags)...)
		code, out, errs := cli(t, url, append(args, "--", "true")...)
		if code != 2 || out != "" || !strings.Contains(errs, "400") || !strings.Contains(errs, c.want) {
			t.Errorf("submit %s: exit %d, stdout %q, stderr %q; want 2 and %q", c.flags, code, out, errs, c.want)
		}
	}
	if n := len(jobs(t, url)); n != 3 {
		t.Errorf("%d jobs, want 3: the refused ones are not stored", n)
	}

	mustCLI(t, url, "cancel", ids[0])
	waitState(t, url, ids[0], 20*time.Second, api.Cancelled)
	now := waitState(t, url, ids[2], 20*time.Second, api.Running)
	if node(now) != node(first) || node(job(t, url, ids[1])) == node(now) {
		t.Errorf("third job on %s, want %s, the node the first left", node(now), node(first))
	}
	for _, id := range ids[1:] {
		mustCLI(t, url, "cancel", id)
	}
}

// node returns the node of a one-node job's allocation.
func node(j api.Job) string {
	if len(j.Alloc) == 0 {
		return ""
	}
	n, _, _ := strings.Cut(j.Alloc[0], "/")
	return n
}

// squeeze collapses runs of white space into one space.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}
