package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/network"
)

// parseNetwork parses a cluster file and returns its network model.
func parseNetwork(data string) (*network.Network, []string, error) {
	f, c, err := decodeCluster(data)
	if err != nil {
		return nil, nil, err
	}
	n, err := f.NetworkModel("cluster.yaml", c)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, nd := range c.Nodes {
		names = append(names, nd.Name)
	}
	return n, names, nil
}

// describeLinks lists every node's links as "node:storage=ms/gbps ...".
func describeLinks(n *network.Network, names []string) string {
	var b strings.Builder
	for i, name := range names {
		for s, st := range n.Storage {
			l := n.Link(i, s)
			fmt.Fprintf(&b, "%s:%s=%g/%g ", name, st.Name, l.LatencyMs, l.BandwidthGbps)
		}
	}
	return strings.TrimSpace(b.String())
}

const storageFile = `
storage:
  - name: nas
    rack: r1
    interfaces:
      - {name: eth0, bandwidth_gbps: 10, latency_ms: 1}
      - {name: ib0, bandwidth_gbps: 100, latency_ms: 0.2, quality: 0.5}
  - name: obj
    interfaces:
      - {name: eth0, bandwidth_gbps: 25, latency_ms: 0.3, quality: 0.9}
network:
  same_rack: {latency_ms: 0.02}
  cross_rack: {latency_ms: 0.4, bandwidth_gbps: 5}
  uploads:
    - {address: lab, interface: obj/eth0, latency_ms: 5}
nodes:
  - {name: a, gpu_type: v100, gpus: 8, count: 2, rack: r1}
  - name: b
    gpu_type: k80
    gpus: 4
    rack: r2
    links:
      - {storage: obj, latency_ms: 0.01}
`

func TestNetworkModel(t *testing.T) {
	n, names, err := parseNetwork(storageFile)
	if err != nil {
		t.Fatal(err)
	}
	// Same rack as nas: same_rack with its latency overridden (bandwidth
	// keeps the default 25); cross rack otherwise; b's link to obj
	// overridden in latency only.
	want := "a-0:nas=0.02/25 a-0:obj=0.4/5 a-1:nas=0.02/25 a-1:obj=0.4/5 b:nas=0.4/5 b:obj=0.01/5"
	if got := describeLinks(n, names); got != want {
		t.Errorf("links:\n got %s\nwant %s", got, want)
	}
	if got := n.Upload(""); got != (network.Choice{Storage: 1, Interface: 0}) {
		t.Errorf("upload: %+v, want obj/eth0", got)
	}
	if got := n.Upload("lab"); got != (network.Choice{Storage: 0, Interface: 1}) {
		t.Errorf("upload from lab: %+v, want nas/ib0", got)
	}
	if q := n.Storage[0].Interfaces[0].Quality; q != 1 {
		t.Errorf("quality defaults to %v, want 1", q)
	}
}

func TestNetworkModelWithoutStorage(t *testing.T) {
	n, _, err := parseNetwork(node)
	if err != nil || n != nil {
		t.Errorf("got %v, %v; want no network and no error", n, err)
	}
	// Racks alone are fine.
	if _, err := ParseClusterFile("cluster.yaml", []byte("nodes: [{name: a, gpu_type: v100, gpus: 8, rack: r1}]")); err != nil {
		t.Error(err)
	}
}

