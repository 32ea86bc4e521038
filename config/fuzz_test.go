package config

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// checkCluster fails t unless c passes model.NewCluster's rules, has finite
// figures, uses every type it lists and holds wantGPUs GPUs.
func checkCluster(t *testing.T, c *model.Cluster, wantGPUs int) {
	t.Helper()
	if _, err := model.NewCluster(c.Types, c.Nodes); err != nil {
		t.Fatalf("result fails model rules: %v", err)
	}
	used := make([]bool, len(c.Types))
	for _, n := range c.Nodes {
		used[n.Type] = true
		if strings.ContainsAny(n.Name, "/ \t\n") {
			t.Fatalf("node name %q", n.Name)
		}
	}
	for i, ty := range c.Types {
		if !used[i] || math.IsNaN(ty.TFLOPS) || math.IsInf(ty.TFLOPS, 0) {
			t.Fatalf("type %+v unused or not finite", ty)
		}
	}
	if got := c.TotalGPUs(); got != wantGPUs || got > MaxClusterGPUs {
		t.Fatalf("cluster has %d GPUs, want %d", got, wantGPUs)
	}
}

func FuzzParseGPUs(f *testing.F) {
	f.Add("v100=8,p100=8,k80=8", 4)
	f.Add("v100=10,k80=3", 3)
	f.Add(" T4 = 1 ", 1)
	f.Add("a100-80=64,h100=65", 64)
	f.Add("v100=4,v100=4", 4)
	f.Add("v100=-1", 4)
	f.Add("=,", 0)
	f.Fuzz(func(t *testing.T, spec string, perNode int) {
		c, err := ParseGPUs(spec, perNode)
		if err != nil {
			return
		}
		want := 0
		for item := range strings.SplitSeq(spec, ",") {
			_, count, _ := strings.Cut(item, "=")
			n, err := strconv.Atoi(strings.TrimSpace(count))
			if err != nil {
				t.Fatalf("accepted item %q", item)
			}
			want += n
		}
		checkCluster(t, c, want)
		for i, n := range c.Nodes {
			if n.Name != "n"+strconv.Itoa(i) || n.GPUs > perNode {
				t.Fatalf("node %d is %+v with perNode %d", i, n, perNode)
			}
			if _, ok := LookupType(c.Types[n.Type].Name); !ok {
				t.Fatalf("type %q not in the catalog", c.Types[n.Type].Name)
			}
		}
	})
}

func FuzzParseClusterFile(f *testing.F) {
	if data, err := os.ReadFile("../testdata/clusters/example.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(node))
	f.Add([]byte("gpu_types: [{name: x, mem_mib: 1, tflops: 0.5}]\nnodes: [{name: a, gpu_type: x, gpus: 64, count: 3}]"))
	f.Add([]byte(`{"nodes":[{"name":"a","gpu_type":"T4","gpus":2,"count":2},{"name":"a-1","gpu_type":"t4","gpus":1}]}`))
	f.Add([]byte("nodes:\n  - {name: r, gpu_type: v100, gpus: 8, count: 0}\n"))
	f.Add([]byte("gpu_types: [{name: v100, tflops: .nan}]\n" + node))
	f.Add([]byte(storageFile))
	f.Add([]byte("storage: [{name: s, rack: r, interfaces: [{name: e, bandwidth_gbps: 1e308, latency_ms: 0}]}]\n" +
		"nodes: [{name: a, gpu_type: v100, gpus: 8, count: 2, rack: r, links: [{storage: s, latency_ms: 1e-300}]}]"))
	f.Add([]byte("nodes:\n  - {name: a, gpu_type: v100, gpus: 8, cpus: 0.5, memory: 512Gi, pods: 110, resources: {rdma/hca: 4}}\n" +
		"  - {name: b, gpu_type: t4, gpus: 2, cpu: \"500m\", memory: 1e9, pods: \"8\", count: 2}\n"))
	f.Add([]byte("nodes:\n  - {name: a, gpu_type: v100, gpus: 8, cpus: -1, memory: 9Ei, resources: {cpu: 1, nvidia.com/gpu: 2}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseClusterFile("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		file, err := DecodeFile("fuzz.yaml", data)
		if err != nil {
			t.Fatalf("ParseClusterFile accepted what DecodeFile rejects: %v", err)
		}
		want := 0
		for _, n := range file.Nodes {
			count := 1
			if n.Count != nil {
				count = *n.Count
			}
			want += n.GPUs * count
		}
		checkCluster(t, c, want)
		checkCapacity(t, c)
		if _, err := file.NetworkModel("fuzz.yaml", c); err != nil {
			t.Fatalf("ParseClusterFile accepted a file whose network NetworkModel rejects: %v", err)
		}
	})
}

// checkCapacity fails t unless every node's capacity is non-negative and at
// most 2^53 of each resource, with names CheckResourceName accepts.
func checkCapacity(t *testing.T, c *model.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		for name, v := range n.Capacity {
			if err := CheckResourceName(name); err != nil || v < 0 || v > maxAmount {
				t.Fatalf("node %s: %s=%d (%v)", n.Name, name, v, err)
			}
		}
	}
}
