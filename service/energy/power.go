package energy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Power readings (docs/ENERGY.md, "Power readings"; docs/SERVER.md): agents
// send their nodes' power with their status reports; the server shows the
// latest in /metrics, integrates them into each job's energy and keeps a
// bounded ring of (load, power, throughput) samples per node, persisted
// under powerPrefix+node, for gpusched calibrate.
const (
	powerPrefix = "power/"
	// powerRingSize bounds a node's stored samples (the oldest go first).
	powerRingSize = 1024
	// DefaultPowerSampleEvery is the shortest time between two stored
	// samples of a node at the same load unless Config.PowerSampleEvery
	// says otherwise: 1024 samples cover almost three hours.
	DefaultPowerSampleEvery = 10 * time.Second
	// powerSaveEvery bounds how often a node's samples are written.
	powerSaveEvery = 30 * time.Second
	// powerMaxGap is the longest interval between two readings that is
	// integrated into the jobs' energy: a longer one means the node was
	// not heard from, and what ran then is unknown.
	powerMaxGap = 2 * time.Minute
	// maxWatts bounds a plausible reading.
	maxWatts = 1e6
	// JoulesPerKWh converts energy.
	JoulesPerKWh = 3.6e6
)

// PowerSample is one stored sample of a node, in the terms of gpusched
// calibrate: its load (busy GPUs over GPUs), its power draw and the work
// it did per second.
type PowerSample struct {
	At         time.Time `json:"at"`
	Load       float64   `json:"load"`
	PowerW     float64   `json:"power_w"`
	Throughput float64   `json:"throughput"`
	// Family is the algorithm type of the jobs on the node when they all
	// have the same, "" otherwise: the samples thresholds are learned
	// from (learn.go).
	Family string `json:"family,omitempty"`
}

// powerRecord is a node's samples as the store keeps them.
type powerRecord struct {
	Node    string        `json:"node"`
	Samples []PowerSample `json:"samples"`
}

// nodePower is what the accounting knows of one node's power.
type nodePower struct {
	// last is the latest reading (At no later than the scheduler's clock).
	last    *api.PowerReading
	samples []PowerSample // oldest first, at most powerRingSize
	dirty   bool          // samples not yet in the store
	savedAt time.Time
}

// loadPower reads the stored samples of every node.
func (l *Live) loadPower(ctx context.Context) error {
	return loadNodes(ctx, l, powerPrefix, "power samples", "stored power samples are unreadable; dropped",
		func(r *powerRecord) string { return r.Node },
		func(r *powerRecord) { l.power[r.Node] = &nodePower{samples: r.Samples, savedAt: l.now()} })
}

// checkReading reports what is wrong with a reading from node n, "" if
// nothing.
func checkReading(n *Node, r *api.PowerReading) string {
	bad := func(w float64) bool { return math.IsNaN(w) || w < 0 || w > maxWatts }
	if math.IsNaN(r.Load) || r.Load < 0 || r.Load > 1 {
		return fmt.Sprintf("load %v is not in [0, 1]", r.Load)
	}
	if bad(r.NodeW) {
		return fmt.Sprintf("node_w %v is not a plausible number of watts", r.NodeW)
	}
	seen := map[int]bool{}
	for _, g := range r.GPUs {
		switch {
		case n.pos(g.Index) < 0 || seen[g.Index]:
			return fmt.Sprintf("GPU %d is not one of the node's GPUs, or is given twice", g.Index)
		case bad(g.Watts):
			return fmt.Sprintf("GPU %d: %v is not a plausible number of watts", g.Index, g.Watts)
		}
		seen[g.Index] = true
	}
	return ""
}

