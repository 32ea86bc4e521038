package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/power"
)

// describePower lists a power description as "type:idle:max ... |
// node:base:knee:slowdown[:sleepW/sleepAfterS/wakeS] ...".
func describePower(p *power.Cluster, names []string) string {
	var b strings.Builder
	for _, g := range p.Types {
		fmt.Fprintf(&b, "%g:%g ", g.IdleW, g.MaxW)
	}
	b.WriteString("|")
	for i, n := range p.Nodes {
		fmt.Fprintf(&b, " %s:%g:%g:%g", names[i], n.BaseW, n.Contention.Knee, n.Contention.Slowdown)
		if n.Sleeps {
			fmt.Fprintf(&b, ":sleep%g/%g/%g", n.SleepW, n.SleepAfterS, n.WakeS)
		}
	}
	return b.String()
}

// decodeCluster decodes a cluster file named cluster.yaml and builds its
// cluster.
func decodeCluster(data string) (*File, *model.Cluster, error) {
	f, err := DecodeFile("cluster.yaml", []byte(data))
	if err != nil {
		return nil, nil, err
	}
	c, err := f.Cluster("cluster.yaml")
	return f, c, err
}

// parsePower parses a cluster file and returns its power description.
func parsePower(data string) (*power.Cluster, []string, error) {
	f, c, err := decodeCluster(data)
	if err != nil {
		return nil, nil, err
	}
	p, err := f.Power("cluster.yaml", c)
	if err != nil {
		return nil, nil, err
	}
	if err := p.Validate(c); err != nil {
		return nil, nil, err
	}
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	return p, names, nil
}

