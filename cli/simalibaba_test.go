package cli_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// alibabaPods is the committed Alibaba sample: the first 400 tasks of
// openb_pod_list_default.csv, beside every 50th node of the GPU node list.
const alibabaPods = testdata + "alibaba/openb_pod_list_default-head400.csv"

// alibabaSummary is the part of the summary the Alibaba tests read.
type alibabaSummary struct {
	Jobs            int                `json:"jobs"`
	Completed       int                `json:"completed"`
	AvgQueue        float64            `json:"avg_queue_s"`
	Skipped         *int               `json:"skipped"`
	SkippedReasons  map[string]int     `json:"skipped_reasons"`
	ResourceUtil    map[string]float64 `json:"resource_util"`
	Stranded        *float64           `json:"stranded_gpus"`
	StrandedShare   *float64           `json:"stranded_gpu_share"`
	StrandedWaiting *float64           `json:"stranded_gpus_waiting"`
}

func decodeAlibaba(t *testing.T, out string) alibabaSummary {
	t.Helper()
	var s alibabaSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return s
}

// TestSimAlibabaSample replays the committed sample with pack and fit on
// the node list beside it: 244 whole-GPU tasks run, 132 GPU-sharing and 24
// CPU-only tasks are left out and reported, the summary has each
// resource's utilisation and the stranded GPUs, and the event log passes
// the audit. With nodes always on (no wake-up), a task runs for exactly its
// traced time on whatever type it lands (openb-pod-0000: scheduled at 0,
// deleted at 12,537,496 s).
func TestSimAlibabaSample(t *testing.T) {
	for _, placer := range []string{"pack", "fit"} {
		t.Run(placer, func(t *testing.T) {
			out, log, _ := auditedSim(t, "--trace", alibabaPods, "--placer", placer, "--sleep=false")
			s := decodeAlibaba(t, out)
			wantSkipped := map[string]int{"GPU-sharing (gpu_milli < 1000)": 132, "CPU-only (num_gpu 0)": 24}
			if s.Jobs != 244 || s.Completed != 244 || s.Skipped == nil || *s.Skipped != 156 || !maps.Equal(s.SkippedReasons, wantSkipped) {
				t.Errorf("jobs %d, completed %d, skipped %v %v; want 244, 244, 156 %v", s.Jobs, s.Completed, s.Skipped, s.SkippedReasons, wantSkipped)
			}
			if len(s.ResourceUtil) != 2 || s.ResourceUtil["cpu"] <= 0 || s.ResourceUtil["memory"] <= 0 || s.Stranded == nil || s.StrandedShare == nil {
				t.Errorf("resource figures missing: %s", out)
			}
			if !strings.Contains(log, `{"t":12537496,"event":"finish","job":"openb-pod-0000"}`) {
				t.Errorf("openb-pod-0000 does not run for its traced 12,537,496 s")
			}
		})
	}
}

// TestSimAlibabaMessages: the table and stderr say what was left out and
// which node list is the cluster.
func TestSimAlibabaMessages(t *testing.T) {
	code, out, errs := run(t, "sim", "--trace", alibabaPods, "--format", "alibaba")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`\nskipped +156\n  132 × GPU-sharing \(gpu_milli < 1000\)\n  24 × CPU-only \(num_gpu 0\)\n`,
		`\ncpu util +\d+\.\d%\n`, `\nmemory util +\d+\.\d%\n`, `\nstranded GPUs +[\d.]+\n`, `\nstranded GPU share +\d+\.\d%\n`,
		`\nstructural stranded GPUs +0\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"gpusched: the cluster is the node list " + testdata + "alibaba/openb_node_list_gpu_node-every50.csv\n",
		"gpusched: " + alibabaPods + ": left out 156 tasks: 132 GPU-sharing (gpu_milli < 1000); 24 CPU-only (num_gpu 0)\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// tinyNodes is an Alibaba node list of two nodes: a P100 node with 16
// CPUs for its 2 GPUs and a G2 node with 96 for its 8.
const tinyNodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,122880,2,P100\nn1,96000,393216,8,G2\n"

// TestSimAlibabaTinyCluster replays the sample on tinyNodes (--cluster):
// 10 GPUs for 244 tasks, so tasks wait and GPUs strand; pack and fit both
// pass the audit.
func TestSimAlibabaTinyCluster(t *testing.T) {
	nodes := filepath.Join(t.TempDir(), "nodes.csv")
	if err := os.WriteFile(nodes, []byte(tinyNodes), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, placer := range []string{"pack", "fit"} {
		out, _, _ := auditedSim(t, "--trace", alibabaPods, "--cluster", nodes, "--placer", placer, "--policy", "fifo", "--backfill")
		s := decodeAlibaba(t, out)
		if s.Completed != 244 || s.AvgQueue <= 0 || s.Stranded == nil || *s.Stranded <= 0 {
			t.Errorf("%s: completed %d, avg queue %v, stranded %v: want 244, waiting, stranding", placer, s.Completed, s.AvgQueue, s.Stranded)
		}
	}
}

func TestSimAlibabaErrors(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.csv")
	data, err := os.ReadFile(alibabaPods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pods, data, 0o644); err != nil {
		t.Fatal(err)
	}
	nodes := filepath.Join(dir, "openb_node_list_gpu_node.csv")
	for _, tt := range []struct {
		name  string
		setup func()
		args  []string
		want  string
	}{
		{"no node list beside", func() {}, []string{"--trace", pods},
			"is an Alibaba pod list, and no node list (openb_node_list_gpu_node*.csv) lies beside it"},
		{"two node lists", func() {
			os.WriteFile(nodes, []byte(tinyNodes), 0o644)
			os.WriteFile(filepath.Join(dir, "openb_node_list_gpu_node-b.csv"), []byte(tinyNodes), 0o644)
		}, []string{"--trace", pods}, "several node lists lie beside it"},
		{"node list as the trace", func() {}, []string{"--trace", nodes, "--gpus", "v100=8"},
			"this is an Alibaba node list, not a pod list: give it with --cluster"},
		{"bad node list", func() { os.WriteFile(nodes, []byte(tinyNodes+"n2,1,1,2,\n"), 0o644) }, []string{"--trace", pods, "--cluster", nodes},
			"openb_node_list_gpu_node.csv:4: model is empty for a node with 2 GPUs"},
		{"only CPU nodes", func() { os.WriteFile(nodes, []byte("sn,cpu_milli,memory_mib,gpu,model\nc0,1,1,0,\n"), 0o644) },
			[]string{"--trace", pods, "--cluster", nodes}, "no node has a GPU (1 CPU-only nodes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			code, _, errs := run(t, append([]string{"sim"}, tt.args...)...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tt.want)
			}
		})
	}
}
