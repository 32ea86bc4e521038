package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// aliTask is an Alibaba job as the reader builds it.
func aliTask(id string, submit, duration model.Time, gpus int, cpu, memMiB int64, qos string) model.JobSpec {
	return model.JobSpec{ID: id, Submit: submit, Duration: duration, GPUs: gpus, MinGPUs: gpus, MaxGPUs: gpus,
		ReplicaGPUs: gpus, Group: qos, Requests: alibabaRequests(cpu, memMiB)}
}

func TestReadAlibaba(t *testing.T) {
	const h = alibabaHeader + "\n"
	s := model.Second
	held := aliTask("p3", 20*s, 5*s, 1, 0, 0, "BE")
	held.GPUType = "v100m16"
	runReadCases(t, "pods.csv", "alibaba", []readCase{
		{name: "tasks, times and requests",
			in: h + "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n" +
				"p1,88000,327680,8,1000,,BE,Succeeded,100,400,160\n" +
				"p2,6000,0,2,1000,,LS,Pending,10,70,\n",
			want: []model.JobSpec{aliTask("p0", 0, 12537496*s, 1, 12000, 16384, "LS"),
				aliTask("p2", 10*s, 60*s, 2, 6000, 0, "LS"), aliTask("p1", 100*s, 240*s, 8, 88000, 327680, "BE")}},
		{name: "gpu type and zero duration", in: h + "p3,0,0,1,1000,V100M16,BE,Failed,20,25,20\np4,1,1,1,1000,,BE,Failed,21,21,21\n",
			want: []model.JobSpec{held, aliTask("p4", 21*s, 1, 1, 1, 1, "BE")}},
		{name: "CRLF, spaces and a BOM", in: "\xef\xbb\xbf" + h + " p5 , 1000 , 1 , 1 , 1000 , , LS , Running , 1 , 2 , 1 \r\n",
			want: []model.JobSpec{aliTask("p5", s, s, 1, 1000, 1, "LS")}},
		{name: "no header", in: "p0,1,1,1,1000,,LS,Running,0,1,0\n", err: `pods.csv:1: missing header: want "name,cpu_milli`},
		{name: "empty", in: "", err: `pods.csv: missing header "name,cpu_milli`},
		{name: "no times", in: alibabaNoTimes + "\np,1,1,1,1000\n", err: "pods.csv:1: this Alibaba pod list has no creation, deletion or scheduled times"},
		{name: "node list", in: alibabaNodesHeader + "\nn,1,1,1,T4\n", err: "pods.csv:1: this is an Alibaba node list, not a pod list: give it with --cluster"},
		{name: "columns", in: h + "p0,1,1,1,1000,,LS,Running,0,1\n", err: "pods.csv:2: got 10 columns, want 11"},
		{name: "empty name", in: h + " ,1,1,1,1000,,LS,Running,0,1,0\n", err: "pods.csv:2: name is empty"},
		{name: "negative cpu", in: h + "p,-1,1,1,1000,,LS,Running,0,1,0\n", err: "pods.csv:2: cpu_milli -1 is negative"},
		{name: "fractional memory", in: h + "p,1,1.5,1,1000,,LS,Running,0,1,0\n", err: `pods.csv:2: memory_mib "1.5" is not an integer`},
		{name: "huge memory", in: h + "p,1,9999999999999,1,1000,,LS,Running,0,1,0\n", err: "pods.csv:2: memory_mib 9999999999999 is too large"},
		{name: "gpu_milli above 1000", in: h + "p,1,1,1,1001,,LS,Running,0,1,0\n", err: "pods.csv:2: gpu_milli 1001 is too large (at most 1000)"},
		{name: "text gpus", in: h + "p,1,1,one,1000,,LS,Running,0,1,0\n", err: `pods.csv:2: num_gpu "one" is not an integer`},
		{name: "negative creation", in: h + "p,1,1,1,1000,,LS,Running,-5,1,0\n", err: "pods.csv:2: creation_time -5 is negative"},
		{name: "scheduled before creation", in: h + "p,1,1,1,1000,,LS,Running,5,10,4\n", err: "pods.csv:2: scheduled_time 4 is before creation_time 5"},
		{name: "deleted before scheduled", in: h + "p,1,1,1,1000,,LS,Running,5,6,7\n", err: "pods.csv:2: deletion_time 6 is before the task started (7)"},
		{name: "deleted before created", in: h + "p,1,1,1,1000,,LS,Pending,5,4,\n", err: "pods.csv:2: deletion_time 4 is before the task started (5)"},
		{name: "duplicate", in: h + "p,1,1,1,1000,,LS,Running,0,1,0\np,1,1,1,1000,,LS,Running,0,1,0\n", err: `pods.csv:3: duplicate id "p" (first on line 2)`},
		{name: "all skipped", in: h + "a,1,1,0,0,,LS,Running,0,1,0\nb,1,1,1,500,,LS,Running,0,1,0\n",
			err: "pods.csv: no jobs left: every task was left out (1 CPU-only (num_gpu 0), 1 GPU-sharing (gpu_milli < 1000))"},
		{name: "bad line among skipped", in: h + "a,1,1,0,0,,LS,Running,0,x,0\n", err: `pods.csv:2: deletion_time "x" is not an integer`},
	})
}