// Reading takes a reading from node name's status report: it attributes
// the energy since the node's previous reading to the jobs on the node
// and may store a sample. A reading that is not newer than the previous
// one, or is implausible, is ignored (the report itself is not refused:
// it is the node's heartbeat).
func (l *Live) Reading(w World, name string, r *api.PowerReading) {
	if r == nil {
		return
	}
	n := node(w, name)
	if n == nil {
		return
	}
	if why := checkReading(n, r); why != "" {
		l.log.Warn("power reading ignored", "node", n.Name, "why", why)
		return
	}
	now := l.now()
	cur := *r
	cur.GPUs = slices.Clone(r.GPUs)
	if cur.At.IsZero() {
		cur.At = now
	}
	cur.At = minTime(cur.At, now)
	np := l.power[n.Name]
	if np == nil {
		np = &nodePower{savedAt: now}
		l.power[n.Name] = np
	}
	if np.last != nil {
		d := cur.At.Sub(np.last.At)
		if d <= 0 {
			return
		}
		if d <= powerMaxGap {
			jobs := w.JobsOn(n.Name)
			l.attributeEnergy(w, n, jobs, np.last, &cur, d)
			busy := int(math.Round(cur.Load * float64(len(n.GPUs))))
			l.addEnergy(w, jobs, n, readingEnergy(np.last, &cur, d.Seconds()), true, busy, now)
		}
	}
	np.last = &cur
	watts := cur.NodeW
	if watts == 0 {
		for _, g := range cur.GPUs {
			watts += g.Watts
		}
	}
	if (watts > 0 || len(cur.GPUs) > 0) && (len(np.samples) == 0 || np.samples[len(np.samples)-1].Load != cur.Load ||
		cur.At.Sub(np.samples[len(np.samples)-1].At) >= l.sampleEvery) {
		jobs := w.JobsOn(n.Name)
		x := PowerSample{At: cur.At.UTC(), Load: cur.Load, PowerW: watts, Throughput: nodeThroughput(n, jobs, cur.Load),
			Family: nodeFamily(jobs)}
		np.samples = append(np.samples, x)
		if len(np.samples) > powerRingSize {
			np.samples = slices.Delete(np.samples, 0, len(np.samples)-powerRingSize)
		}
		np.dirty = true
		l.noteSample(w, n, x, now)
	}
}

// attributeEnergy splits the energy node n drew in the interval d between
// readings prev and cur among the jobs running on it at cur (trapezoid
// rule): each GPU's energy goes to the job that holds it; the node's
// energy beyond its GPUs' (all of it without GPU readings) is split by
// GPU share, a job getting its GPUs on the node over the node's GPUs (the
// share of idle GPUs goes to no job). Components missing from either
// reading are left out.
func (l *Live) attributeEnergy(w World, n *Node, jobs []JobOn, prev, cur *api.PowerReading, d time.Duration) {
	sec := d.Seconds()
	before := make(map[int]float64, len(prev.GPUs))
	for _, g := range prev.GPUs {
		before[g.Index] = g.Watts
	}
	gpuJ := map[int]float64{}
	sum := 0.0
	for _, g := range cur.GPUs {
		if w, ok := before[g.Index]; ok {
			e := (w + g.Watts) / 2 * sec
			gpuJ[g.Index] = e
			sum += e
		}
	}
	rest := 0.0
	if prev.NodeW > 0 && cur.NodeW > 0 {
		rest = max((prev.NodeW+cur.NodeW)/2*sec-sum, 0)
	}
	if sum == 0 && rest == 0 {
		return
	}
	for _, j := range jobs {
		e := rest * float64(len(j.Devs)) / float64(len(n.GPUs))
		for _, dev := range j.Devs {
			e += gpuJ[dev]
		}
		if e > 0 {
			w.Charge(j.ID, e, false, d, cur.At)
		}
	}
}

// nodeThroughput is the work node n does per second for a sample: the sum
// over the jobs running on it of their measured steps/s (a multi-node
// job's in proportion to its GPUs on the node) when every one of them has
// a measurement, else the node's busy GPUs (load × GPUs).
func nodeThroughput(n *Node, jobs []JobOn, load float64) float64 {
	busy := load * float64(len(n.GPUs))
	sum := 0.0
	for _, j := range jobs {
		if j.Rate <= 0 || j.LiveGPUs == 0 {
			return busy
		}
		sum += j.Rate * float64(len(j.Devs)) / float64(j.LiveGPUs)
	}
	if len(jobs) == 0 {
		return busy
	}
	return sum
}

// tickPower writes the samples of nodes that changed, each at most every
// powerSaveEvery (all of them with force).
func (l *Live) tickPower(now time.Time, force bool) {
	l.saveNodes(now, force, powerPrefix, "power samples", slices.Sorted(maps.Keys(l.power)),
		func(name string) (bool, time.Time, any) {
			np := l.power[name]
			return np.dirty, np.savedAt, powerRecord{Node: name, Samples: np.samples}
		},
		func(name string) { l.power[name].dirty, l.power[name].savedAt = false, now })
}

// loadNodes reads the records stored under prefix, one a node (its key
// prefix + node(r)); one that cannot be read, or that is stored under
// another key, is logged (bad) and dropped. keep takes the others.
func loadNodes[T any](ctx context.Context, l *Live, prefix, what, bad string, node func(*T) string, keep func(*T)) error {
	kvs, _, err := l.store.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("server: load %s: %w", what, err)
	}
	for _, kv := range kvs {
		var r T
		if err := json.Unmarshal(kv.Value, &r); err != nil || prefix+node(&r) != kv.Key {
			l.log.Error(bad, "key", kv.Key, "err", err)
			continue
		}
		keep(&r)
	}
	return nil
}

