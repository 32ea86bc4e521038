package kube

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metricSet holds the Kubernetes mode's Prometheus metrics: the server's
// families (gpusched_submissions_total, gpusched_schedule_round_seconds,
// gpusched_jobs, gpusched_queue_length, gpusched_gpus_used, gpusched_gpus,
// gpusched_nodes; docs/SERVER.md) and its own: Binding latency and
// outcomes, pod scheduling latency, leadership.
type metricSet struct {
	round       prometheus.Histogram
	bindLatency prometheus.Histogram
	scheduling  prometheus.Histogram
	bindings    *prometheus.CounterVec
	leader      prometheus.Gauge
}

func newMetrics(s *Scheduler, reg prometheus.Registerer) (*metricSet, error) {
	m := &metricSet{
		round: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gpusched_schedule_round_seconds",
			Help:    "Latency of a scheduling round: reading the informers' view, engine.Schedule and applying the plan (the API calls run after it).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		bindLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gpusched_bind_latency_seconds",
			Help:    "Latency of one Binding call to the API server.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		scheduling: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gpusched_pod_scheduling_seconds",
			Help:    "Time from when gpusched first saw a pod to its successful Binding.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 20)}),
		bindings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpusched_bindings_total",
			Help: "Binding calls by result: bound, conflict (the pod was already bound: 0 unless two schedulers bind it), not_found, error."},
			[]string{"result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gpusched_leader",
			Help: "1 while this process holds the leader lease (or runs without leader election), else 0."}),
	}
	cs := []prometheus.Collector{m.round, m.bindLatency, m.scheduling, m.bindings, m.leader, &stateCollector{s}}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("kube: register metrics: %w", err)
		}
	}
	for _, r := range []string{"bound", "conflict", "not_found", "error"} {
		m.bindings.WithLabelValues(r)
	}
	return m, nil
}

func stateDescs() (subs, jobs, queue, used, total, nodes *prometheus.Desc) {
	return prometheus.NewDesc("gpusched_submissions_total", "Jobs seen (sets of gpusched's pods with one job key).", nil, nil),
		prometheus.NewDesc("gpusched_jobs", "Jobs by state (queued, running, preempted: waiting after a preemption).", []string{"state"}, nil),
		prometheus.NewDesc("gpusched_queue_length", "Waiting jobs by the policy's queue (0 is the first; fifo has one).", []string{"queue"}, nil),
		prometheus.NewDesc("gpusched_gpus_used", "GPUs held by gpusched's bound pods on usable nodes, by GPU type.", []string{"type"}, nil),
		prometheus.NewDesc("gpusched_gpus", "Allocatable GPUs of usable nodes (Ready, not cordoned), by GPU type.", []string{"type"}, nil),
		prometheus.NewDesc("gpusched_nodes", "Nodes with nvidia.com/gpu by state (ready: usable; down: not Ready or cordoned).", []string{"state"}, nil)
}

// stateCollector computes the gauges from the world at scrape time.
type stateCollector struct{ s *Scheduler }

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	a, b, d, e, f, g := stateDescs()
	for _, x := range []*prometheus.Desc{a, b, d, e, f, g} {
		ch <- x
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	subsD, jobsD, queueD, usedD, totalD, nodesD := stateDescs()
	w := c.s.w
	w.mu.Lock()
	subs := w.newJobs
	states := map[string]int{"queued": 0, "running": 0, "preempted": 0}
	queues := map[int]int{0: 0}
	for _, j := range w.jobs {
		switch {
		case len(j.pods) == 0 || j.mj == nil:
		case j.running:
			states["running"]++
		default:
			st := "queued"
			if j.mj.Preemptions > 0 {
				st = "preempted"
			}
			states[st]++
			queues[j.mj.Queue]++
		}
	}
	used, total := map[string]int{}, map[string]int{}
	nodes := map[string]int{"ready": 0, "down": 0}
	for _, n := range w.nodes {
		switch {
		case n.gpus == 0:
		case n.usable():
			nodes["ready"]++
			total[n.typ] += n.gpus
		default:
			nodes["down"]++
		}
	}
	for _, p := range w.pods {
		node := p.node
		if node == "" {
			node = w.assumed[p.uid]
		}
		if n := w.nodes[node]; n != nil && n.usable() {
			used[n.typ] += int(p.gpus)
		}
	}
	w.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(subsD, prometheus.CounterValue, float64(subs))
	for st, n := range states {
		ch <- prometheus.MustNewConstMetric(jobsD, prometheus.GaugeValue, float64(n), st)
	}
	for q, n := range queues {
		ch <- prometheus.MustNewConstMetric(queueD, prometheus.GaugeValue, float64(n), strconv.Itoa(q))
	}
	for t, n := range total {
		ch <- prometheus.MustNewConstMetric(totalD, prometheus.GaugeValue, float64(n), t)
		ch <- prometheus.MustNewConstMetric(usedD, prometheus.GaugeValue, float64(used[t]), t)
	}
	for st, n := range nodes {
		ch <- prometheus.MustNewConstMetric(nodesD, prometheus.GaugeValue, float64(n), st)
	}
}
