package energy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
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
	// joulesPerKWh converts energy.
	joulesPerKWh = 3.6e6
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

// nodePower is what the scheduler knows of one node's power. Guarded by
// Scheduler.mu.
type nodePower struct {
	// last is the latest reading (At no later than the scheduler's clock).
	last    *api.PowerReading
	samples []PowerSample // oldest first, at most powerRingSize
	dirty   bool          // samples not yet in the store
	savedAt time.Time
}

// loadPower reads the stored samples of every node.
func (l *Live) loadPower(ctx context.Context) error {
	l.power = map[string]*nodePower{}
	kvs, _, err := l.store.List(ctx, powerPrefix)
	if err != nil {
		return fmt.Errorf("server: load power samples: %w", err)
	}
	for _, kv := range kvs {
		var r powerRecord
		if err := json.Unmarshal(kv.Value, &r); err != nil || powerPrefix+r.Node != kv.Key {
			l.log.Error("stored power samples are unreadable; dropped", "key", kv.Key, "err", err)
			continue
		}
		l.power[r.Node] = &nodePower{samples: r.Samples, savedAt: l.now()}
	}
	return nil
}

// checkReading reports what is wrong with a reading from node n, "" if
// nothing.
func checkReading(n *node, r *api.PowerReading) string {
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

// recordPower takes a reading from node n's status report: it attributes
// the energy since the node's previous reading to the jobs on the node
// and may store a sample. A reading that is not newer than the previous
// one, or is implausible, is ignored (the report itself is not refused:
// it is the node's heartbeat).
func (l *Live) recordPower(n *node, r *api.PowerReading) {
	if r == nil {
		return
	}
	if why := checkReading(n, r); why != "" {
		l.log.Warn("power reading ignored", "node", n.name, "why", why)
		return
	}
	now := l.now()
	cur := *r
	cur.GPUs = slices.Clone(r.GPUs)
	if cur.At.IsZero() {
		cur.At = now
	}
	cur.At = minTime(cur.At, now)
	np := l.power[n.name]
	if np == nil {
		np = &nodePower{savedAt: now}
		l.power[n.name] = np
	}
	if np.last != nil {
		d := cur.At.Sub(np.last.At)
		if d <= 0 {
			return
		}
		if d <= powerMaxGap {
			s.attributeEnergy(n, np.last, &cur, d)
			busy := int(math.Round(cur.Load * float64(len(n.gpus))))
			s.addEnergy(n, readingEnergy(np.last, &cur, d.Seconds()), true, busy, now)
		}
	}
	np.last = &cur
	w := cur.NodeW
	if w == 0 {
		for _, g := range cur.GPUs {
			w += g.Watts
		}
	}
	if (w > 0 || len(cur.GPUs) > 0) && (len(np.samples) == 0 || np.samples[len(np.samples)-1].Load != cur.Load ||
		cur.At.Sub(np.samples[len(np.samples)-1].At) >= s.cfg.PowerSampleEvery) {
		x := PowerSample{At: cur.At.UTC(), Load: cur.Load, PowerW: w, Throughput: s.nodeThroughput(n, cur.Load),
			Family: s.nodeFamily(n)}
		np.samples = append(np.samples, x)
		if len(np.samples) > powerRingSize {
			np.samples = slices.Delete(np.samples, 0, len(np.samples)-powerRingSize)
		}
		np.dirty = true
		s.noteSample(n, x, now)
	}
}

// attributeEnergy splits the energy node n drew in the interval d between
// readings prev and cur among the jobs running on it at cur (trapezoid
// rule): each GPU's energy goes to the job that holds it; the node's
// energy beyond its GPUs' (all of it without GPU readings) is split by
// GPU share, a job getting its GPUs on the node over the node's GPUs (the
// share of idle GPUs goes to no job). Components missing from either
// reading are left out.
func (l *Live) attributeEnergy(n *node, prev, cur *api.PowerReading, d time.Duration) {
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
	for _, j := range s.active {
		devs := s.jobGPUsOn(&j.rec, n.name)
		if len(devs) == 0 {
			continue
		}
		e := rest * float64(len(devs)) / float64(len(n.gpus))
		for _, dev := range devs {
			e += gpuJ[dev]
		}
		if e > 0 {
			j.rec.EnergyKWh += e / joulesPerKWh
			s.unsaved[j] = true // written with the job's progress (flushProgress)
			s.notePower(j.rec.ID, e, d, cur.At)
		}
	}
}

// jobGPUsOn returns the device indices a running job's live replicas hold
// on node name.
func (l *Live) jobGPUsOn(rec *record, name string) []int {
	if rec.State != api.Running {
		return nil
	}
	var devs []int
	for _, rr := range rec.Replicas {
		if rr.Node == name && !rr.Done {
			devs = append(devs, rr.GPUs...)
		}
	}
	return devs
}

// nodeThroughput is the work node n does per second for a sample: the sum
// over the jobs running on it of their measured steps/s (a multi-node
// job's in proportion to its GPUs on the node) when every one of them has
// a measurement, else the node's busy GPUs (load × GPUs).
func (l *Live) nodeThroughput(n *node, load float64) float64 {
	busy := load * float64(len(n.gpus))
	sum, jobs := 0.0, 0
	for id, j := range s.active {
		devs := s.jobGPUsOn(&j.rec, n.name)
		if len(devs) == 0 {
			continue
		}
		rate, live := s.jobRate(id), j.rec.liveGPUs()
		if rate <= 0 || live == 0 {
			return busy
		}
		sum += rate * float64(len(devs)) / float64(live)
		jobs++
	}
	if jobs == 0 {
		return busy
	}
	return sum
}

// tickPower writes the samples of nodes that changed, each at most every
// powerSaveEvery (all of them with force).
func (l *Live) tickPower(now time.Time, force bool) {
	var ops []store.Op
	var names []string
	for _, name := range slicesSortedKeys(l.power) {
		np := l.power[name]
		if !np.dirty || (!force && now.Sub(np.savedAt) < powerSaveEvery) {
			continue
		}
		data, err := json.Marshal(powerRecord{Node: name, Samples: np.samples})
		if err != nil {
			l.log.Error("encode power samples", "node", name, "err", err)
			continue
		}
		ops = append(ops, store.OpPut(powerPrefix+name, data))
		names = append(names, name)
	}
	if len(ops) == 0 {
		return
	}
	if _, err := l.store.Txn(writeCtx(), ops...); err != nil {
		l.log.Error("cannot store power samples", "err", err) // tried again next tick
		return
	}
	for _, name := range names {
		l.power[name].dirty, l.power[name].savedAt = false, now
	}
}

// flushPower writes every node's samples and energy account not yet in
// the store (on Close).
func (l *Live) flushPower() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tickPower(l.now(), true)
	s.tickEnergy(l.now(), true)
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

// PowerSamples returns the stored power samples of node name as the rows
// gpusched calibrate reads (calibrationRows: one per load, by load);
// ErrNotFound for a node the scheduler neither knows nor has samples of.
func (l *Live) PowerSamples(name string) ([]PowerSample, error) {
	s.mu.Lock()
	np, known := l.power[name], s.nodes[name] != nil
	var samples []PowerSample
	if np != nil {
		samples = slices.Clone(np.samples)
	}
	s.mu.Unlock()
	if !known && np == nil {
		return nil, notFound("no node %q", name)
	}
	return calibrationRows(samples), nil
}

// powerCollector reports the latest power readings of the ready nodes.
type powerCollector struct{ s *Scheduler }

func powerDescs() (gpu, node *prometheus.Desc) {
	return prometheus.NewDesc("gpusched_gpu_power_watts", "Latest power reading of a GPU (NVML), by node and device index.", []string{"node", "gpu"}, nil),
		prometheus.NewDesc("gpusched_node_power_watts", "Latest power reading of a node (Redfish), by node.", []string{"node"}, nil)
}

// Describe implements prometheus.Collector.
func (c *powerCollector) Describe(ch chan<- *prometheus.Desc) {
	g, n := powerDescs()
	ch <- g
	ch <- n
}

// Collect implements prometheus.Collector.
func (c *powerCollector) Collect(ch chan<- prometheus.Metric) {
	gpuD, nodeD := powerDescs()
	s := c.s
	var out []prometheus.Metric
	s.mu.Lock()
	for name, np := range l.power {
		if n := s.nodes[name]; n == nil || !n.ready || np.last == nil {
			continue
		}
		for _, g := range np.last.GPUs {
			out = append(out, prometheus.MustNewConstMetric(gpuD, prometheus.GaugeValue, g.Watts, name, strconv.Itoa(g.Index)))
		}
		if np.last.NodeW > 0 {
			out = append(out, prometheus.MustNewConstMetric(nodeD, prometheus.GaugeValue, np.last.NodeW, name))
		}
	}
	s.mu.Unlock()
	for _, m := range out {
		ch <- m
	}
}