// saveNodes writes, in one transaction under prefix + name, the record of
// every node of names whose state says it changed, each at most every
// powerSaveEvery (all with force), and marks the written ones saved. A
// failure is logged (what names the records) and tried again at the next
// tick.
func (l *Live) saveNodes(now time.Time, force bool, prefix, what string, names []string,
	state func(name string) (dirty bool, savedAt time.Time, rec any), saved func(name string)) {
	var ops []store.Op
	var written []string
	for _, name := range names {
		dirty, at, rec := state(name)
		if !dirty || (!force && now.Sub(at) < powerSaveEvery) {
			continue
		}
		data, err := json.Marshal(rec)
		if err != nil {
			l.log.Error("encode "+what, "node", name, "err", err)
			continue
		}
		ops = append(ops, store.OpPut(prefix+name, data))
		written = append(written, name)
	}
	if len(ops) == 0 {
		return
	}
	if _, err := l.store.Txn(writeCtx(), ops...); err != nil {
		l.log.Error("cannot store "+what, "err", err)
		return
	}
	for _, name := range written {
		saved(name)
	}
}

// SaveSamples writes the samples of the nodes that changed, each at most
// every 30 s (the shell calls it every tick, with the jobs' progress).
func (l *Live) SaveSamples(now time.Time) { l.tickPower(now, false) }

// Flush writes every node's samples and energy account not yet in the
// store (the shell calls it as it closes).
func (l *Live) Flush() {
	l.tickPower(l.now(), true)
	l.tickEnergy(l.now(), true)
}

// LastReading returns node name's latest power reading (nil: none).
func (l *Live) LastReading(name string) *api.PowerReading {
	if np := l.power[name]; np != nil {
		return np.last
	}
	return nil
}

// calibrationRows turns a node's samples into the rows gpusched calibrate
// reads: loads must increase strictly, so the samples of each load (a
// node's loads are multiples of 1/GPUs) are averaged, sorted by load.
func calibrationRows(samples []PowerSample) []PowerSample {
	type acc struct {
		n           int
		power, thru float64
	}
	byLoad := map[float64]*acc{}
	for _, x := range samples {
		l := math.Round(x.Load*1e4) / 1e4
		a := byLoad[l]
		if a == nil {
			a = &acc{}
			byLoad[l] = a
		}
		a.n++
		a.power += x.PowerW
		a.thru += x.Throughput
	}
	rows := make([]PowerSample, 0, len(byLoad))
	for l, a := range byLoad {
		rows = append(rows, PowerSample{Load: l, PowerW: a.power / float64(a.n), Throughput: a.thru / float64(a.n)})
	}
	slices.SortFunc(rows, func(a, b PowerSample) int { return cmp.Compare(a.Load, b.Load) })
	return rows
}

// Samples returns the stored power samples of node name as the rows
// gpusched calibrate reads (calibrationRows: one per load, by load);
// false when there are none.
func (l *Live) Samples(name string) ([]PowerSample, bool) {
	np := l.power[name]
	if np == nil {
		return calibrationRows(nil), false
	}
	return calibrationRows(slices.Clone(np.samples)), true
}

// powerMetrics returns the latest power readings of the ready nodes.
func (l *Live) powerMetrics(w World) []prometheus.Metric {
	gpuD, nodeD := powerDescs()
	var out []prometheus.Metric
	for name, np := range l.power {
		if n, ok := w.Node(name); !ok || !n.Ready || np.last == nil {
			continue
		}
		for _, g := range np.last.GPUs {
			out = append(out, prometheus.MustNewConstMetric(gpuD, prometheus.GaugeValue, g.Watts, name, strconv.Itoa(g.Index)))
		}
		if np.last.NodeW > 0 {
			out = append(out, prometheus.MustNewConstMetric(nodeD, prometheus.GaugeValue, np.last.NodeW, name))
		}
	}
	return out
}

func powerDescs() (gpu, node *prometheus.Desc) {
	return prometheus.NewDesc("gpusched_gpu_power_watts", "Latest power reading of a GPU (NVML), by node and device index.", []string{"node", "gpu"}, nil),
		prometheus.NewDesc("gpusched_node_power_watts", "Latest power reading of a node (Redfish), by node.", []string{"node"}, nil)
}
