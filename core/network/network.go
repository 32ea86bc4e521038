package network

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/core/model"
)

// Interface is one network interface of a storage device, through which
// uploads arrive.
type Interface struct {
	// Name identifies the interface within its device.
	Name string
	// BandwidthGbps is its bandwidth in Gbit/s, > 0.
	BandwidthGbps float64
	// LatencyMs is its latency in milliseconds, ≥ 0.
	LatencyMs float64
	// Quality is its link quality in (0, 1]: the share of transfers that
	// succeed the first time (1: a perfect link).
	Quality float64
}

// Storage is a data storage device.
type Storage struct {
	// Name identifies the device.
	Name string
	// Interfaces are the device's upload interfaces, at least one.
	Interfaces []Interface
}

// Link is a node's path to a storage device.
type Link struct {
	// LatencyMs is the node's ping time to the device in milliseconds, ≥ 0.
	LatencyMs float64
	// BandwidthGbps is the bandwidth between them in Gbit/s, > 0.
	BandwidthGbps float64
	// Unreachable says that the node cannot reach the device (its latest
	// probes failed): the energy placer does not put a job whose data is
	// there on the node.
	Unreachable bool
}

// UploadLink is how an interface looks from one upload address: its
// latency and link quality from there replace the interface's own figures
// for uploads from that address.
type UploadLink struct {
	// Address is the upload address.
	Address string
	// Storage and Interface index Network.Storage and its Interfaces.
	Storage, Interface int
	// LatencyMs and Quality are as in Interface.
	LatencyMs, Quality float64
}

// Choice is the interface an upload goes to; Storage is -1 when the
// network has no storage device.
type Choice struct {
	Storage, Interface int
}

// Network is the network model of a cluster. Build it with New; do not
// change it afterwards.
type Network struct {
	// Storage lists the storage devices in declaration order.
	Storage []Storage

	nodes   int
	links   []Link // node-major: links[node*len(Storage)+storage]
	uploads map[string][]UploadLink
	// direct: an upload address names its storage device (NewDirect).
	direct map[string]int
}

// New checks its arguments and returns the network of a cluster of
// len(links) nodes: links[i][s] is node i's link to storage device s.
// Storage may be empty (a cluster without storage devices); then every
// links[i] is empty too.
func New(storage []Storage, links [][]Link, uploads []UploadLink) (*Network, error) {
	n := &Network{Storage: storage, nodes: len(links), uploads: map[string][]UploadLink{}}
	if err := checkStorage(storage); err != nil {
		return nil, err
	}
	n.links = make([]Link, 0, len(links)*len(storage))
	for i, row := range links {
		if len(row) != len(storage) {
			return nil, fmt.Errorf("node %d has %d links, want one per storage device (%d)", i, len(row), len(storage))
		}
		for s, l := range row {
			if err := l.Validate(); err != nil {
				return nil, fmt.Errorf("node %d, storage %s: %w", i, storage[s].Name, err)
			}
		}
		n.links = append(n.links, row...)
	}
	for _, u := range uploads {
		if u.Storage < 0 || u.Storage >= len(storage) || u.Interface < 0 || u.Interface >= len(storage[u.Storage].Interfaces) {
			return nil, fmt.Errorf("upload address %q: no interface %d of storage device %d", u.Address, u.Interface, u.Storage)
		}
		if err := checkFigures(u.LatencyMs, 1, u.Quality); err != nil {
			return nil, fmt.Errorf("upload address %q: %w", u.Address, err)
		}
		n.uploads[u.Address] = append(n.uploads[u.Address], u)
	}
	return n, nil
}

// NewDirect returns a network in which a job's upload address is the name
// of the storage device that already holds its data, as the scheduler
// service uses it: a job names its data endpoint, and there is no upload
// to route (seed 002, step 1, does not apply). Upload returns the named
// device, or Storage -1 (no communication score) for an empty address or
// one that names no device. Device names must be distinct. The arguments
// are those of New, without upload links.
func NewDirect(storage []Storage, links [][]Link) (*Network, error) {
	n, err := New(storage, links, nil)
	if err != nil {
		return nil, err
	}
	n.direct = make(map[string]int, len(storage))
	for s, st := range storage {
		if _, dup := n.direct[st.Name]; dup {
			return nil, fmt.Errorf("storage device %q is named twice", st.Name)
		}
		n.direct[st.Name] = s
	}
	return n, nil
}

// checkStorage checks every device and interface.
func checkStorage(storage []Storage) error {
	for _, s := range storage {
		if len(s.Interfaces) == 0 {
			return fmt.Errorf("storage device %s has no interface", s.Name)
		}
		for _, f := range s.Interfaces {
			if err := checkFigures(f.LatencyMs, f.BandwidthGbps, f.Quality); err != nil {
				return fmt.Errorf("storage device %s, interface %s: %w", s.Name, f.Name, err)
			}
		}
	}
	return nil
}

// Validate reports whether l is a usable link.
func (l Link) Validate() error { return checkFigures(l.LatencyMs, l.BandwidthGbps, 1) }

