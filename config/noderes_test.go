package config

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// describeCapacity writes each node's capacity as "name:cpu=2,memory=8Gi".
func describeCapacity(c *model.Cluster) string {
	var parts []string
	for _, n := range c.Nodes {
		parts = append(parts, n.Name+":"+FormatResources(n.Capacity))
	}
	return strings.Join(parts, " ")
}

func TestClusterFileResources(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"none", node, "a:"},
		{"cores and quantities", `
nodes:
  - {name: a, gpu_type: v100, gpus: 8, cpus: 64, memory: 512Gi, pods: 110}
  - {name: b, gpu_type: v100, gpus: 4, count: 2, cpu: "500m", memory: 1073741824, pods: "8"}
`, "a:cpu=64,memory=512Gi,pods=110 b-0:cpu=500m,memory=1Gi,pods=8 b-1:cpu=500m,memory=1Gi,pods=8"},
		{"fractional cores, decimal memory", "nodes:\n  - {name: a, gpu_type: t4, gpus: 1, cpus: 0.25, memory: 1G}\n",
			"a:cpu=250m,memory=1000000000"},
		{"named resources", `
nodes:
  - name: a
    gpu_type: v100
    gpus: 8
    cpus: 96
    resources: {rdma/hca: 4, ephemeral-storage: 1Ti, example.com/fpga: "2"}
  - {name: b, gpu_type: v100, gpus: 8, cpus: 96}
`, "a:cpu=96,ephemeral-storage=1Ti,example.com/fpga=2,rdma/hca=4 b:cpu=96"},
		{"cpu under resources", "nodes:\n  - {name: a, gpu_type: t4, gpus: 1, resources: {cpu: 4}}\n", "a:cpu=4"},
		{"zero", "nodes:\n  - {name: a, gpu_type: t4, gpus: 1, cpus: 0}\n", "a:cpu=0"},
	}
	for _, tt := range tests {
		c, err := ParseClusterFile("cluster.yaml", []byte(tt.yaml))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := describeCapacity(c); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestClusterFileResourceErrors(t *testing.T) {
	const head = "nodes:\n  - {name: a, gpu_type: v100, gpus: 8, "
	tests := []struct {
		yaml, want string
	}{
		{head + "cpus: -2}\n", `cluster.yaml: nodes[0].cpus: -2 is not a non-negative number`},
		{head + "cpus: 0.0005}\n", `cluster.yaml: nodes[0].cpus: 0.0005 cores is not a whole number of millicores up to 2^53`},
		{head + "cpus: lots}\n", `cluster.yaml: nodes[0].cpus: "lots" is not a quantity (e.g. "2", "0.5" or "500m")`},
		{head + "cpus: [1]}\n", `cluster.yaml: nodes[0].cpus: want a number or a quantity such as "64", "500m" or "512Gi", got a list`},
		{head + "cpus: true}\n", `cluster.yaml: nodes[0].cpus: want a number or a quantity such as "64", "500m" or "512Gi", got true`},
		{head + "cpu: 2, cpus: 2}\n", `cluster.yaml: nodes[0].cpus: cpu already gives cpu: give one of them`},
		{head + "memory: 512Gb}\n", `cluster.yaml: nodes[0].memory: "512Gb" is not a quantity (e.g. "64Gi" or "512Mi")`},
		{head + "memory: 1.5}\n", `cluster.yaml: nodes[0].memory: 1.5 is not a whole number up to 2^53`},
		{head + "memory: 1Ei}\n", `cluster.yaml: nodes[0].memory: "1Ei" is too large`},
		{head + "pods: 1.5}\n", `cluster.yaml: nodes[0].pods: 1.5 is not a whole number up to 2^53`},
		{head + "resources: {nvidia.com/gpu: 8}}\n", `cluster.yaml: nodes[0].resources.nvidia.com/gpu: resource "nvidia.com/gpu": GPUs are requested with gpus`},
		{head + "resources: {a/b/c: 1}}\n", `cluster.yaml: nodes[0].resources.a/b/c: resource "a/b/c": want NAME or PREFIX/NAME`},
		{head + "resources: {rdma/hca: -1}}\n", `cluster.yaml: nodes[0].resources.rdma/hca: -1 is not a non-negative number`},
		{head + "resources: {rdma/hca: {n: 1}}}\n", `cluster.yaml: nodes[0].resources.rdma/hca: want a number or a quantity`},
		{head + "resources: [1]}\n", `cluster.yaml: nodes[0].resources: want a mapping, got a list`},
		{head + "cpus: 4, resources: {cpu: 4}}\n", `cluster.yaml: nodes[0].resources.cpu: cpus already gives cpu: give one of them`},
		{head + "memory: 1Gi}\n  - {name: b, gpu_type: v100, gpus: 8}\n",
			`cluster.yaml: nodes[1]: gives no memory but nodes[0] does: every entry must give it (write memory: 0 for nodes that have none)`},
		{"nodes:\n  - {name: b, gpu_type: v100, gpus: 8}\n" + "  - {name: a, gpu_type: v100, gpus: 8, cpus: 8}\n",
			`cluster.yaml: nodes[0]: gives no cpu but nodes[1] does: every entry must give it (write cpus: 0 for nodes that have none)`},
		{head + "cpus: 1, cpu: x}\n", `cluster.yaml: nodes[0].cpu: "x" is not a quantity`},
	}
	for _, tt := range tests {
		c, err := ParseClusterFile("cluster.yaml", []byte(tt.yaml))
		if err == nil {
			t.Errorf("%q: got %s; want error %q", tt.yaml, describeCapacity(c), tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error\n got %q\nwant %q", tt.yaml, err, tt.want)
		}
	}
}

// TestClusterFileResourcesVectored: a file with resources gives a cluster
// that models them (Vectored), and one without stays GPU-only.
func TestClusterFileResourcesVectored(t *testing.T) {
	c, err := ParseClusterFile("c.yaml", []byte(node))
	if err != nil || c.Vectored() {
		t.Fatalf("GPU-only file: vectored %v, err %v", c != nil && c.Vectored(), err)
	}
	c, err = ParseClusterFile("c.yaml", []byte("nodes:\n  - {name: a, gpu_type: v100, gpus: 8, cpus: 8, memory: 64Gi}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Resources(), ","); got != "cpu,memory" || c.Capacity(0)[0] != 8000 || c.Capacity(0)[1] != 64<<30 {
		t.Errorf("resources %s, capacity %v", got, c.Capacity(0))
	}
}
