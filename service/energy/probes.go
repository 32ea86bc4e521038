package energy

import (
	"slices"
	"sort"
	"time"

	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/service/api"
)

// Measured distance (docs/ENERGY.md, "Measured distance"; seed 002, step
// 2): the storage devices are the cluster file's and, for a data endpoint
// that none of them has, the endpoint itself. Every ready node probes, for
// each device with an endpoint, the address by which it reaches it (its
// entry's link endpoint, else the device's interfaces' endpoints) while
// the device is declared or an active job names it; a node's distance to
// a device is the median of its latest Config.RTTWindow successful
// probes (the lowest over the addresses it probes), its declared link's
// latency until it has one, and the device is unreachable from it when the
// latest probe of every address failed. While a device is new
// (measureGrace since the server first had it probed) a node that has not
// probed it yet counts as unreachable too, so that a job waits for the
// first measurements instead of being placed blind; after the grace such a
// node has the declared link.

// measureGrace is how long a new device waits for its first probes.
func (l *Live) measureGrace() time.Duration {
	return 3*l.heartbeat + 2*time.Second
}

// measuring reports whether device d is new: within its grace.
func (l *Live) measuring(d liveDevice) bool {
	first, ok := l.seen[d.name]
	return ok && l.now().Sub(first) < l.measureGrace()
}

// rttRing is a node's probes of one address.
type rttRing struct {
	ok      []float64 // latest successful RTTs in ms, oldest first
	samples int       // successful probes ever
	last    api.ProbeResult
}

// median returns the median of the ring's successes; false without any.
func (r *rttRing) median() (float64, bool) {
	if len(r.ok) == 0 {
		return 0, false
	}
	v := slices.Clone(r.ok)
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2], true
	}
	return (v[n/2-1] + v[n/2]) / 2, true
}

// reachable reports whether the latest probe succeeded.
func (r *rttRing) reachable() bool { return r.last.Error == "" }

// liveDevice is a storage device the nodes may probe.
type liveDevice struct {
	name string
	// index in the cluster file's storage list, -1 for a job's endpoint.
	declared  int
	endpoints []string
}

// liveDevices returns the devices: the cluster file's, then the data
// endpoints of active jobs that none of them has, sorted (cached until a
// job with a data endpoint comes or goes).
func (l *Live) liveDevices(w World) []liveDevice {
	if !l.devsStale {
		return l.devs
	}
	l.devsStale = false
	var out []liveDevice
	for i, d := range l.devices {
		out = append(out, liveDevice{name: d.name, declared: i, endpoints: d.endpoints})
	}
	seen := map[string]bool{}
	_, endpoints := w.Active()
	for _, ep := range endpoints {
		if ep == "" || seen[ep] || l.declaredDevice(ep) >= 0 {
			continue
		}
		seen[ep] = true
		out = append(out, liveDevice{name: ep, declared: -1, endpoints: []string{ep}})
	}
	slices.SortStableFunc(out[len(l.devices):], func(a, b liveDevice) int {
		if a.name < b.name {
			return -1
		}
		return 1
	})
	for _, d := range out {
		if _, ok := l.seen[d.name]; !ok && len(d.endpoints) > 0 {
			l.seen[d.name] = l.now()
		}
	}
	l.devs = out
	return out
}

// declaredDevice returns the index of the cluster file's device that has
// endpoint ep (an interface's, or a node's link to it), -1 if none.
func (l *Live) declaredDevice(ep string) int {
	for i, d := range l.devices {
		if slices.Contains(d.endpoints, ep) {
			return i
		}
	}
	for _, dn := range l.declared {
		for i, a := range dn.addr {
			if a == ep {
				return i
			}
		}
	}
	return -1
}

// DeviceName is the storage device of a job's data endpoint ("" for
// none).
func (l *Live) DeviceName(ep string) string {
	if ep == "" {
		return ""
	}
	if i := l.declaredDevice(ep); i >= 0 {
		return l.devices[i].name
	}
	return ep
}

// addrs returns the addresses by which node name reaches device d.
func (l *Live) addrs(name string, d liveDevice) []string {
	if dn := l.declared[name]; dn != nil && d.declared >= 0 && dn.addr[d.declared] != "" {
		return []string{dn.addr[d.declared]}
	}
	return d.endpoints
}

