package config

import (
	"os"
	"strings"
	"testing"
)

func TestParseClusterFile(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"one node", `
nodes:
  - name: box
    gpu_type: t4
    gpus: 2
`, "t4:16384:8.1 | box:t4:2"},
		{"groups and first-use type order", `
nodes:
  - {name: a, gpu_type: k80, gpus: 4, count: 2}
  - {name: b, gpu_type: v100, gpus: 8}
  - {name: c, gpu_type: K80, gpus: 1, count: 1}
`, "k80:12288:4.37 v100:16384:15.7 | a-0:k80:4 a-1:k80:4 b:v100:8 c:k80:1"},
		{"override one field, unused type left out", `
gpu_types:
  - name: V100
    mem_mib: 32768
  - name: a100
    tflops: 20
nodes:
  - name: r1
    gpu_type: v100
    gpus: 8
    count: 2
`, "v100:32768:15.7 | r1-0:v100:8 r1-1:v100:8"},
		{"new type", `
gpu_types:
  - name: p40
    mem_mib: 24576
    tflops: 12
nodes:
  - name: inf
    gpu_type: p40
    gpus: 64
`, "p40:24576:12 | inf:p40:64"},
		{"JSON", `{"nodes":[{"name":"n.1_x","gpu_type":"h100","gpus":8,"count":null}]}`,
			"h100:81920:67 | n.1_x:h100:8"},
		{"numeric name", "nodes: [{name: 7, gpu_type: a10, gpus: 1}]", "a10:24576:31.2 | 7:a10:1"},
	}
	for _, tt := range tests {
		c, err := ParseClusterFile("cluster.yaml", []byte(tt.yaml))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := describe(c); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// node is a valid nodes entry for building bad files.
const node = "nodes:\n  - {name: a, gpu_type: v100, gpus: 8}\n"

func TestParseClusterFileErrors(t *testing.T) {
	tests := []struct {
		yaml string
		want string
	}{
		{"", "cluster.yaml: nodes: at least one node is required"},
		{"nodes: []", "cluster.yaml: nodes: at least one node is required"},
		{"nodes: [\n", "cluster.yaml: yaml: line 1: did not find expected node content"},
		{"- a\n", "cluster.yaml: top level: want a mapping of fields, got a list"},
		{"nodes: {name: a}", "cluster.yaml: nodes: want a list, got a mapping"},
		{node + "extra: 1\n", `cluster.yaml: top level: unknown field "extra" (known: gpu_types, network, nodes, storage)`},
		{"nodes:\n  - {name: a, gpu_type: v100, gpus: 8, gpu: 1}\n",
			`cluster.yaml: nodes[0]: unknown field "gpu" (known: count, cpu, cpus, gpu_type, gpus, links, memory, name, pods, power, rack, resources)`},
		{"nodes:\n  - {name: a, gpu_type: v100, GPUS: 8}\n", `cluster.yaml: nodes[0]: unknown field "GPUS"`},
		{"gpu_types: [{name: v100, memory: 1}]\n" + node,
			`cluster.yaml: gpu_types[0]: unknown field "memory" (known: mem_mib, name, power, tflops)`},
		{"nodes:\n  - name: a\n    gpus: 8\n    gpus: 4\n", `cluster.yaml: yaml: unmarshal errors:` + "\n" + `  line 4: key "gpus" already set in map`},
		{"nodes:\n  - {name: a, gpu_type: v100, gpus: 8.5}\n", "cluster.yaml: nodes[0].gpus: want an integer, got 8.5"},
		{"nodes:\n  - {name: a, gpu_type: v100, gpus: eight}\n", `cluster.yaml: nodes[0].gpus: want an integer, got "eight"`},
		{"nodes:\n  - {name: a, gpu_type: [v100], gpus: 8}\n", `cluster.yaml: nodes[0].gpu_type: want a string, got a list`},
		{"gpu_types: [{name: v100, tflops: fast}]\n" + node, `cluster.yaml: gpu_types[0].tflops: want a number, got "fast"`},
		{"gpu_types: [{name: v100, tflops: .nan}]\n" + node, "cluster.yaml: numbers must be finite"},
		{"gpu_types: [{name: v100, tflops: -.inf}]\n" + node, "cluster.yaml: numbers must be finite"},
		{"gpu_types: [{mem_mib: 1}]\n" + node, "cluster.yaml: gpu_types[0].name: must not be empty"},
		{"gpu_types: [{name: 'a=b', mem_mib: 1, tflops: 1}]\n" + node,
			`cluster.yaml: gpu_types[0].name: "a=b": only letters, digits, '-', '_' and '.' are allowed`},
		{"gpu_types: [{name: x1, mem_mib: 1}]\n" + node,
			`cluster.yaml: gpu_types[0]: type "x1" is not in the catalog, so mem_mib and tflops are required`},
		{"gpu_types: [{name: v100, mem_mib: 0}]\n" + node, "cluster.yaml: gpu_types[0].mem_mib: must be positive, got 0"},
		{"gpu_types: [{name: v100, tflops: -2}]\n" + node, "cluster.yaml: gpu_types[0].tflops: must be a positive number, got -2"},
		{"gpu_types: [{name: v100, tflops: 1}, {name: V100, tflops: 2}]\n" + node,
			`cluster.yaml: gpu_types[1].name: type "v100" already declared by gpu_types[0]`},
		{"nodes:\n  - {gpu_type: v100, gpus: 8}\n", "cluster.yaml: nodes[0].name: must not be empty"},
		{"nodes:\n  - {name: a/b, gpu_type: v100, gpus: 8}\n",
			`cluster.yaml: nodes[0].name: "a/b": only letters, digits, '-', '_' and '.' are allowed`},
		{"nodes:\n  - {name: a, gpus: 8}\n", "cluster.yaml: nodes[0].gpu_type: required"},
		{node + "  - {name: b, gpu_type: x100, gpus: 8}\n",
			`cluster.yaml: nodes[1].gpu_type: unknown GPU type "x100"; declare it under gpu_types or use one of: a10, a100,`},
		{node + "  - {name: b, gpu_type: v100, gpus: 4}\n  - {name: c, gpu_type: v100}\n",
			"cluster.yaml: nodes[2].gpus: must be 1..64, got 0"},
		{node + "  - {name: b, gpu_type: v100, gpus: 65}\n", "cluster.yaml: nodes[1].gpus: must be 1..64, got 65"},
		{node + "  - {name: b, gpu_type: v100, gpus: -1}\n", "cluster.yaml: nodes[1].gpus: must be 1..64, got -1"},
		{node + "  - {name: b, gpu_type: v100, gpus: 1, count: 0}\n", "cluster.yaml: nodes[1].count: must be at least 1, got 0"},
		{node + "  - {name: b, gpu_type: v100, gpus: 64, count: 16384}\n",
			"cluster.yaml: nodes[1].count: cluster would have more than 1048576 GPUs"},
		{node + "  - {name: b, gpu_type: v100, gpus: 1, count: 9223372036854775807}\n",
			"cluster.yaml: nodes[1].count: cluster would have more than 1048576 GPUs"},
		{node + "  - {name: b, gpu_type: v100, gpus: 1, count: 99999999999999999999}\n",
			"cluster.yaml: nodes[1].count: integer 100000000000000000000 out of range"},
		{node + "  - {name: a, gpu_type: k80, gpus: 1}\n", `cluster.yaml: nodes[1].name: node "a" already defined by nodes[0]`},
		{"nodes:\n  - {name: r, gpu_type: t4, gpus: 1, count: 3}\n  - {name: r-2, gpu_type: t4, gpus: 1}\n",
			`cluster.yaml: nodes[1].name: node "r-2" already defined by nodes[0]`},
	}
	for _, tt := range tests {
		c, err := ParseClusterFile("cluster.yaml", []byte(tt.yaml))
		if err == nil {
			t.Errorf("%q: got %s; want error %q", tt.yaml, describe(c), tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error\n got %q\nwant %q", tt.yaml, err, tt.want)
		}
	}
}

func TestExampleClusterFile(t *testing.T) {
	const path = "../testdata/clusters/example.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseClusterFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	want := "v100:32768:15.7 p100:16384:10.6 k80:12288:4.37 p40:24576:12 | " +
		"rack1-0:v100:8 rack1-1:v100:8 rack1-2:v100:8 rack1-3:v100:8 rack2-0:p100:4 rack2-1:p100:4 old-box:k80:8 inference:p40:8"
	if got := describe(c); got != want {
		t.Errorf("example:\n got %s\nwant %s", got, want)
	}
	if c.TotalGPUs() != 56 {
		t.Errorf("example has %d GPUs, want 56", c.TotalGPUs())
	}
}