// TestReadAlibabaSkipped: tasks that share a GPU, CPU-only tasks and
// tasks that allow several GPU types are left out and counted.
func TestReadAlibabaSkipped(t *testing.T) {
	in := alibabaHeader + "\n" +
		"cpu,4000,1,0,0,,BE,Running,0,9,0\n" +
		"shared,4000,1,1,460,,LS,Running,0,9,0\n" +
		"shared2,4000,1,2,999,,LS,Running,0,9,0\n" +
		"any,4000,1,1,1000,P100|T4,LS,Running,0,9,0\n" +
		"kept,4000,1,1,1000,T4,LS,Running,3,9,4\n"
	tr, err := ReadTrace(strings.NewReader(in), "pods.csv", "auto")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{SkipCPUOnly: 1, SkipShared: 2, SkipAnyTypes: 1}
	if !reflect.DeepEqual(tr.Skipped, want) || tr.Format != "alibaba" || !tr.WallClock {
		t.Errorf("skipped %v, format %q, wall clock %v; want %v, alibaba, true", tr.Skipped, tr.Format, tr.WallClock, want)
	}
	if len(tr.Jobs) != 1 || tr.Jobs[0].ID != "kept" || tr.Jobs[0].GPUType != "t4" || tr.Jobs[0].Duration != 5*model.Second {
		t.Errorf("jobs %+v", tr.Jobs)
	}
	if tr, err := ReadTrace(strings.NewReader(gavelRow("A3C", "10", "2", "1", "0")), "x.trace", "auto"); err != nil || tr.Skipped != nil || tr.WallClock {
		t.Errorf("gavel: %+v, %v", tr, err)
	}
}

