package energy

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/service/api"
)

// Seed 002 on live machines (docs/ENERGY.md, "Live"): every node belongs
// to a class (its cluster-file entry, else its GPU type and count) whose
// load thresholds are learned from the power samples of its nodes
// (learn.go), defaulting to those of its power model; agents measure their
// distance to the data endpoints jobs name (probes.go); the energy placer
// is rebuilt from both (liveplacer.go); jobs it holds back are paused
// (pause.go); idle nodes may be reported for power-down (suspend.go); and
// the nodes' and jobs' energy is accounted, measured or modelled
// (energy.go), for the report (energyreport.go).

// liveState is the live seed 002 state.
type liveState struct {
	// declared are the cluster file's nodes by name; devices its storage
	// devices, in order.
	declared map[string]*declaredNode
	devices  []declaredDevice
	// contention: the cluster file declares contention, so the power
	// models keep theirs (as gpusched sim applies it).
	contention bool
	// classes are the node classes met so far, by name; byNode caches
	// each node's.
	classes map[string]*nodeClass
	byNode  map[string]*nodeClass
	// learned holds the learned thresholds (learn.go).
	learned map[learnKey]*learnState
	// rtt holds the probes of each node by address (probes.go); seen
	// when each device was first probed for (its measuring grace).
	rtt  map[string]map[string]*rttRing
	seen map[string]time.Time
	// devs caches liveDevices until a job with a data endpoint comes or
	// goes (devsStale).
	devs      []liveDevice
	devsStale bool
	// energy holds each node's energy account (energy.go).
	energy map[string]*nodeEnergy
	// idle holds each node's idleness (suspend.go).
	idle map[string]*idleState
	// in are the energy placer's inputs for the current cluster, rebuilt
	// when dirty (liveplacer.go); placer is the engine's placer when it
	// is "energy".
	in     energyInputs
	placer *livePlacer
	dirty  bool
	// hooks counts the suspend hook's runs (for tests and metrics).
	hooks int
	// model is the modelled energy of what ran (modelled.go).
	model modelAccount
}

// declaredNode is a node of the cluster file.
type declaredNode struct {
	class   string // its nodes entry's name
	gpuType string
	gpus    int
	node    power.NodePower
	gpu     power.GPUPower
	// hasPower: the file (or the catalog) gives its GPU type's power.
	hasPower bool
	// links are its declared links to the devices (the rack topology's
	// with the entry's links applied); addr the endpoints by which it
	// reaches them, by device index ("" for the device's own).
	links []network.Link
	addr  []string
}

// declaredDevice is a storage device of the cluster file: its name and
// the endpoints of its interfaces.
type declaredDevice struct {
	name      string
	endpoints []string
}

// nodeClass is a class of identical nodes: one power model, one GPU count,
// one set of thresholds.
type nodeClass struct {
	name string
	// typ is its nodes' GPU type.
	typ string
	// source is where its default thresholds come from:
	// api.ThresholdsClusterFile, api.ThresholdsCatalog or
	// api.ThresholdsNone.
	source   string
	node     power.NodePower
	gpu      power.GPUPower
	gpus     int
	hasPower bool
	// def and level are the default thresholds and the stable level of
	// the power model (config.ModelThresholds), computed once.
	def      placer.LoadThresholds
	level    float64
	computed bool
}

// readCluster starts the state and reads the cluster file of the
// configuration, if any.
func (l *Live) readCluster() error {
	l.liveState = liveState{declared: map[string]*declaredNode{}, classes: map[string]*nodeClass{}, byNode: map[string]*nodeClass{},
		learned: map[learnKey]*learnState{}, rtt: map[string]map[string]*rttRing{}, seen: map[string]time.Time{},
		energy: map[string]*nodeEnergy{}, idle: map[string]*idleState{}, dirty: true, devsStale: true}
	f := l.cfg.Cluster
	if f == nil {
		return nil
	}
	name := l.cfg.ClusterName
	c, err := f.Cluster(name)
	if err != nil {
		return err
	}
	pw, _, err := f.PartialPower(name, c)
	if err != nil {
		return err
	}
	net, err := f.NetworkModel(name, c)
	if err != nil {
		return err
	}
	l.contention = f.DeclaresContention()
	for _, st := range f.Storage {
		d := declaredDevice{name: st.Name}
		for _, in := range st.Interfaces {
			if in.Endpoint != "" {
				d.endpoints = append(d.endpoints, in.Endpoint)
			}
		}
		l.devices = append(l.devices, d)
	}
	entry, classes := f.NodeEntries()
	for i, n := range c.Nodes {
		g := pw.Types[n.Type]
		d := &declaredNode{class: classes[i], gpuType: c.Types[n.Type].Name, gpus: n.GPUs, node: pw.Nodes[i], gpu: g,
			hasPower: g.Validate() == nil && g.MaxW > 0, addr: make([]string, len(f.Storage))}
		for s := range f.Storage {
			if net != nil {
				d.links = append(d.links, net.Link(i, s))
			}
		}
		for _, lk := range f.Nodes[entry[i]].Links {
			for s, st := range f.Storage {
				if st.Name == lk.Storage {
					d.addr[s] = lk.Endpoint
				}
			}
		}
		l.declared[n.Name] = d
	}
	return nil
}