func TestNetworkErrors(t *testing.T) {
	st := "storage:\n  - {name: nas, interfaces: [{name: eth0, bandwidth_gbps: 10, latency_ms: 1}]}\n"
	tests := []struct {
		yaml, want string
	}{
		{"storage: [{name: nas}]\n" + node, "cluster.yaml: storage[0].interfaces: at least one interface is required"},
		{"storage: [{name: 'n s', interfaces: [{name: e, bandwidth_gbps: 1, latency_ms: 1}]}]\n" + node,
			`cluster.yaml: storage[0].name: "n s": only letters, digits`},
		{st + "  - {name: nas, interfaces: [{name: eth0, bandwidth_gbps: 10, latency_ms: 1}]}\n" + node,
			`cluster.yaml: storage[1].name: storage device "nas" already declared by storage[0]`},
		{"storage: [{name: s, interfaces: [{name: e, latency_ms: 1}]}]\n" + node,
			"cluster.yaml: storage[0].interfaces[0].bandwidth_gbps: required"},
		{"storage: [{name: s, interfaces: [{name: e, bandwidth_gbps: 1}]}]\n" + node,
			"cluster.yaml: storage[0].interfaces[0].latency_ms: required"},
		{"storage: [{name: s, interfaces: [{name: e, bandwidth_gbps: 0, latency_ms: 1}]}]\n" + node,
			"cluster.yaml: storage[0].interfaces[0].bandwidth_gbps: must be a bandwidth in Gbit/s > 0, got 0"},
		{"storage: [{name: s, interfaces: [{name: e, bandwidth_gbps: 1, latency_ms: -1}]}]\n" + node,
			"cluster.yaml: storage[0].interfaces[0].latency_ms: must be a latency in milliseconds ≥ 0, got -1"},
		{"storage: [{name: s, interfaces: [{name: e, bandwidth_gbps: 1, latency_ms: 1, quality: 0}]}]\n" + node,
			"cluster.yaml: storage[0].interfaces[0].quality: must be a link quality in (0, 1], got 0"},
		{"storage: [{name: s, interfaces: [{name: e, bandwidth_gbps: 1, latency_ms: 1}, {name: e, bandwidth_gbps: 1, latency_ms: 1}]}]\n" + node,
			`cluster.yaml: storage[0].interfaces[1].name: interface "e" already declared by interfaces[0]`},
		{"storage: [{name: s, interfaces: [{name: e, bandwidth: 1, latency_ms: 1}]}]\n" + node,
			`cluster.yaml: storage[0].interfaces[0]: unknown field "bandwidth" (known: bandwidth_gbps, endpoint, latency_ms, name, quality)`},
		{st + "network: {same_rack: {latency_ms: -2}}\n" + node, "cluster.yaml: network.same_rack.latency_ms: must be a latency in milliseconds ≥ 0, got -2"},
		{st + "network: {cross_rack: {bandwidth_gbps: 0}}\n" + node, "cluster.yaml: network.cross_rack.bandwidth_gbps: must be a bandwidth in Gbit/s > 0, got 0"},
		{st + "network: {uploads: [{address: x, interface: nas}]}\n" + node, `cluster.yaml: network.uploads[0].interface: "nas": want STORAGE/INTERFACE`},
		{st + "network: {uploads: [{address: x, interface: nfs/eth0}]}\n" + node,
			`cluster.yaml: network.uploads[0].interface: unknown storage device "nfs" (declared: nas)`},
		{st + "network: {uploads: [{address: x, interface: nas/ib0}]}\n" + node, `cluster.yaml: network.uploads[0].interface: storage device "nas" has no interface "ib0"`},
		{st + "network: {uploads: [{address: '', interface: nas/eth0}]}\n" + node, "cluster.yaml: network.uploads[0].address: must not be empty"},
		{st + "network: {uploads: [{address: x, interface: nas/eth0}, {address: x, interface: nas/eth0}]}\n" + node,
			`cluster.yaml: network.uploads[1]: address "x" and interface "nas/eth0" already given by uploads[0]`},
		{st + "network: {uploads: [{address: x, interface: nas/eth0, quality: 2}]}\n" + node, "cluster.yaml: network.uploads[0].quality: must be a link quality in (0, 1], got 2"},
		{"network: {uploads: [{address: x, interface: nas/eth0}]}\n" + node,
			`cluster.yaml: network.uploads[0].interface: unknown storage device "nas": the file declares none (add a storage list)`},
		{"nodes: [{name: a, gpu_type: v100, gpus: 8, rack: 'r 1'}]", `cluster.yaml: nodes[0].rack: "r 1": only letters, digits`},
		{st + "nodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nfs}]}]",
			`cluster.yaml: nodes[0].links[0].storage: unknown storage device "nfs" (declared: nas)`},
		{st + "nodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nas}, {storage: nas}]}]",
			`cluster.yaml: nodes[0].links[1].storage: storage device "nas" already linked by links[0]`},
		{st + "nodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nas, bandwidth_gbps: -1}]}]",
			"cluster.yaml: nodes[0].links[0].bandwidth_gbps: must be a bandwidth in Gbit/s > 0, got -1"},
		{st + "nodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nas, ms: 1}]}]",
			`cluster.yaml: nodes[0].links[0]: unknown field "ms" (known: bandwidth_gbps, endpoint, latency_ms, storage)`},
	}
	for _, tc := range tests {
		_, err := ParseClusterFile("cluster.yaml", []byte(tc.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.yaml, err, tc.want)
		}
	}
}

