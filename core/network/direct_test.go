package network_test

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/network"
)

func TestNewDirect(t *testing.T) {
	dev := func(name string) network.Storage {
		return network.Storage{Name: name, Interfaces: []network.Interface{{Name: "x", BandwidthGbps: 1, Quality: 1}}}
	}
	links := [][]network.Link{{{LatencyMs: 1, BandwidthGbps: 1}, {LatencyMs: 2, BandwidthGbps: 1, Unreachable: true}}}
	n, err := network.NewDirect([]network.Storage{dev("a"), dev("10.0.0.5:9000")}, links)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]int{"a": 0, "10.0.0.5:9000": 1, "": -1, "b": -1} {
		if got := n.Upload(addr).Storage; got != want {
			t.Errorf("Upload(%q) = device %d, want %d", addr, got, want)
		}
	}
	if n.Unreachable(0, 0) || !n.Unreachable(0, 1) || n.Unreachable(0, -1) {
		t.Error("Unreachable does not follow the links")
	}
	if _, err := network.NewDirect([]network.Storage{dev("a"), dev("a")}, [][]network.Link{{{LatencyMs: 1, BandwidthGbps: 1}, {LatencyMs: 1, BandwidthGbps: 1}}}); err == nil ||
		!strings.Contains(err.Error(), `storage device "a" is named twice`) {
		t.Errorf("duplicate names: %v", err)
	}
	if _, err := network.NewDirect([]network.Storage{dev("a")}, [][]network.Link{{{LatencyMs: -1, BandwidthGbps: 1}}}); err == nil {
		t.Error("a negative latency is accepted")
	}
}