func TestFilePower(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"defaults", "nodes: [{name: a, gpu_type: v100, gpus: 8}, {name: b, gpu_type: k80, gpus: 4}]",
			"45:300 25:150 | a:200:0.75:0.3:sleep20/600/300 b:200:0.75:0.3:sleep20/600/300"},
		{"type power overrides one field", `
gpu_types:
  - name: V100
    power: {max_w: 250}
nodes: [{name: a, gpu_type: v100, gpus: 8}]
`, "45:250 | a:200:0.75:0.3:sleep20/600/300"},
		{"new type with power, node group with power", `
gpu_types:
  - {name: p40, mem_mib: 24576, tflops: 12, power: {idle_w: 10, max_w: 250}}
nodes:
  - name: r
    gpu_type: p40
    gpus: 4
    count: 2
    power: {base_w: 150, contention_knee: 1, contention_slowdown: 0}
  - {name: s, gpu_type: t4, gpus: 1, power: {contention_slowdown: 0.5}}
`, "10:250 10.5:70 | r-0:150:1:0:sleep20/600/300 r-1:150:1:0:sleep20/600/300 s:200:0.75:0.5:sleep20/600/300"},
		{"zero figures allowed", `
gpu_types: [{name: t4, power: {idle_w: 0}}]
nodes: [{name: a, gpu_type: t4, gpus: 1, power: {base_w: 0, contention_knee: 0}}]
`, "0:70 | a:0:0:0.3:sleep20/600/300"},
		{"power-managed nodes", `
nodes:
  - {name: a, gpu_type: v100, gpus: 8, count: 2, power: {sleep_w: 15}}
  - {name: b, gpu_type: v100, gpus: 8, power: {sleep_w: 0, base_w: 300}}
  - {name: c, gpu_type: v100, gpus: 8}
  - {name: d, gpu_type: v100, gpus: 8, power: {sleep_after_s: 0, wake_s: 45.5, sleeps: true}}
`, "45:300 | a-0:200:0.75:0.3:sleep15/600/300 a-1:200:0.75:0.3:sleep15/600/300 b:300:0.75:0.3:sleep0/600/300 " +
			"c:200:0.75:0.3:sleep20/600/300 d:200:0.75:0.3:sleep20/0/45.5"},
		{"nodes that stay on", `
nodes:
  - {name: a, gpu_type: v100, gpus: 8, power: {sleeps: false}}
  - {name: b, gpu_type: v100, gpus: 8, power: {sleeps: false, base_w: 100}}
`, "45:300 | a:200:0.75:0.3 b:100:0.75:0.3"},
		{"power of an unused type", `
gpu_types: [{name: p40, mem_mib: 1, tflops: 1}]
nodes: [{name: a, gpu_type: a100, gpus: 8}]
`, "60:400 | a:200:0.75:0.3:sleep20/600/300"},
	}
	for _, tt := range tests {
		p, names, err := parsePower(tt.yaml)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := describePower(p, names); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestFilePowerErrors(t *testing.T) {
	const v100 = "nodes: [{name: a, gpu_type: v100, gpus: 8}]\n"
	tests := []struct {
		yaml, want string
	}{
		{"gpu_types: [{name: v100, power: {idle: 1}}]\n" + v100,
			`cluster.yaml: gpu_types[0].power: unknown field "idle" (known: idle_w, max_w)`},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {knee: 1}}]",
			`cluster.yaml: nodes[0].power: unknown field "knee" (known: base_w, contention_knee, contention_slowdown, sleep_after_s, sleep_w, sleeps, wake_s)`},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleep_after_s: -5}}]", "cluster.yaml: nodes[0].power.sleep_after_s: must be a number ≥ 0, got -5"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {wake_s: -1}}]", "cluster.yaml: nodes[0].power.wake_s: must be a number ≥ 0, got -1"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {wake_s: .nan}}]", "cluster.yaml: numbers must be finite"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleeps: false, wake_s: 60}}]",
			"cluster.yaml: nodes[0].power.wake_s: is given but sleeps is false: the node never sleeps"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleeps: maybe}}]", `cluster.yaml: nodes[0].power.sleeps: want true or false, got "maybe"`},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleep_w: -1}}]", "cluster.yaml: nodes[0].power.sleep_w: must be a number ≥ 0, got -1"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleep_w: never}}]", `cluster.yaml: nodes[0].power.sleep_w: want a number, got "never"`},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: 200}]", "cluster.yaml: nodes[0].power: want a mapping of fields, got 200"},
		{"gpu_types: [{name: v100, power: {max_w: many}}]\n" + v100, `cluster.yaml: gpu_types[0].power.max_w: want a number, got "many"`},
		{"gpu_types: [{name: v100, power: {idle_w: -1}}]\n" + v100, "cluster.yaml: gpu_types[0].power.idle_w: must be a number ≥ 0, got -1"},
		{"gpu_types: [{name: v100, power: {max_w: 0}}]\n" + v100, "cluster.yaml: gpu_types[0].power.max_w: must be a positive number, got 0"},
		{"gpu_types: [{name: v100, power: {max_w: 40}}]\n" + v100, "cluster.yaml: gpu_types[0].power: max_w 40 is below idle_w 45"},
		{"gpu_types: [{name: v100, power: {idle_w: 80, max_w: 70}}]\n" + v100, "cluster.yaml: gpu_types[0].power: max_w 70 is below idle_w 80"},
		{"gpu_types: [{name: p40, mem_mib: 1, tflops: 1, power: {max_w: 250}}]\n" + v100,
			`cluster.yaml: gpu_types[0].power: type "p40" has no default power figures, so idle_w and max_w are required`},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {base_w: -10}}]", "cluster.yaml: nodes[0].power.base_w: must be a number ≥ 0, got -10"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {base_w: .inf}}]", "cluster.yaml: numbers must be finite"},
		{"nodes:\n  - {name: a, gpu_type: v100, gpus: 8}\n  - {name: b, gpu_type: v100, gpus: 8, power: {contention_knee: 1.5}}\n",
			"cluster.yaml: nodes[1].power.contention_knee: must be a load in [0, 1], got 1.5"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {contention_knee: -0.1}}]", "cluster.yaml: nodes[0].power.contention_knee: must be a load in [0, 1], got -0.1"},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {contention_slowdown: 1}}]", "cluster.yaml: nodes[0].power.contention_slowdown: must be a fraction in [0, 1), got 1"},
		// Accepted by Cluster, refused by Power: no figures to compute energy.
		{"gpu_types: [{name: p40, mem_mib: 1, tflops: 1}]\nnodes: [{name: a, gpu_type: p40, gpus: 8}]",
			`cluster.yaml: gpu_types[0].power: type "p40" has no default power figures, so idle_w and max_w are required`},
	}
	for _, tt := range tests {
		_, _, err := parsePower(tt.yaml)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error\n got %v\nwant %q", tt.yaml, err, tt.want)
		}
	}
}

