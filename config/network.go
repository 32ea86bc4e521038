package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
)

// StorageSpec is one entry of a cluster file's storage list: a data storage
// device (seed 002) and its upload interfaces.
type StorageSpec struct {
	// Name identifies the device; letters, digits, '-', '_' and '.'.
	Name string `json:"name"`
	// Rack is the device's rack, for the rack topology; empty: none.
	Rack string `json:"rack,omitempty"`
	// Interfaces are the device's upload interfaces, at least one.
	Interfaces []InterfaceSpec `json:"interfaces"`
}

// InterfaceSpec is one upload interface of a storage device.
type InterfaceSpec struct {
	// Name identifies the interface within its device.
	Name string `json:"name"`
	// BandwidthGbps is its bandwidth in Gbit/s, > 0; required.
	BandwidthGbps *float64 `json:"bandwidth_gbps"`
	// LatencyMs is its latency in milliseconds, ≥ 0; required.
	LatencyMs *float64 `json:"latency_ms"`
	// Quality is its link quality in (0, 1]; nil means 1.
	Quality *float64 `json:"quality,omitempty"`
	// Endpoint is the address by which nodes reach the device through
	// this interface, "host:port" or an http(s) URL: the scheduler
	// service's agents measure their round-trip time to it, and a job
	// whose data_endpoint is it has its data on this device. Optional.
	Endpoint string `json:"endpoint,omitempty"`
}

// LinkSpec gives a link's latency and bandwidth; a field left out keeps the
// value it overrides.
type LinkSpec struct {
	// LatencyMs is the latency in milliseconds, ≥ 0.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
	// BandwidthGbps is the bandwidth in Gbit/s, > 0.
	BandwidthGbps *float64 `json:"bandwidth_gbps,omitempty"`
}

// NodeLinkSpec is one entry of a nodes entry's links list: the link of each
// of its nodes to one storage device, overriding the rack topology's.
type NodeLinkSpec struct {
	// Storage names a device of the storage list.
	Storage string `json:"storage"`
	// LatencyMs is the latency in milliseconds, ≥ 0.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
	// BandwidthGbps is the bandwidth in Gbit/s, > 0.
	BandwidthGbps *float64 `json:"bandwidth_gbps,omitempty"`
	// Endpoint is the address by which these nodes reach the device, when
	// it differs from its interfaces' endpoints (another path, a replica
	// in their rack): their agents probe it instead. Optional.
	Endpoint string `json:"endpoint,omitempty"`
}

// link returns the node link's figures as a LinkSpec.
func (l NodeLinkSpec) link() *LinkSpec {
	return &LinkSpec{LatencyMs: l.LatencyMs, BandwidthGbps: l.BandwidthGbps}
}

// NetworkSpec is a cluster file's network block: the links the rack
// topology implies and per-address upload figures.
type NetworkSpec struct {
	// SameRack is the link between a node and a storage device in the same
	// rack; a field left out keeps the default (network.DefaultTopology).
	SameRack *LinkSpec `json:"same_rack,omitempty"`
	// CrossRack is the link otherwise.
	CrossRack *LinkSpec `json:"cross_rack,omitempty"`
	// Uploads give interfaces' figures as seen from upload addresses.
	Uploads []UploadSpec `json:"uploads,omitempty"`
}

// UploadSpec is how one interface looks from one upload address: a field
// given replaces the interface's own for uploads from that address.
type UploadSpec struct {
	// Address is the upload address, as jobs give it (jsonl "upload").
	Address string `json:"address"`
	// Interface names the interface as "STORAGE/INTERFACE".
	Interface string `json:"interface"`
	// LatencyMs is the latency from the address in milliseconds, ≥ 0.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
	// Quality is the link quality from the address, in (0, 1].
	Quality *float64 `json:"quality,omitempty"`
}

// NetworkModel returns the network model of c, the cluster that f.Cluster built:
// the storage devices, every node's link to each (the rack topology's,
// with the node entry's links applied) and the upload figures. It returns
// nil when the file declares no storage device. name is used only in error
// messages.
func (f *File) NetworkModel(name string, c *model.Cluster) (*network.Network, error) {
	if err := f.checkNetwork(name); err != nil {
		return nil, err
	}
	if len(f.Storage) == 0 {
		return nil, nil
	}
	devices := f.storageDevices()
	topo, _ := f.topology()
	storageRacks := make([]string, len(f.Storage))
	for s, st := range f.Storage {
		storageRacks[s] = st.Rack
	}
	var racks []string
	var entry []int // per node: its nodes[] entry
	for i, n := range f.Nodes {
		count := 1
		if n.Count != nil {
			count = *n.Count
		}
		for k := range count {
			if len(racks) >= len(c.Nodes) || c.Nodes[len(racks)].Name != groupNodeName(n.Name, k, count) {
				return nil, fmt.Errorf("%s: nodes[%d]: the cluster was not built from this file", name, i)
			}
			racks, entry = append(racks, n.Rack), append(entry, i)
		}
	}
	if len(racks) != len(c.Nodes) {
		return nil, fmt.Errorf("%s: the cluster was not built from this file: it has %d nodes, the file %d", name, len(c.Nodes), len(racks))
	}
	links := network.RackLinks(racks, storageRacks, topo)
	for i, row := range links {
		for _, l := range f.Nodes[entry[i]].Links {
			s := f.storageIndex(l.Storage)
			row[s] = l.link().apply(row[s])
		}
	}
	net, err := network.New(devices, links, f.uploadLinks())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return net, nil
}

