package energy

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/service/api"
)

// jobEnergyWindow is how long after its end a job's energy counter is
// still exported.
const jobEnergyWindow = time.Hour

// liveDescs are the live seed 002 metrics (docs/SERVER.md, "Metrics").
type liveDescs struct {
	energy, threshold, samples, noise, state, rtt, candidate *prometheus.Desc
}

func newLiveDescs() liveDescs {
	return liveDescs{
		energy: prometheus.NewDesc("gpusched_energy_joules_total",
			"Energy drawn, measured or modelled: a node's series (job=\"\") is all it drew since the server began to account it, a job's (node=\"\") its share.",
			[]string{"node", "job"}, nil),
		threshold: prometheus.NewDesc("gpusched_load_threshold",
			"Load thresholds in use (seed 002) by node class, algorithm type, bound (th1, th2) and source (learned, cluster-file, catalog, none).",
			[]string{"class", "family", "bound", "source"}, nil),
		samples: prometheus.NewDesc("gpusched_calibration_samples",
			"Rows (distinct loads) behind a class's learned thresholds, by class and algorithm type.", []string{"class", "family"}, nil),
		noise: prometheus.NewDesc("gpusched_calibration_noise",
			"Fit quality of learned thresholds: relative scatter of energy per unit of work around the fitted curve.", []string{"class", "family"}, nil),
		state: prometheus.NewDesc("gpusched_node_load_state",
			"A ready node's load state (1, 2, 3) for the default algorithm type.", []string{"node"}, nil),
		rtt: prometheus.NewDesc("gpusched_data_endpoint_rtt_seconds",
			"Median measured round-trip time of a node to a data endpoint.", []string{"node", "storage", "endpoint"}, nil),
		candidate: prometheus.NewDesc("gpusched_node_power_down_candidate",
			"1 when a node has been idle long enough to be a power-down candidate (--suspend-idle).", []string{"node"}, nil),
	}
}

// JobUse is a job's energy as the metrics export it: a job's counter is
// exported while it is active and for jobEnergyWindow after its end.
type JobUse struct {
	ID         string
	KWh        float64
	FinishedAt *time.Time
}

// Collector returns the collector of the power readings and the live
// seed 002 metrics (docs/SERVER.md, "Metrics"): it takes mu (the lock that
// serializes l and w) to read them, the jobs' energy too (World.Jobs).
func (l *Live) Collector(mu sync.Locker, w World) prometheus.Collector {
	return &collector{l: l, mu: mu, w: w}
}

// collector is Live.Collector's.
type collector struct {
	l  *Live
	mu sync.Locker
	w  World
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	g, n := powerDescs()
	d := newLiveDescs()
	for _, x := range []*prometheus.Desc{g, n, d.energy, d.threshold, d.samples, d.noise, d.state, d.rtt, d.candidate} {
		ch <- x
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	out := c.l.powerMetrics(c.w)
	out = append(out, c.l.liveMetrics(c.w, jobUses(c.w.Jobs()))...)
	c.mu.Unlock()
	for _, m := range out {
		ch <- m
	}
}

// liveMetrics returns the live seed 002 metrics.
func (l *Live) liveMetrics(w World, jobs []JobUse) []prometheus.Metric {
	d := newLiveDescs()
	var out []prometheus.Metric
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...))
	}
	now := l.now()
	for _, name := range slices.Sorted(maps.Keys(l.energy)) {
		ne := l.energy[name]
		out = append(out, prometheus.MustNewConstMetric(d.energy, prometheus.CounterValue, ne.MeasuredJ+ne.ModelledJ, name, ""))
	}
	for _, r := range jobs {
		if r.KWh > 0 && (r.FinishedAt == nil || now.Sub(*r.FinishedAt) < jobEnergyWindow) {
			out = append(out, prometheus.MustNewConstMetric(d.energy, prometheus.CounterValue, r.KWh*JoulesPerKWh, "", r.ID))
		}
	}
	for _, ct := range l.Calibration(w).Classes {
		gauge(d.threshold, ct.Th1, ct.Class, ct.Family, "th1", ct.Source)
		gauge(d.threshold, ct.Th2, ct.Class, ct.Family, "th2", ct.Source)
		if ct.Source == api.ThresholdsLearned {
			gauge(d.samples, float64(ct.Samples), ct.Class, ct.Family)
			gauge(d.noise, ct.Noise, ct.Class, ct.Family)
		}
	}
	_, idx := w.Cluster()
	for _, name := range w.NodeNames() {
		if n, _ := w.Node(name); !n.Ready {
			continue
		}
		if i, ok := idx[name]; ok {
			if st := l.LoadState(w, i, w.UsedGPUs(name), "default"); st > 0 {
				gauge(d.state, float64(st), name)
			}
		}
		for _, r := range l.nodeRTTs(w, name) {
			if r.Samples > 0 {
				gauge(d.rtt, r.RTTMs/1000, name, r.Storage, r.Endpoint)
			}
		}
		if l.cfg.SuspendIdle {
			v := 0.0
			if st := l.idle[name]; st != nil && st.candidate {
				v = 1
			}
			gauge(d.candidate, v, name)
		}
	}
	return out
}
