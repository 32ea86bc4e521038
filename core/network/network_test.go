package network_test

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
)

func iface(name string, gbps, ms, q float64) network.Interface {
	return network.Interface{Name: name, BandwidthGbps: gbps, LatencyMs: ms, Quality: q}
}

// twoDevices: nas (eth0 10 Gbit/s 1 ms q 1; ib0 100 Gbit/s 0.2 ms q 0.5)
// and obj (eth0 25 Gbit/s 0.3 ms q 0.9). Effective latencies (latency ÷
// quality): nas/eth0 1, nas/ib0 0.4, obj/eth0 0.333.
func twoDevices() []network.Storage {
	return []network.Storage{
		{Name: "nas", Interfaces: []network.Interface{iface("eth0", 10, 1, 1), iface("ib0", 100, 0.2, 0.5)}},
		{Name: "obj", Interfaces: []network.Interface{iface("eth0", 25, 0.3, 0.9)}},
	}
}

func TestUploadFastestInterface(t *testing.T) {
	tests := []struct {
		name    string
		storage []network.Storage
		uploads []network.UploadLink
		address string
		want    network.Choice
	}{
		// Seed 002, step 1: obj/eth0 (0.3 ms at quality 0.9: 0.333) beats
		// nas/ib0, which has the lowest latency (0.2 ms) but loses half of
		// its transfers (0.4), and nas/eth0 (1).
		{"best quality and latency together", twoDevices(), nil, "", network.Choice{Storage: 1, Interface: 0}},
		// Seen from address "lab", obj/eth0 is 5 ms away: nas/ib0 wins.
		{"per-address figures", twoDevices(), []network.UploadLink{{Address: "lab", Storage: 1, Interface: 0, LatencyMs: 5, Quality: 1}},
			"lab", network.Choice{Storage: 0, Interface: 1}},
		// Another address keeps the interfaces' own figures.
		{"other address unaffected", twoDevices(), []network.UploadLink{{Address: "lab", Storage: 1, Interface: 0, LatencyMs: 5, Quality: 1}},
			"home", network.Choice{Storage: 1, Interface: 0}},
		// Equal effective latency: the higher bandwidth wins.
		{"ties by bandwidth", []network.Storage{{Name: "a", Interfaces: []network.Interface{iface("x", 10, 1, 1)}},
			{Name: "b", Interfaces: []network.Interface{iface("y", 40, 0.5, 0.5)}}}, nil, "", network.Choice{Storage: 1, Interface: 0}},
		// Equal everything: the one declared first.
		{"ties by declaration order", []network.Storage{{Name: "a", Interfaces: []network.Interface{iface("x", 10, 1, 1)}},
			{Name: "b", Interfaces: []network.Interface{iface("y", 10, 1, 1)}}}, nil, "", network.Choice{Storage: 0, Interface: 0}},
		{"no storage", nil, nil, "", network.Choice{Storage: -1, Interface: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			links := [][]network.Link{make([]network.Link, len(tc.storage))}
			for s := range links[0] {
				links[0][s] = network.Link{LatencyMs: 0.1, BandwidthGbps: 10}
			}
			n, err := network.New(tc.storage, links, tc.uploads)
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Upload(tc.address); got != tc.want {
				t.Errorf("Upload(%q) = %+v, want %+v", tc.address, got, tc.want)
			}
		})
	}
}

func TestStaging(t *testing.T) {
	// Node 0: 0.5 ms, 10 Gbit/s to storage 0; node 1: 0.05 ms, 25 Gbit/s.
	links := [][]network.Link{{{LatencyMs: 0.5, BandwidthGbps: 10}}, {{LatencyMs: 0.05, BandwidthGbps: 25}}}
	n, err := network.New([]network.Storage{{Name: "s", Interfaces: []network.Interface{iface("e", 10, 1, 1)}}}, links, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := func(node int32) model.GPU { return model.GPU{Node: node} }
	tests := []struct {
		name    string
		storage int
		mb      int64
		alloc   []model.GPU
		want    model.Time
	}{
		// 10 GB = 10,000 MB = 80,000 Mbit at 25 Gbit/s: 3,200 ms + 0.05.
		{"one node", 0, 10000, []model.GPU{g(1), g(1)}, 3201},
		// The slowest node decides: node 0 needs 8,000.5 ms.
		{"slowest node", 0, 10000, []model.GPU{g(1), g(0)}, 8001},
		{"no data", 0, 0, []model.GPU{g(0)}, 0},
		{"no storage", -1, 10000, []model.GPU{g(0)}, 0},
	}
	for _, tc := range tests {
		if got := n.Staging(tc.storage, tc.mb, tc.alloc); got != tc.want {
			t.Errorf("%s: Staging = %d ms, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRackLinks(t *testing.T) {
	topo := network.DefaultTopology()
	got := network.RackLinks([]string{"r1", "r2", ""}, []string{"r1", ""}, topo)
	want := [][]network.Link{{topo.SameRack, topo.CrossRack}, {topo.CrossRack, topo.CrossRack}, {topo.CrossRack, topo.CrossRack}}
	for i := range want {
		for s := range want[i] {
			if got[i][s] != want[i][s] {
				t.Errorf("node %d, storage %d: %+v, want %+v", i, s, got[i][s], want[i][s])
			}
		}
	}
	// Rows do not share storage: writing one leaves the next alone.
	got[0] = append(got[0], topo.SameRack)
	if got[1][0] != topo.CrossRack {
		t.Error("appending to row 0 changed row 1")
	}
}

func TestNewRejects(t *testing.T) {
	ok := []network.Storage{{Name: "s", Interfaces: []network.Interface{iface("e", 10, 1, 1)}}}
	link := [][]network.Link{{{LatencyMs: 1, BandwidthGbps: 1}}}
	tests := []struct {
		name    string
		storage []network.Storage
		links   [][]network.Link
		uploads []network.UploadLink
		err     string
	}{
		{"no interface", []network.Storage{{Name: "s"}}, [][]network.Link{{{LatencyMs: 1, BandwidthGbps: 1}}}, nil, "storage device s has no interface"},
		{"bad quality", []network.Storage{{Name: "s", Interfaces: []network.Interface{iface("e", 10, 1, 1.5)}}}, link, nil, "link quality 1.5"},
		{"bad bandwidth", []network.Storage{{Name: "s", Interfaces: []network.Interface{iface("e", 0, 1, 1)}}}, link, nil, "bandwidth 0"},
		{"bad link latency", ok, [][]network.Link{{{LatencyMs: -1, BandwidthGbps: 1}}}, nil, "node 0, storage s: latency -1"},
		{"link count", ok, [][]network.Link{{}}, nil, "node 0 has 0 links"},
		{"upload interface", ok, link, []network.UploadLink{{Address: "a", Storage: 0, Interface: 1, Quality: 1}}, `upload address "a": no interface 1`},
	}
	for _, tc := range tests {
		_, err := network.New(tc.storage, tc.links, tc.uploads)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}