func TestReadAlibabaNodes(t *testing.T) {
	const h = alibabaNodesHeader + "\n"
	tests := []struct {
		name, in string
		want     []AlibabaNode
		err      string
	}{
		{"nodes", h + "n0,64000,262144,2,P100\nn1,32000,262144,0,\r\n\n n2 , 96000 , 393216 , 8 , G2 \n",
			[]AlibabaNode{{"n0", 64000, 262144, 2, "P100"}, {"n1", 32000, 262144, 0, ""}, {"n2", 96000, 393216, 8, "G2"}}, ""},
		{"no header", "n0,1,1,1,T4\n", nil, `n.csv:1: missing header: want "sn,cpu_milli,memory_mib,gpu,model"`},
		{"empty", "", nil, `n.csv: missing header "sn,cpu_milli,memory_mib,gpu,model": the trace is empty`},
		{"header only", h, nil, "n.csv: no nodes in the node list"},
		{"columns", h + "n0,1,1,1\n", nil, "n.csv:2: got 4 columns, want 5"},
		{"too many GPUs", h + "n0,1,1,65,T4\n", nil, "n.csv:2: gpu 65 is too large (at most 64)"},
		{"no model", h + "n0,1,1,2, \n", nil, "n.csv:2: model is empty for a node with 2 GPUs"},
		{"slash", h + "a/b,1,1,2,T4\n", nil, `n.csv:2: sn "a/b": a node name must not hold '/' or spaces`},
		{"negative memory", h + "n0,1,-1,2,T4\n", nil, "n.csv:2: memory_mib -1 is negative"},
		{"duplicate", h + "n0,1,1,2,T4\nn0,1,1,2,T4\n", nil, `n.csv:3: duplicate sn "n0" (first on line 2)`},
	}
	for _, tt := range tests {
		got, err := ReadAlibabaNodes(strings.NewReader(tt.in), "n.csv")
		if tt.err != "" {
			checkErr(t, err, tt.err)
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if n := (AlibabaNode{CPUMilli: 2000, MemMiB: 1}); !n.Capacity().Equal(model.Resources{"cpu": 2000, "memory": 1 << 20}) {
		t.Errorf("capacity %v", n.Capacity())
	}
	if !IsAlibabaNodes([]byte("\n"+h)) || IsAlibabaNodes([]byte(alibabaHeader)) {
		t.Error("IsAlibabaNodes")
	}
}

// sharedTrace returns a file of the shared traces folder (../shared from
// the checkout, or $TESTBED_SHARED as `make test` sets it), skipping the
// test when it is absent: the folder is not part of the project.
func sharedTrace(tb testing.TB, rel string) []byte {
	tb.Helper()
	dir := os.Getenv("TESTBED_SHARED")
	if dir == "" {
		dir = "../../../shared"
	}
	data, err := os.ReadFile(filepath.Join(dir, "traces", rel))
	if err != nil {
		tb.Skipf("shared trace %s not available (not part of the project): %v", rel, err)
	}
	return data
}

// TestAlibabaSharedTraces reads the whole Alibaba 2023 pod and node lists
// of the shared folder: 3,986 of the default trace's 8,152 tasks are
// whole-GPU tasks; the gpuspec33 trace holds 365 more to several types.
func TestAlibabaSharedTraces(t *testing.T) {
	for _, tt := range []struct {
		file    string
		jobs    int
		skipped map[string]int
	}{
		{"openb_pod_list_default.csv", 3986, map[string]int{SkipShared: 3078, SkipCPUOnly: 1088}},
		{"openb_pod_list_gpuspec33.csv", 3621, map[string]int{SkipShared: 3078, SkipCPUOnly: 1088, SkipAnyTypes: 365}},
	} {
		tr, err := ReadTrace(bytes.NewReader(sharedTrace(t, "alibaba-v2023/"+tt.file)), tt.file, "auto")
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Jobs) != tt.jobs || !reflect.DeepEqual(tr.Skipped, tt.skipped) {
			t.Errorf("%s: %d jobs, skipped %v; want %d, %v", tt.file, len(tr.Jobs), tr.Skipped, tt.jobs, tt.skipped)
		}
	}
	for file, want := range map[string][2]int{"openb_node_list_gpu_node.csv": {1213, 6212}, "openb_node_list_all_node.csv": {1523, 6212}} {
		nodes, err := ReadAlibabaNodes(bytes.NewReader(sharedTrace(t, "alibaba-v2023/"+file)), file)
		if err != nil {
			t.Fatal(err)
		}
		gpus := 0
		for _, n := range nodes {
			gpus += n.GPUs
		}
		if len(nodes) != want[0] || gpus != want[1] {
			t.Errorf("%s: %d nodes, %d GPUs; want %v", file, len(nodes), gpus, want)
		}
	}
}