// ProbeList returns the addresses node name probes, sorted.
func (l *Live) ProbeList(w World, name string) []string {
	var out []string
	for _, d := range l.liveDevices(w) {
		for _, a := range l.addrs(name, d) {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Probes takes the probe results of node name's status report: those
// of addresses it probes go into their rings; a change of a median or of
// reachability rebuilds the energy placer's network.
func (l *Live) Probes(w World, name string, results []api.ProbeResult) {
	if len(results) == 0 {
		return
	}
	mine := l.ProbeList(w, name)
	rings := l.rtt[name]
	if rings == nil {
		rings = map[string]*rttRing{}
		l.rtt[name] = rings
	}
	now := l.now()
	for _, r := range results {
		if !slices.Contains(mine, r.Endpoint) || r.RTTMs < 0 || r.RTTMs > 1e7 {
			continue
		}
		r.At = minTime(r.At, now)
		ring := rings[r.Endpoint]
		if ring == nil {
			ring = &rttRing{}
			rings[r.Endpoint] = ring
		}
		before, _ := ring.median()
		wasUp := ring.reachable() && ring.samples > 0
		ring.last = r
		if r.Error == "" {
			ring.ok = append(ring.ok, r.RTTMs)
			ring.samples++
			if over := len(ring.ok) - l.cfg.RTTWindow; over > 0 {
				ring.ok = slices.Delete(ring.ok, 0, over)
			}
		}
		after, _ := ring.median()
		if after != before || (ring.reachable() && ring.samples > 0) != wasUp {
			l.dirty = true
		}
	}
}

// link returns node name's link to device d: its measured distance when it
// has one, else the declared link (the cluster file's for its nodes, the
// rack topology's cross-rack link otherwise), unreachable when the latest
// probe of every address it probes failed.
func (l *Live) link(name string, d liveDevice) network.Link {
	lk := network.DefaultTopology().CrossRack
	if dn := l.declared[name]; dn != nil && d.declared >= 0 && d.declared < len(dn.links) {
		lk = dn.links[d.declared]
	}
	rings := l.rtt[name]
	best, measured, failed, probed := 0.0, false, 0, 0
	for _, a := range l.addrs(name, d) {
		r := rings[a]
		if r == nil {
			continue
		}
		probed++
		if !r.reachable() {
			failed++
		}
		if m, ok := r.median(); ok && (!measured || m < best) {
			best, measured = m, true
		}
	}
	if measured {
		lk.LatencyMs = best
	}
	lk.Unreachable = (probed > 0 && failed == probed) || (probed == 0 && l.measuring(d))
	return lk
}

// nodeRTTs returns node name's measured distances, for its view.
func (l *Live) nodeRTTs(w World, name string) []api.EndpointRTT {
	var out []api.EndpointRTT
	for _, d := range l.liveDevices(w) {
		for _, a := range l.addrs(name, d) {
			r := l.rtt[name][a]
			if r == nil {
				continue
			}
			m, _ := r.median()
			out = append(out, api.EndpointRTT{Storage: d.name, Endpoint: a, RTTMs: m, Samples: min(r.samples, len(r.ok)),
				Reachable: r.reachable(), Error: r.last.Error, At: r.last.At.UTC()})
		}
	}
	return out
}

// UnreachableReason says why a waiting job whose data endpoint ep no
// ready node reaches waits; "" when some node reaches it or none has
// probed it.
func (l *Live) UnreachableReason(w World, ep string) string {
	dev := l.DeviceName(ep)
	var d liveDevice
	found := false
	for _, x := range l.liveDevices(w) {
		if x.name == dev {
			d, found = x, true
		}
	}
	if !found {
		return ""
	}
	probed, why := false, ""
	for _, name := range w.NodeNames() {
		if n, _ := w.Node(name); !n.Ready {
			continue
		}
		lk := l.link(name, d)
		for _, a := range l.addrs(name, d) {
			if r := l.rtt[name][a]; r != nil {
				probed = true
				if why == "" {
					why = r.last.Error
				}
			}
		}
		if !lk.Unreachable && l.rtt[name] != nil && l.probedAny(name, d) {
			return ""
		}
	}
	if !probed {
		if l.measuring(d) {
			return "waiting for the nodes' first measurements of data endpoint " + ep
		}
		return ""
	}
	return "data endpoint " + ep + " is unreachable from every node (" + why + ")"
}

// probedAny reports whether node name has probed an address of d.
func (l *Live) probedAny(name string, d liveDevice) bool {
	for _, a := range l.addrs(name, d) {
		if l.rtt[name][a] != nil {
			return true
		}
	}
	return false
}
