package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// The PyTorch tests run examples/pytorch (train.py, a linear model trained
// with DistributedDataParallel over gloo on CPU, and its job specs) under
// torchrun, Debian's python3-torch 1.13 (`make torch` installs it), on a
// real server and agents of one GPU each. Every node's agent has --addr
// 127.0.0.1: the node names do not resolve, and torchrun's rendezvous
// reaches node rank 0 by MASTER_ADDR. train.py's global batch depends on
// the step alone and is split evenly between the ranks, so its weights
// after N steps are the same at any world size: compared with a
// one-process run of the same steps, they show that no step was lost or
// done twice across the job's resizes and restarts.

var torchCycles = flag.Int("torch.cycles", 1,
	"TestTorchElastic: how many times a rigid job arrives and leaves (one shrink and one growth each)")

// torchDefaults is -torch.defaults: run the elastic jobs with torchrun's own
// defaults for the rendezvous's last call (30 s) and the monitor interval
// (5 s) instead of gpusched's, to measure what gpusched's save; the
// resize bound is then not checked.
var torchDefaults = flag.Bool("torch.defaults", false,
	"TestTorchElastic, TestTorchNodeLoss: torchrun's own last_call_timeout and monitor_interval, for comparison")

// torchAgent is the agents' flags: one GPU, reached at 127.0.0.1.
var torchAgent = []string{"--gpus", "v100=1", "--addr", "127.0.0.1"}

// torchPython returns the python3 that imports torch (Debian's, which
// torchrun runs), or skips the test.
func torchPython(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("torchrun"); err != nil {
		t.Skip("PyTorch is not installed (no torchrun): `make torch` installs Debian's python3-torch as root")
	}
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import torch.distributed").Run() == nil {
			return py
		}
	}
	t.Skip("PyTorch is not installed (no python3 imports torch): `make torch` installs Debian's python3-torch as root")
	return ""
}

// torchEvent is one line of train.py's --events.
type torchEvent struct {
	Event           string  `json:"event"`
	Rank            int     `json:"rank"`
	World           int     `json:"world"`
	Step            int     `json:"step"`
	PID             int     `json:"pid"`
	CheckpointSteps int     `json:"checkpoint_steps"`
	Signalled       bool    `json:"signalled"`
	T               float64 `json:"t"`
}

// time returns the event's time.
func (e torchEvent) time() time.Time { return time.Unix(0, int64(e.T*1e9)) }

// torchLog reads train.py's log (complete lines only).
func torchLog(t testing.TB, path string) []torchEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []torchEvent
	lines := strings.Split(string(b), "\n")
	for _, line := range lines[:len(lines)-1] {
		var e torchEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, e)
	}
	return out
}

// torchResult is train.py's --result: the world size of every step done
// and the final weights.
type torchResult struct {
	Steps   int       `json:"steps"`
	History []int     `json:"history"`
	Weights []float64 `json:"weights"`
}

// readTorchResult reads a --result file.
func readTorchResult(t testing.TB, path string) torchResult {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("train.py's result: %v", err)
	}
	var r torchResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// torchReference runs train.py alone (no torchrun, no torch.distributed)
// for steps and returns its result.
func torchReference(t *testing.T, python string, steps int) torchResult {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command(python, torchScript(t), "--steps", strconv.Itoa(steps), "--ckpt", filepath.Join(dir, "ckpt.pt"),
		"--result", filepath.Join(dir, "result.json")).CombinedOutput()
	if err != nil {
		t.Fatalf("train.py alone: %v\n%s", err, out)
	}
	return readTorchResult(t, filepath.Join(dir, "result.json"))
}

