package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/sim/audit"
)

const profilesDir = "../testdata/profiles/"

// allocTypes reads an event log and returns, per job, the GPU types of every
// allocation it was given.
func allocTypes(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gpuType := map[string]string{}
	got := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Event string          `json:"event"`
			Job   string          `json:"job"`
			Alloc []string        `json:"alloc"`
			GPUs  json.RawMessage `json:"gpus"` // a count in submit events
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event == "cluster" {
			var gpus []struct{ ID, Type string }
			if err := json.Unmarshal(ev.GPUs, &gpus); err != nil {
				t.Fatal(err)
			}
			for _, g := range gpus {
				gpuType[g.ID] = g.Type
			}
		}
		for _, g := range ev.Alloc {
			got[ev.Job] = append(got[ev.Job], gpuType[g])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSimProfilesExample runs the documented example end to end: the
// profile's job type runs, and never on GPUs with less memory than its peak.
func TestSimProfilesExample(t *testing.T) {
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	for _, placer := range []string{"pack", "hetero"} {
		code, out, errs := run(t, "sim", "--json", "--events", events, "--placer", placer,
			"--profiles", profilesDir+"example.yaml", "--trace", profilesDir+"example.jsonl", "--gpus", "a100=4,v100=8")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", placer, code, errs)
		}
		var sum struct{ Jobs, Completed int }
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Jobs != 6 || sum.Completed != 6 {
			t.Errorf("%s: summary %+v (%v): want 6 jobs, all completed", placer, sum, err)
		}
		f, err := os.Open(events)
		if err != nil {
			t.Fatal(err)
		}
		res, err := audit.Check(f, events)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := audit.Compare(res, []byte(out)); err != nil {
			t.Error(err)
		}
		got := allocTypes(t, events)
		for _, job := range []string{"bert-1", "bert-2"} { // 22000 MiB from the profile
			if len(got[job]) == 0 {
				t.Errorf("%s: %s never started", placer, job)
			}
			for _, gt := range got[job] {
				if gt != "a100" {
					t.Errorf("%s: %s (22000 MiB per GPU) placed on %s", placer, job, gt)
				}
			}
		}
	}
}

func TestSimProfilesWithThroughputs(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	lines := `{"id":"a","submit_s":0,"gpus":1,"model":"ResNet-18 (batch size 32)","steps":100}` + "\n" +
		`{"id":"b","submit_s":0,"gpus":2,"model":"my-bert-large","steps":100}` + "\n"
	if err := os.WriteFile(trace, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "sim", "--json", "--throughputs", "../testdata/clusters/matrix-v100-only.json",
		"--profiles", profilesDir+"example.yaml", "--trace", trace, "--gpus", "a100=2,v100=2")
	if code != 0 || !strings.Contains(out, `"completed":2`) {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
}

func TestSimStepJobWithoutProfile(t *testing.T) {
	code, _, errs := run(t, "sim", "--trace", profilesDir+"example.jsonl", "--gpus", "a100=4,v100=8")
	want := `job bert-1: job type "my-bert-large" is not in the throughput matrix: a job given in steps needs ` +
		"its job type's steps/s; add a profile for it with --profiles (docs/PROFILES.md)"
	if code != 2 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, want)
	}
}

func TestSimProfilesErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, file, want string }{
		{"unknown field", "profiles:\n  - job_type: a\n    peak_mem_mib: 1\n  - job_type: b\n    peak_mem: 1\n",
			`profiles[1]: unknown field "peak_mem" (known: job_type, peak_mem_mib, throughput)`},
		{"bad GPU count", "profiles:\n  - job_type: a\n    throughput:\n      v100: {1: 2}\n  - job_type: b\n    throughput:\n      v100: {x: 2}\n",
			`profiles[1].throughput.v100: GPU count "x" is not a positive integer`},
		{"negative throughput", "profiles:\n  - job_type: a\n    throughput: {V100: {2: -1}}\n",
			`profiles[0].throughput.V100.2: negative throughput -1`},
		{"job type twice", "profiles:\n  - {job_type: a, peak_mem_mib: 1}\n  - {job_type: a, peak_mem_mib: 2}\n",
			`profiles[1].job_type: "a" already given in profiles[0]`},
		{"key twice", "profiles:\n  - job_type: a\n    job_type: b\n", `key "job_type" already set in map`},
		{"infinite", "profiles:\n  - job_type: a\n    throughput: {v100: {1: .inf}}\n", "numbers must be finite (no .nan or .inf)"},
		{"unknown GPU type", "profiles:\n  - job_type: a\n    throughput: {v100: {1: 1}, a10o: {1: 2}}\n",
			`profiles[0].throughput: unknown GPU type "a10o" (neither in the cluster nor in the catalog, docs/GPUS.md)`},
		{"not YAML", "profiles: [\n", "yaml: line"},
		{"empty file", "", `want an object with a "profiles" list, got null`},
	}
	for i, tc := range tests {
		path := filepath.Join(dir, "p"+string(rune('a'+i))+".yaml")
		if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := run(t, "sim", "--profiles", path)
		if code != 2 || !strings.Contains(errs, path+": ") || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, errs, tc.want)
		}
	}
	code, _, errs := run(t, "sim", "--profiles", filepath.Join(dir, "missing.yaml"))
	if code != 2 || !strings.Contains(errs, "--profiles: open ") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}

// TestProfilesDocExample runs the first YAML example of docs/PROFILES.md.
func TestProfilesDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/PROFILES.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/PROFILES.md has no yaml example")
	}
	path := filepath.Join(t.TempDir(), "profiles.yaml")
	if err := os.WriteFile(path, []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "sim", "--json", "--profiles", path); code != 0 {
		t.Errorf("exit %d: %s", code, errs)
	}
}
