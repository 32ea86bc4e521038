package metrics

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
)

// Set holds the scheduler's Prometheus metrics updated as things happen.
type Set struct {
	// Submissions counts the jobs submitted and acknowledged (durable).
	Submissions prometheus.Counter
	// Round observes the latency of each scheduling round.
	Round prometheus.Histogram
}

// Counts are the scheduler's state as the gauges show it.
type Counts struct {
	// Jobs counts the jobs by state (as the API shows it).
	Jobs map[api.State]int
	// Queues counts the waiting jobs by the policy's queue.
	Queues map[int]int
	// Used and Total count the GPUs held by jobs and those of ready
	// nodes, by GPU type.
	Used, Total map[string]int
	// Nodes counts the nodes by state.
	Nodes map[api.NodeState]int
}

// New registers on reg the Set, the gauges of counts (called at every
// scrape) and the extra collectors.
func New(reg prometheus.Registerer, counts func() Counts, extra ...prometheus.Collector) (*Set, error) {
	m := &Set{
		Submissions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpusched_submissions_total", Help: "Jobs submitted and acknowledged (durable)."}),
		Round: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gpusched_schedule_round_seconds",
			Help: "Latency of a scheduling round: engine.Schedule plus applying the plan, including its durable write.",
			// 100 µs .. ~3.3 s
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
	}
	for _, c := range append([]prometheus.Collector{m.Submissions, m.Round, &stateCollector{counts: counts}}, extra...) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: register metrics: %w", err)
		}
	}
	return m, nil
}

// Registry returns the registry of a configuration's Registerer and
// Gatherer: both nil, a fresh registry; a Registerer alone must also be a
// prometheus.Gatherer (a *prometheus.Registry).
func Registry(reg prometheus.Registerer, gat prometheus.Gatherer) (prometheus.Registerer, prometheus.Gatherer, error) {
	switch {
	case reg == nil && gat == nil:
		r := prometheus.NewRegistry()
		return r, r, nil
	case reg == nil:
		return nil, nil, errors.New("server: a metrics Gatherer needs its Registerer")
	case gat == nil:
		g, ok := reg.(prometheus.Gatherer)
		if !ok {
			return nil, nil, errors.New("server: the metrics Registerer is no Gatherer; give Config.Gatherer")
		}
		return reg, g, nil
	}
	return reg, gat, nil
}

// Descriptions of the gauges computed at scrape time.
func stateDescs() (jobs, queue, used, total, nodes *prometheus.Desc) {
	return prometheus.NewDesc("gpusched_jobs", "Jobs by state.", []string{"state"}, nil),
		prometheus.NewDesc("gpusched_queue_length", "Waiting jobs (queued or preempted) by the policy's queue (0 is the first; fifo has one).", []string{"queue"}, nil),
		prometheus.NewDesc("gpusched_gpus_used", "GPUs held by jobs, by GPU type.", []string{"type"}, nil),
		prometheus.NewDesc("gpusched_gpus", "GPUs of ready nodes, by GPU type.", []string{"type"}, nil),
		prometheus.NewDesc("gpusched_nodes", "Nodes by state.", []string{"state"}, nil)
}

// stateCollector reports the gauges from the scheduler's state.
type stateCollector struct{ counts func() Counts }

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	a, b, d, e, f := stateDescs()
	for _, x := range []*prometheus.Desc{a, b, d, e, f} {
		ch <- x
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	jobsD, queueD, usedD, totalD, nodesD := stateDescs()
	n := c.counts()
	for _, st := range api.States() {
		ch <- prometheus.MustNewConstMetric(jobsD, prometheus.GaugeValue, float64(n.Jobs[st]), string(st))
	}
	queues := n.Queues
	if len(queues) == 0 {
		queues = map[int]int{0: 0}
	}
	for q, k := range queues {
		ch <- prometheus.MustNewConstMetric(queueD, prometheus.GaugeValue, float64(k), strconv.Itoa(q))
	}
	for t, k := range n.Total {
		ch <- prometheus.MustNewConstMetric(totalD, prometheus.GaugeValue, float64(k), t)
		ch <- prometheus.MustNewConstMetric(usedD, prometheus.GaugeValue, float64(n.Used[t]), t)
	}
	for st, k := range n.Nodes {
		ch <- prometheus.MustNewConstMetric(nodesD, prometheus.GaugeValue, float64(k), string(st))
	}
}

// CountsOf returns the gauges' counts of the scheduler's job table
// (package jobs); call it with the scheduler's lock held.
func CountsOf(t *jobs.Table) Counts {
	n := Counts{Jobs: map[api.State]int{}, Queues: map[int]int{}, Used: map[string]int{}, Total: map[string]int{},
		Nodes: map[api.NodeState]int{api.NodeReady: 0, api.NodeDown: 0}}
	for _, j := range t.Jobs {
		n.Jobs[t.ViewState(j)]++
		if j.Model != nil && j.Rec.State != api.Running {
			n.Queues[j.Model.Queue]++
		}
	}
	for name, nd := range t.Nodes {
		if !nd.Ready {
			n.Nodes[api.NodeDown]++
			continue
		}
		n.Nodes[api.NodeReady]++
		n.Total[nd.Type] += len(nd.GPUs)
		n.Used[nd.Type] += t.UsedGPUs(name)
	}
	return n
}