// torchScript is examples/pytorch/train.py's absolute path.
func torchScript(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("../examples/pytorch/train.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// torchSpec reads the job spec examples/pytorch/NAME.yaml, runs it in dir
// (its workdir: the checkpoint goes there) with train.py's path made
// absolute, args added to the command and env to its env, and writes it
// to dir/NAME.json for `gpusched submit`.
func torchSpec(t testing.TB, name, dir string, env map[string]string, args ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../examples/pytorch", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := api.DecodeSpecYAML(b)
	if err != nil {
		t.Fatalf("examples/pytorch/%s.yaml: %v", name, err)
	}
	i := slices.Index(spec.Command, "train.py")
	if i < 0 {
		t.Fatalf("examples/pytorch/%s.yaml: no train.py in %v", name, spec.Command)
	}
	spec.Command[i] = torchScript(t)
	spec.Command = append(spec.Command, args...)
	spec.Workdir = dir
	maps.Copy(spec.Env, env)
	out, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkTorchResult checks that the job did every one of the reference's
// steps once, at the world sizes of sizes, and ended with its weights.
func checkTorchResult(t testing.TB, got, want torchResult, sizes ...int) {
	t.Helper()
	if got.Steps != want.Steps || len(got.History) != want.Steps {
		t.Errorf("%d steps (history of %d), want %d", got.Steps, len(got.History), want.Steps)
	}
	for _, w := range got.History {
		if !slices.Contains(sizes, w) {
			t.Errorf("a step at world size %d, want only %v: %v", w, sizes, got.History)
			break
		}
	}
	for _, s := range sizes {
		if !slices.Contains(got.History, s) {
			t.Errorf("no step at world size %d: %v", s, got.History)
		}
	}
	if len(got.Weights) != len(want.Weights) {
		t.Fatalf("weights %v, want %v", got.Weights, want.Weights)
	}
	for i := range got.Weights {
		if d := math.Abs(got.Weights[i] - want.Weights[i]); d > 1e-4*math.Max(1, math.Abs(want.Weights[i])) {
			t.Errorf("weight %d = %v, want %v (the reference): a step lost or done twice", i, got.Weights[i], want.Weights[i])
		}
	}
}

// torchResize waits for job id's membership generation gen on size GPUs,
// then for training at world size size after that change; it returns the
// time of the change's "resized" event (the server's decision) and of the
// first step done at the new size after it.
func torchResize(t testing.TB, url, id, logf string, gen, size int) (decided, first time.Time) {
	t.Helper()
	var j api.Job
	eventually(t, 60*time.Second, fmt.Sprintf("generation %d of %s", gen, id), func() bool {
		j = job(t, url, id)
		return j.Generation >= gen || j.State != api.Running
	})
	if j.State != api.Running || j.Generation != gen || len(j.Alloc) != size || j.Attempt != 1 {
		t.Fatalf("want generation %d on %d GPUs, attempt 1: %s, generation %d on %v, attempt %d",
			gen, size, j.State, j.Generation, j.Alloc, j.Attempt)
	}
	for _, e := range j.Events {
		if e.Event == "resized" {
			decided = e.Time
		}
	}
	eventually(t, 90*time.Second, fmt.Sprintf("3 steps at world size %d after generation %d", size, gen), func() bool {
		n := 0
		for _, e := range torchLog(t, logf) {
			if e.Event == "step" && e.World == size && e.time().After(decided) {
				if n == 0 {
					first = e.time()
				}
				n++
			}
		}
		return n >= 3
	})
	return decided, first
}

// replicaPID returns the process group of job id's running replica on
// node name, from its agent's record.
func (c *testCluster) replicaPID(t testing.TB, name, id string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.agentData(name), "replicas", id+".*", "replica.json"))
	for _, f := range files {
		var rec struct {
			Status api.ReplicaStatus `json:"status"`
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if rec.Status.Phase == api.ReplicaRunning && rec.Status.PID > 0 {
			return rec.Status.PID
		}
	}
	t.Fatalf("no running replica of %s on %s", id, name)
	return 0
}

// torchrunOptions are torchrun's long options in PyTorch 2.11 (its usage,
// as printed on a real H200 machine) and 1.13 (Debian's), with both
// spellings of each.
var torchrunOptions = []string{"--nnodes", "--nproc-per-node", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id",
	"--rdzv-conf", "--standalone", "--max-restarts", "--monitor-interval", "--start-method", "--event-log-handler",
	"--role", "--module", "--no-python", "--run-path", "--log-dir", "--redirects", "--tee", "--local-ranks-filter",
	"--duplicate-stdout-filters", "--duplicate-stderr-filters", "--node-rank", "--master-addr", "--master-port",
	"--local-addr", "--logs-specs", "--numa-binding", "--signals-to-handle", "--virtual-local-rank"}

// TestTrainFlagsPassTorchrun: no flag of train.py is a torchrun option or a
// prefix of one. torchrun's argparse reads abbreviations even after the
// script's name, so a prefix of two options stops torchrun ("ambiguous
// option: --log could match --log-dir, --log_dir, --logs-specs,
// --logs_specs": train.py's --log, seen under PyTorch 2.11 on an H200,
// now --events). No PyTorch needed.
func TestTrainFlagsPassTorchrun(t *testing.T) {
	src, err := os.ReadFile("../examples/pytorch/train.py")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(string(src), "\n") {
		if _, rest, ok := strings.Cut(line, `add_argument("--`); ok {
			name, _, _ := strings.Cut(rest, `"`)
			flags = append(flags, "--"+name)
		}
	}
	if len(flags) < 8 {
		t.Fatalf("found %d flags in train.py: %q", len(flags), flags)
	}
	for _, f := range flags {
		for _, o := range torchrunOptions {
			for _, spelling := range []string{o, strings.ReplaceAll(o, "-", "_")} {
				spelling = "--" + strings.TrimPrefix(spelling, "__")
				if strings.HasPrefix(spelling, f) {
					t.Errorf("train.py's %s is torchrun's %s or a prefix of it", f, spelling)
				}
			}
		}
	}
}