// storageDevices converts the storage list (already checked).
func (f *File) storageDevices() []network.Storage {
	out := make([]network.Storage, len(f.Storage))
	for s, st := range f.Storage {
		out[s].Name = st.Name
		for _, in := range st.Interfaces {
			q := 1.0
			if in.Quality != nil {
				q = *in.Quality
			}
			out[s].Interfaces = append(out[s].Interfaces, network.Interface{Name: in.Name,
				BandwidthGbps: *in.BandwidthGbps, LatencyMs: *in.LatencyMs, Quality: q})
		}
	}
	return out
}

// uploadLinks converts the network block's uploads (already checked).
func (f *File) uploadLinks() []network.UploadLink {
	if f.Network == nil {
		return nil
	}
	var out []network.UploadLink
	for _, u := range f.Network.Uploads {
		st, in, _ := strings.Cut(u.Interface, "/")
		s := f.storageIndex(st)
		i := f.Storage[s].interfaceIndex(in)
		spec := f.Storage[s].Interfaces[i]
		l := network.UploadLink{Address: u.Address, Storage: s, Interface: i, LatencyMs: *spec.LatencyMs, Quality: 1}
		if spec.Quality != nil {
			l.Quality = *spec.Quality
		}
		if u.LatencyMs != nil {
			l.LatencyMs = *u.LatencyMs
		}
		if u.Quality != nil {
			l.Quality = *u.Quality
		}
		out = append(out, l)
	}
	return out
}

// topology returns the rack topology: the defaults with the network block's
// same_rack and cross_rack applied, or the first bad field.
func (f *File) topology() (network.Topology, *specError) {
	t := network.DefaultTopology()
	if f.Network == nil {
		return t, nil
	}
	for _, x := range []struct {
		field string
		spec  *LinkSpec
		dst   *network.Link
	}{{".same_rack", f.Network.SameRack, &t.SameRack}, {".cross_rack", f.Network.CrossRack, &t.CrossRack}} {
		if x.spec == nil {
			continue
		}
		if err := x.spec.check(); err != nil {
			return t, &specError{x.field + err.field, err.msg}
		}
		*x.dst = x.spec.apply(*x.dst)
	}
	return t, nil
}

// apply returns l with the fields of s replacing its own.
func (s *LinkSpec) apply(l network.Link) network.Link {
	if s.LatencyMs != nil {
		l.LatencyMs = *s.LatencyMs
	}
	if s.BandwidthGbps != nil {
		l.BandwidthGbps = *s.BandwidthGbps
	}
	return l
}

// check returns the first bad field of s, or nil.
func (s *LinkSpec) check() *specError {
	if msg := checkLatency(s.LatencyMs); msg != "" {
		return &specError{".latency_ms", msg}
	}
	if msg := checkBandwidth(s.BandwidthGbps); msg != "" {
		return &specError{".bandwidth_gbps", msg}
	}
	return nil
}

func checkLatency(v *float64) string {
	if v != nil && (!(*v >= 0) || math.IsInf(*v, 0)) {
		return fmt.Sprintf("must be a latency in milliseconds ≥ 0, got %v", *v)
	}
	return ""
}

func checkBandwidth(v *float64) string {
	if v != nil && (!(*v > 0) || math.IsInf(*v, 0)) {
		return fmt.Sprintf("must be a bandwidth in Gbit/s > 0, got %v", *v)
	}
	return ""
}

func checkQuality(v *float64) string {
	if v != nil && !(*v > 0 && *v <= 1) {
		return fmt.Sprintf("must be a link quality in (0, 1], got %v", *v)
	}
	return ""
}

// storageIndex returns the index of the named storage device, or -1.
func (f *File) storageIndex(name string) int {
	for s, st := range f.Storage {
		if st.Name == name {
			return s
		}
	}
	return -1
}

// interfaceIndex returns the index of the named interface, or -1.
func (s *StorageSpec) interfaceIndex(name string) int {
	for i, in := range s.Interfaces {
		if in.Name == name {
			return i
		}
	}
	return -1
}

// storageField names storage entry s.
func storageField(s int) string { return "storage[" + strconv.Itoa(s) + "]" }