// TestStorageDocExample parses the example of docs/CLUSTER.md's "Storage
// and network" section and checks what the text says about it.
func TestStorageDocExample(t *testing.T) {
	example := clusterDocExample(t, "## Storage and network")
	n, names, err := parseNetwork(example)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Upload(""); got != (network.Choice{Storage: 0, Interface: 1}) {
		t.Errorf("upload without address: %+v, want nas-1/ib0", got)
	}
	if got := n.Upload("lab"); got != (network.Choice{Storage: 1, Interface: 0}) {
		t.Errorf("upload from lab: %+v, want nas-2/eth0", got)
	}
	want := "v100-r1-0:nas-1=0.05/25 v100-r1-0:nas-2=0.25/10"
	if got := describeLinks(n, names); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "k80-r2-3:nas-1=0.5/5 k80-r2-3:nas-2=0.25/10") {
		t.Errorf("links %s", got)
	}
}

func TestEndpoints(t *testing.T) {
	ok := "storage:\n  - {name: nas, interfaces: [{name: eth0, bandwidth_gbps: 10, latency_ms: 1, endpoint: \"nas:2049\"}]}\n" +
		"nodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nas, endpoint: \"http://10.0.0.9:9000/data\"}]}]"
	if _, err := ParseClusterFile("c.yaml", []byte(ok)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, err string }{
		{"storage:\n  - {name: nas, interfaces: [{name: eth0, bandwidth_gbps: 10, latency_ms: 1, endpoint: \"nas\"}]}\nnodes: [{name: a, gpu_type: v100, gpus: 8}]",
			`c.yaml: storage[0].interfaces[0].endpoint: "nas": want host:port or an http(s) URL`},
		{"storage:\n  - {name: nas, interfaces: [{name: eth0, bandwidth_gbps: 10, latency_ms: 1}]}\nnodes: [{name: a, gpu_type: v100, gpus: 8, links: [{storage: nas, endpoint: \"nas:0\"}]}]",
			`c.yaml: nodes[0].links[0].endpoint: "nas:0": port "0" is not 1..65535`},
	} {
		if _, err := ParseClusterFile("c.yaml", []byte(tc.file)); err == nil || err.Error() != tc.err {
			t.Errorf("error %v, want %q", err, tc.err)
		}
	}
	for _, e := range []string{"h:1", "http://h", "https://h:8443/x?y=1", "[::1]:80"} {
		if err := CheckEndpoint(e); err != nil {
			t.Errorf("%q: %v", e, err)
		}
	}
	for _, e := range []string{"", "h", ":80", "h:x", "http://", "h :1", strings.Repeat("a", 1100) + ":1"} {
		if CheckEndpoint(e) == nil {
			t.Errorf("%q accepted", e)
		}
	}
}
