package energy

import (
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/service/api"
)

// Energy accounting (docs/ENERGY.md, "What energy placement saved"): every
// ready node's energy is integrated from its power readings (recordPower,
// measured) and, while it has none — from its first second when it has
// never sent one, after powerMaxGap without one otherwise — from its
// class's power model at its busy GPUs (accountModelled, modelled),
// each split by the node's load state at the time. The jobs on the node
// get their share either way (attributeEnergy for readings; for the model
// each busy GPU's own draw plus its share of the base power), and
// record.EnergyModelledKWh keeps the modelled part. The nodes' accounts
// are stored under energyPrefix+node with the power samples.
const energyPrefix = "energy/nodes/"

// The load states of the energy split ("idle" and the seed's 1, 2, 3).
var energyStates = []string{"idle", "1", "2", "3"}

// nodeEnergy is one node's energy account.
type nodeEnergy struct {
	Since     time.Time          `json:"since"`
	MeasuredJ float64            `json:"measured_j"`
	ModelledJ float64            `json:"modelled_j"`
	StatesJ   map[string]float64 `json:"states_j"`
	// modelAt is how far the model has been integrated (or the latest
	// reading, while readings come); readyAt when the node became ready
	// (zero while it is down).
	modelAt, readyAt time.Time
	dirty            bool
	savedAt          time.Time
}

// energyRecord is a node's account as the store keeps it.
type energyRecord struct {
	Node string `json:"node"`
	nodeEnergy
}

// loadEnergy reads the stored accounts.
func (l *Live) loadEnergy(ctx context.Context) error {
	return loadNodes(ctx, l, energyPrefix, "energy accounts", "stored energy account is unreadable; dropped",
		func(r *energyRecord) string { return r.Node },
		func(r *energyRecord) {
			ne := r.nodeEnergy
			if ne.StatesJ == nil {
				ne.StatesJ = map[string]float64{}
			}
			l.energy[r.Node] = &ne
		})
}

// account returns node name's account, opening it at now.
func (l *Live) account(name string, now time.Time) *nodeEnergy {
	ne := l.energy[name]
	if ne == nil {
		ne = &nodeEnergy{Since: now.UTC(), StatesJ: map[string]float64{}, savedAt: now}
		l.energy[name] = ne
	}
	return ne
}

// addEnergy adds joules drawn by node n with busy GPUs busy to its
// account.
func (l *Live) addEnergy(w World, jobs []JobOn, n *Node, joules float64, measured bool, busy int, now time.Time) {
	if !(joules > 0) || math.IsInf(joules, 0) {
		return
	}
	ne := l.account(n.Name, now)
	if measured {
		ne.MeasuredJ += joules
	} else {
		ne.ModelledJ += joules
	}
	ne.StatesJ[l.nodeStateName(w, jobs, n, busy)] += joules
	ne.dirty = true
}

// nodeStateName is the load state of node n with busy GPUs busy, for the
// energy split: "idle", or the state under the thresholds of its jobs'
// algorithm type (the default type when they differ); jobs are the jobs on
// it.
func (l *Live) nodeStateName(w World, jobs []JobOn, n *Node, busy int) string {
	if busy <= 0 {
		return "idle"
	}
	_, idx := w.Cluster()
	i, ok := idx[n.Name]
	if !ok {
		return "idle"
	}
	f := nodeFamily(jobs)
	if f == "" {
		f = placer.DefaultFamily
	}
	if st := l.LoadState(w, i, busy, f); st > 0 {
		return strconv.Itoa(st)
	}
	return "1"
}

// readingEnergy is a node's energy between two readings (trapezoid rule):
// from its node readings when both have one, else from the GPU readings
// both have.
func readingEnergy(prev, cur *api.PowerReading, sec float64) float64 {
	if prev.NodeW > 0 && cur.NodeW > 0 {
		return (prev.NodeW + cur.NodeW) / 2 * sec
	}
	before := make(map[int]float64, len(prev.GPUs))
	for _, g := range prev.GPUs {
		before[g.Index] = g.Watts
	}
	sum := 0.0
	for _, g := range cur.GPUs {
		if w, ok := before[g.Index]; ok {
			sum += (w + g.Watts) / 2 * sec
		}
	}
	return sum
}

// AccountModelled integrates the power model of every ready node without
// readings up to now, giving the jobs on it their share: a node whose
// status reports carry no reading and never did (node.unmetered) from the
// time it became ready, so that short jobs on it are accounted before they
// end; any other node once it has had no reading for powerMaxGap, from its
// latest reading, or from the time it became ready, on. Shells call
// it before busy GPUs change (a round, a batch of agent reports).
func (l *Live) AccountModelled(w World, now time.Time) {
	for _, name := range w.NodeNames() {
		n := node(w, name)
		if !n.Ready {
			if ne := l.energy[name]; ne != nil {
				ne.modelAt, ne.readyAt = time.Time{}, time.Time{}
			}
			continue
		}
		ne := l.account(name, now)
		if ne.readyAt.IsZero() {
			ne.readyAt = now
		}
		ref, read := ne.readyAt, false
		if np := l.power[name]; np != nil && np.last != nil {
			ref, read = later(np.last.At, ref), true
		}
		if (read || !n.Unmetered) && now.Sub(ref) <= powerMaxGap {
			ne.modelAt = ref // readings come, or may still: the model waits
			continue
		}
		from := later(ne.modelAt, ref)
		ne.modelAt = now
		if now.After(from) {
			l.modelInterval(w, n, now.Sub(from).Seconds(), now)
		}
	}
}

// modelInterval accounts sec seconds of node n's modelled draw at its
// current busy GPUs.
func (l *Live) modelInterval(w World, n *Node, sec float64, now time.Time) {
	c := l.classOf(n)
	busy := w.UsedGPUs(n.Name)
	watts, ok := c.modelWatts(busy)
	if !ok {
		return
	}
	jobs := w.JobsOn(n.Name)
	l.addEnergy(w, jobs, n, watts*sec, false, busy, now)
	perGPU := c.gpu.BusyWatts(1)
	base := c.node.BaseW / float64(c.gpus)
	for _, j := range jobs {
		w.Charge(j.ID, float64(len(j.Devs))*(perGPU+base)*sec, true, 0, now)
	}
}

// tickEnergy writes the accounts that changed, each at most every
// powerSaveEvery (all with force).
func (l *Live) tickEnergy(now time.Time, force bool) {
	l.saveModel(now, force)
	l.saveNodes(now, force, energyPrefix, "energy accounts", slices.Sorted(maps.Keys(l.energy)),
		func(name string) (bool, time.Time, any) {
			ne := l.energy[name]
			return ne.dirty, ne.savedAt, energyRecord{Node: name, nodeEnergy: *ne}
		},
		func(name string) { l.energy[name].dirty, l.energy[name].savedAt = false, now })
}

// Tick runs the live seed 002 work of the shell's periodic tick: idle
// nodes, the modelled energy and the accounts' writes.
func (l *Live) Tick(w World) {
	now := l.now()
	for _, d := range l.liveDevices(w) {
		if first, ok := l.seen[d.name]; ok && now.Sub(first) < l.measureGrace()+2*l.round {
			l.dirty = true // its grace ends: the network changes
		}
	}
	l.tickIdle(w, now)
	l.AccountModelled(w, now)
	l.Integrate(w, now)
	l.tickEnergy(now, false)
}