// TestFilePartialPower: for a cluster whose types lack power figures,
// PartialPower names them and still describes every node.
func TestFilePartialPower(t *testing.T) {
	const yaml = `
gpu_types:
  - {name: p40, mem_mib: 24576, tflops: 12}
  - {name: x1, mem_mib: 1024, tflops: 1}
nodes:
  - {name: a, gpu_type: p40, gpus: 4, power: {contention_knee: 1}}
  - {name: b, gpu_type: v100, gpus: 8, power: {sleep_w: 10}}
  - {name: c, gpu_type: x1, gpus: 2}
`
	f, err := DecodeFile("cluster.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Cluster("cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, missing, err := f.PartialPower("cluster.yaml", c)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(missing, ","); got != "p40,x1" {
		t.Errorf("missing %q, want p40,x1", got)
	}
	want := "0:0 45:300 0:0 | a:200:1:0.3:sleep20/600/300 b:200:0.75:0.3:sleep10/600/300 c:200:0.75:0.3:sleep20/600/300"
	if got := describePower(p, []string{"a", "b", "c"}); got != want {
		t.Errorf("partial power:\n got %s\nwant %s", got, want)
	}
	if _, err := f.Power("cluster.yaml", c); err == nil ||
		err.Error() != `cluster.yaml: gpu_types[0].power: type "p40" has no default power figures, so idle_w and max_w are required` {
		t.Errorf("Power: %v", err)
	}
}

// TestFilePowerOtherCluster: Power refuses a cluster that f did not build.
func TestFilePowerOtherCluster(t *testing.T) {
	f, err := DecodeFile("a.yaml", []byte("nodes: [{name: a, gpu_type: v100, gpus: 8, count: 2}]"))
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"v100=8", "v100=24"} {
		c, err := ParseGPUs(other, 8)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Power("a.yaml", c); err == nil || !strings.Contains(err.Error(), "not built from this file") {
			t.Errorf("Power of the cluster of --gpus %s: %v", other, err)
		}
	}
}

// TestCatalogHasPower: every catalog type has default power figures, so a
// --gpus cluster always has a power description.
func TestCatalogHasPower(t *testing.T) {
	for _, g := range Catalog() {
		if _, ok := power.Lookup(g.Name); !ok {
			t.Errorf("catalog type %s has no default power figures in package power", g.Name)
		}
	}
	if n, m := len(power.Defaults()), len(Catalog()); n != m {
		t.Errorf("package power has defaults for %d types, the catalog %d", n, m)
	}
}

// FuzzFilePower: whenever a file builds a cluster, Power either fails with
// an error naming the file or returns a valid description of the cluster.
func FuzzFilePower(f *testing.F) {
	f.Add([]byte("nodes: [{name: a, gpu_type: v100, gpus: 8, count: 2, power: {base_w: 1, contention_knee: 0.5}}]"))
	f.Add([]byte("gpu_types: [{name: p40, mem_mib: 1, tflops: 1, power: {idle_w: 1, max_w: 2}}]\nnodes: [{name: a, gpu_type: P40, gpus: 2}]"))
	f.Add([]byte("gpu_types: [{name: t4, power: {max_w: 5}}]\nnodes: [{name: a, gpu_type: t4, gpus: 1}]"))
	f.Add([]byte("nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleeps: true, sleep_w: 5, sleep_after_s: 0, wake_s: 90}}]"))
	f.Add([]byte("nodes: [{name: a, gpu_type: v100, gpus: 8, power: {sleeps: false}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := DecodeFile("fuzz.yaml", data)
		if err != nil {
			return
		}
		c, err := file.Cluster("fuzz.yaml")
		if err != nil {
			return
		}
		p, err := file.Power("fuzz.yaml", c)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := p.Validate(c); err != nil {
			t.Fatalf("Power returned an invalid description: %v", err)
		}
	})
}

// TestClusterDocPowerExample parses the YAML example of the Power section of
// docs/CLUSTER.md.
func TestClusterDocPowerExample(t *testing.T) {
	example := clusterDocExample(t, "\n## Power\n")
	p, names, err := parsePower(example)
	if err != nil {
		t.Fatal(err)
	}
	want := "60:300 10:250 | rack1-0:350:0.875:0.2:sleep30/600/240 rack1-1:350:0.875:0.2:sleep30/600/240 " +
		"rack1-2:350:0.875:0.2:sleep30/600/240 rack1-3:350:0.875:0.2:sleep30/600/240 inference:200:0.75:0.3"
	if got := describePower(p, names); got != want {
		t.Errorf("doc example:\n got %s\nwant %s", got, want)
	}
}

// TestDeclaresContention: a file declares contention when a nodes entry's
// power block gives the knee or the slowdown.
func TestDeclaresContention(t *testing.T) {
	tests := []struct {
		yaml string
		want bool
	}{
		{"nodes: [{name: a, gpu_type: v100, gpus: 8}]", false},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {base_w: 100, sleep_w: 5}}]", false},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8}, {name: b, gpu_type: v100, gpus: 8, power: {contention_knee: 0.5}}]", true},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, power: {contention_slowdown: 0}}]", true},
	}
	for _, tt := range tests {
		f, err := DecodeFile("cluster.yaml", []byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.DeclaresContention(); got != tt.want {
			t.Errorf("%s: DeclaresContention = %v, want %v", tt.yaml, got, tt.want)
		}
	}
}