// checkFigures checks a latency, a bandwidth and a link quality.
func checkFigures(latency, bandwidth, quality float64) error {
	switch {
	case !(latency >= 0) || math.IsInf(latency, 0):
		return fmt.Errorf("latency %v ms: want a finite number ≥ 0", latency)
	case !(bandwidth > 0) || math.IsInf(bandwidth, 0):
		return fmt.Errorf("bandwidth %v Gbit/s: want a finite number > 0", bandwidth)
	case !(quality > 0 && quality <= 1):
		return fmt.Errorf("link quality %v: want a number in (0, 1]", quality)
	}
	return nil
}

// Nodes returns the number of nodes the network describes.
func (n *Network) Nodes() int { return n.nodes }

// Link returns node's link to storage device s.
func (n *Network) Link(node, s int) Link { return n.links[node*len(n.Storage)+s] }

// Latency returns node's latency to storage device s in milliseconds: its
// communication score for the data stored there (seed 002, step 2; lower
// is better). It is 0 when s is -1 (no storage device).
func (n *Network) Latency(node, s int) float64 {
	if s < 0 {
		return 0
	}
	return n.links[node*len(n.Storage)+s].LatencyMs
}

// Unreachable reports whether node cannot reach storage device s (false
// when s is -1).
func (n *Network) Unreachable(node, s int) bool {
	return s >= 0 && n.links[node*len(n.Storage)+s].Unreachable
}

// Upload returns the interface an upload from address goes to (seed 002,
// step 1): the one with the lowest effective latency, LatencyMs ÷ Quality
// (the expected time when a share 1 − Quality of the attempts must be
// repeated), so that both the best link quality and the lowest latency
// count. Ties go to the higher bandwidth, then to the device and interface
// declared first. An UploadLink for address replaces an interface's
// latency and quality. Without storage devices it returns Storage -1. In a
// network built with NewDirect the address names the device instead.
func (n *Network) Upload(address string) Choice {
	best := Choice{Storage: -1, Interface: -1}
	if n.direct != nil {
		if s, ok := n.direct[address]; ok && address != "" {
			best = Choice{Storage: s, Interface: 0}
		}
		return best
	}
	var bestEff, bestBW float64
	over := n.uploads[address]
	for s, st := range n.Storage {
		for i, f := range st.Interfaces {
			lat, q := f.LatencyMs, f.Quality
			for _, u := range over {
				if u.Storage == s && u.Interface == i {
					lat, q = u.LatencyMs, u.Quality
				}
			}
			eff := lat / q
			if best.Storage < 0 || eff < bestEff || (eff == bestEff && f.BandwidthGbps > bestBW) {
				best, bestEff, bestBW = Choice{Storage: s, Interface: i}, eff, f.BandwidthGbps
			}
		}
	}
	return best
}

// Staging returns the time it takes to copy datasetMB megabytes from
// storage device s to the nodes of alloc: each node receives the whole
// dataset over its own link, in its latency plus datasetMB·8 ÷ its
// bandwidth, and the job waits for the slowest node. The result is
// rounded up to the millisecond and at most model.Horizon (a link too slow
// to deliver the data within it); it is 0 without data or without a
// storage device (s = -1).
func (n *Network) Staging(s int, datasetMB int64, alloc []model.GPU) model.Time {
	if s < 0 || datasetMB <= 0 {
		return 0
	}
	worst := 0.0
	last := int32(-1)
	for _, g := range alloc {
		if g.Node == last {
			continue
		}
		last = g.Node
		l := n.Link(int(g.Node), s)
		// MB·8 is megabits; megabits ÷ Gbit/s is milliseconds.
		worst = max(worst, l.LatencyMs+float64(datasetMB)*8/l.BandwidthGbps)
	}
	return model.Time(min(math.Ceil(worst), float64(model.Horizon)))
}

// Topology holds the links a rack topology implies: SameRack between a
// node and a storage device in the same rack, CrossRack otherwise (or when
// either has no rack).
type Topology struct {
	SameRack, CrossRack Link
}

// DefaultTopology returns the default rack topology (docs/CLUSTER.md gives
// the reasoning): 0.05 ms and 25 Gbit/s within a rack, 0.25 ms and
// 10 Gbit/s across racks.
func DefaultTopology() Topology {
	return Topology{SameRack: Link{LatencyMs: 0.05, BandwidthGbps: 25}, CrossRack: Link{LatencyMs: 0.25, BandwidthGbps: 10}}
}

// RackLinks returns the links that topology t implies between nodes in
// racks nodeRacks and storage devices in racks storageRacks: out[i][s] is
// t.SameRack when nodeRacks[i] and storageRacks[s] are equal and not
// empty, t.CrossRack otherwise.
func RackLinks(nodeRacks, storageRacks []string, t Topology) [][]Link {
	out := make([][]Link, len(nodeRacks))
	flat := make([]Link, len(nodeRacks)*len(storageRacks))
	for i, nr := range nodeRacks {
		row := flat[i*len(storageRacks) : (i+1)*len(storageRacks) : (i+1)*len(storageRacks)]
		for s, sr := range storageRacks {
			row[s] = t.CrossRack
			if nr != "" && nr == sr {
				row[s] = t.SameRack
			}
		}
		out[i] = row
	}
	return out
}