// classOf returns node n's class, creating it when it is new: its cluster
// file entry when the file declares a node of that name with n's GPU type
// and count, else "TYPExGPUS" with the catalog's power figures for the
// type.
func (l *Live) classOf(n *Node) *nodeClass {
	if n == nil || len(n.GPUs) == 0 {
		return nil
	}
	if c := l.byNode[n.Name]; c != nil && c.typ == n.Type && c.gpus == len(n.GPUs) {
		return c
	}
	c := l.newClass(n)
	l.byNode[n.Name] = c
	return c
}

// newClass returns the class of node n, creating it when it is new.
func (l *Live) newClass(n *Node) *nodeClass {
	name, src := fmt.Sprintf("%sx%d", n.Type, len(n.GPUs)), api.ThresholdsCatalog
	d := l.declared[n.Name]
	if d != nil && d.gpuType == n.Type && d.gpus == len(n.GPUs) {
		name, src = d.class, api.ThresholdsClusterFile
	} else {
		d = nil
	}
	if c := l.classes[name]; c != nil {
		return c
	}
	c := &nodeClass{name: name, typ: n.Type, source: src, gpus: len(n.GPUs)}
	if d != nil {
		c.node, c.gpu, c.hasPower = d.node, d.gpu, d.hasPower
	} else {
		c.node = power.DefaultNode()
		c.gpu, c.hasPower = power.Lookup(n.Type)
	}
	if !l.contention {
		c.node.Contention = power.Contention{Knee: 1}
	}
	c.node.Sleeps = false // a node that is on; power-down is the suspend hook's
	if !c.hasPower {
		c.source = api.ThresholdsNone
	}
	l.classes[name] = c
	return c
}

// defaults returns the class's default thresholds and stable level: its
// power model's calibration, or 1 and 1 (always state 1) without power
// figures or when the model cannot be calibrated.
func (c *nodeClass) defaults() (placer.LoadThresholds, float64) {
	if !c.computed {
		c.computed = true
		c.def = placer.LoadThresholds{Th1: 1, Th2: 1}
		if c.hasPower {
			th, level, err := config.ModelThresholds(c.node, c.gpu, power.DefaultWorkload(), c.gpus)
			if err == nil {
				c.def, c.level = th, level
			} else {
				c.source = api.ThresholdsNone
			}
		}
	}
	return c.def, c.level
}

// modelWatts is the power model's draw of a node of class c with busy
// GPUs busy; false without power figures.
func (c *nodeClass) modelWatts(busy int) (float64, bool) {
	if c == nil || !c.hasPower {
		return 0, false
	}
	return power.NodeWatts(c.node, c.gpu, busy, c.gpus, power.DefaultUtil), true
}

// since returns the later of two times (zero counts as the earliest).
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// NoteJob rebuilds the energy placer's inputs before the next round
// when a new job (of model, with data endpoint ep) brings what they lack:
// a data endpoint (a device to probe) or an algorithm type the table has
// no column for.
func (l *Live) NoteJob(model, ep string) {
	t := l.in.table
	if ep != "" {
		l.dirty, l.devsStale = true, true
		return
	}
	if t == nil {
		l.dirty = true
		return
	}
	if _, ok := t.Families[placer.Family(model)]; !ok {
		l.dirty = true
	}
}

// NoteEndpointGone rebuilds the inputs before the next round after a job
// with a data endpoint ended: its endpoint may no longer be probed.
func (l *Live) NoteEndpointGone() { l.dirty, l.devsStale = true, true }

// NodeView returns node name's seed 002 view; nil without a class. used
// is its busy GPUs.
func (l *Live) NodeView(w World, name string, used int) *api.NodeEnergy {
	n := node(w, name)
	c := l.classOf(n)
	if c == nil {
		return nil
	}
	v := &api.NodeEnergy{Class: c.name, RTTs: l.nodeRTTs(w, name)}
	families := []string{placer.DefaultFamily}
	for k, ls := range l.learned {
		if k.class == c.name && k.family != placer.DefaultFamily && (ls.ok || ls.err != "") {
			families = append(families, k.family)
		}
	}
	slices.Sort(families[1:])
	for _, f := range families {
		v.Thresholds = append(v.Thresholds, l.thresholdsOf(c, f))
	}
	if _, idx := w.Cluster(); n.Ready {
		if i, ok := idx[name]; ok {
			v.LoadState = l.LoadState(w, i, used, placer.DefaultFamily)
		}
	}
	if ne := l.energy[name]; ne != nil {
		v.EnergyKWh = (ne.MeasuredJ + ne.ModelledJ) / JoulesPerKWh
		v.EnergyModelledKWh = ne.ModelledJ / JoulesPerKWh
	}
	if st := l.idle[name]; st != nil && !st.since.IsZero() {
		v.IdleSince, v.PowerDownCandidate = ptr(st.since.UTC()), st.candidate
	}
	return v
}
