package config

import (
	"os"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/core/recipe"
)

const exampleQueues = `
queues:
  - name: vision
    quota: {v100: 16, k80: 32}
    weight: 2
    limit: {v100: 24}
    resource_limit: {cpu: 96, memory: 1Ti, rdma/hca: 4}
    users: [alice, bob]
  - name: nlp
    quota: {v100: 16}
    users: [carol, alice]
fair_share: gpu-hours
default_queue: shared
`

func TestParseQueuesFile(t *testing.T) {
	f, err := ParseQueuesFile("q.yaml", []byte(exampleQueues))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.Quota("q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Queues) != 2 || cfg.Queues[0].Weight != 2 || cfg.Queues[1].Weight != 1 || cfg.Queues[0].Quota["k80"] != 32 ||
		cfg.Queues[0].Limit["v100"] != 24 || cfg.Queues[0].ResourceLimit["cpu"] != 96000 || cfg.Queues[0].ResourceLimit["memory"] != 1<<40 ||
		cfg.Queues[0].ResourceLimit["rdma/hca"] != 4 || cfg.Queues[1].ResourceLimit != nil || cfg.Usage != quota.UsageGPUHours || cfg.Default != "shared" {
		t.Errorf("config %+v", cfg)
	}
	uq := f.UserQueues()
	if got := strings.Join(uq["alice"], ","); got != "vision,nlp" || strings.Join(uq["carol"], ",") != "nlp" {
		t.Errorf("user queues %v", uq)
	}
}

func TestParseQueuesFileErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"queues:\n  - name: a\n    weight: 0\n", "q.yaml: queues[0].weight: must be a positive number, got 0"},
		{"queues:\n  - name: a\n    weight: -1\n", "queues[0].weight"},
		{"queues:\n  - name: a\n  - name: a\n", `q.yaml: queues[1].name: "a" is also queues[0]`},
		{"queues:\n  - name: ''\n", "queues[0].name: empty"},
		{"queues:\n  - name: 'a b'\n", "queues[0].name"},
		{"queues:\n  - name: a\n    quota: {v100: -2}\n", "queues[0].quota.v100: -2 GPUs"},
		{"queues:\n  - name: a\n    quota: {V100: 2}\n", "lower-case"},
		{"queues:\n  - name: a\n    quota: {v100: 4}\n    limit: {v100: 2}\n", "queues[0].limit.v100: 2 is below the quota of 4"},
		{"queues:\n  - name: a\n    users: ['x y']\n", "queues[0].users[0]"},
		{"queues:\n  - name: a\n    resource_limit: {memory: 12Gb}\n", "q.yaml: queues[0].resource_limit.memory: "},
		{"queues:\n  - name: a\n    resource_limit: {cpu: -1}\n", "queues[0].resource_limit.cpu"},
		{"queues:\n  - name: a\n    resource_limit: {nvidia.com/gpu: 1}\n", "queues[0].resource_limit.nvidia.com/gpu: resource"},
		{"queues:\n  - name: a\n    qouta: {v100: 1}\n", `queues[0]: unknown field "qouta"`},
		{"queues:\n  - name: a\n    quota: {v100: 1.5}\n", "want an integer"},
		{"fair_share: fairest\n", "fair_share"},
		{"default_queue: 'no way'\n", "default_queue"},
		{"queues: {name: a}\n", "want a list"},
	} {
		_, err := ParseQueuesFile("q.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.data, err, tc.want)
		}
	}
}

// TestSchedFileQueues: queues in --config reach the recipe's options, and
// the engine then runs the queue layer; --queues given on the command line
// wins.
func TestSchedFileQueues(t *testing.T) {
	f, err := ParseSchedFile("c.yaml", []byte("policy: tiresias\n"+exampleQueues))
	if err != nil {
		t.Fatal(err)
	}
	n, o := recipe.Defaults(), recipe.DefaultOptions()
	f.Apply(&n, &o, func(string) bool { return false })
	if o.Queues == nil || len(o.Queues.Queues) != 2 {
		t.Fatalf("queues not applied: %+v", o.Queues)
	}
	e, err := recipe.New(n, o)
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := e.Names(); p != "tiresias" {
		t.Errorf("policy %s", p)
	}
	o2 := recipe.DefaultOptions()
	f.Apply(&n, &o2, func(flag string) bool { return flag == "queues" })
	if o2.Queues != nil {
		t.Error("--queues given: the file's queues must not apply")
	}
	if _, err := ParseSchedFile("c.yaml", []byte("queues:\n  - name: a\n    weight: 0\n")); err == nil {
		t.Error("a bad queue in --config was accepted")
	}
}

// FuzzParseQueuesFile: the queues file parser never panics, and what it
// accepts builds a valid queue layer configuration.
func FuzzParseQueuesFile(f *testing.F) {
	f.Add([]byte(exampleQueues))
	f.Add([]byte("queues:\n  - name: a\n    weight: 0\n"))
	f.Add([]byte("queues: [{name: a, quota: {v100: 1}, limit: {v100: 0}}]"))
	f.Add([]byte("fair_share: gpu-hours"))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ParseQueuesFile("fuzz.yaml", data)
		if err != nil {
			return
		}
		cfg, err := q.Quota("fuzz.yaml")
		if err != nil {
			t.Fatalf("accepted but Quota fails: %v", err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted an invalid configuration: %v", err)
		}
	})
}

// TestQueuesDocExamples parses the queue examples of docs/QUEUES.md and
// docs/CONFIG.md.
func TestQueuesDocExamples(t *testing.T) {
	for _, c := range []struct{ file, after string }{{"../docs/QUEUES.md", "## Configuration"}, {"../docs/CONFIG.md", "The teams' queues"}} {
		doc, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(doc), c.after)
		_, rest, ok2 := strings.Cut(section, "```yaml\n")
		example, _, ok3 := strings.Cut(rest, "```")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("%s: no yaml example after %q", c.file, c.after)
		}
		f, err := ParseSchedFile(c.file, []byte(example))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		cfg, err := f.Quota(c.file)
		if err != nil || len(cfg.Queues) != 2 || cfg.Queues[0].Quota["k80"] != 32 || cfg.HalfLife != 168*3600*1000 {
			t.Errorf("%s: %+v %v", c.file, cfg, err)
		}
	}
}
