package cli_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

// TestSubmitResources: submit --cpus, --memory and --resource reach the
// server as per-GPU requests; job shows them; nodes -o wide shows what
// is used and free; a job no node could hold is refused (exit 2) naming
// the resource and the largest node.
func TestSubmitResources(t *testing.T) {
	svc, url := service(t)
	svc.StartAgentWith("n0", "v100=2", "cpu=4,memory=16Gi,rdma/hca=2")
	mustRun(t, "submit", "--server", url, "--gpus", "1", "--cpus", "1.5", "--memory", "4Gi", "--resource", "rdma/hca=1",
		"--grace-period", "1", "--", "sleep", "600")
	j := svc.WaitState("j1", api.Running)
	if want := map[string]string{"cpu": "1500m", "memory": "4Gi", "rdma/hca": "1"}; len(j.Requests) != 3 ||
		j.Requests["cpu"] != want["cpu"] || j.Requests["memory"] != want["memory"] || j.Requests["rdma/hca"] != want["rdma/hca"] {
		t.Errorf("requests %v, want %v", j.Requests, want)
	}
	if out := mustRun(t, "job", "j1", "--server", url); !strings.Contains(out, "Per GPU:") ||
		!strings.Contains(out, "cpu=1500m,memory=4Gi,rdma/hca=1") {
		t.Errorf("job detail:\n%s", out)
	}
	wide := mustRun(t, "nodes", "--server", url, "-o", "wide")
	lines := strings.Split(strings.TrimSpace(wide), "\n")
	if len(lines) != 2 || !strings.HasPrefix(strings.Join(strings.Fields(lines[0]), " "),
		"NAME STATE GPUS USED TYPE CPU-USED CPU-FREE MEM-USED MEM-FREE OTHER(USED/FREE) CLASS") {
		t.Fatalf("nodes -o wide:\n%s", wide)
	}
	if got := strings.Join(strings.Fields(lines[1]), " "); !regexp.MustCompile(`^n0 ready 2 1 v100 1500m 2500m 4Gi 12Gi rdma/hca=1/1 `).MatchString(got) {
		t.Errorf("nodes -o wide row %q", got)
	}
	var nodes []api.Node
	if err := json.Unmarshal([]byte(mustRun(t, "nodes", "--server", url, "-o", "json")), &nodes); err != nil ||
		nodes[0].Capacity["cpu"] != "4" || nodes[0].Used["cpu"] != "1500m" {
		t.Errorf("nodes -o json: %v %+v", err, nodes)
	}
	code, out, errs := run(t, "submit", "--server", url, "--gpus", "1", "--cpus", "8", "--", "true")
	if code != 2 || out != "" || !strings.Contains(errs, "cpus: no registered node can ever hold it: one replica asks 8 of cpu, the largest v100 node n0 has 4") {
		t.Errorf("oversized: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	mustRun(t, "cancel", "j1", "--server", url)
}
