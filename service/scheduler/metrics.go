package scheduler

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/service/api"
)

// metricSet holds the scheduler's Prometheus metrics. Counters and the
// histogram are updated as things happen; the gauges are computed from the
// scheduler's state at every scrape (stateCollector).
type metricSet struct {
	submissions prometheus.Counter
	round       prometheus.Histogram
}

func newMetrics(s *Scheduler, reg prometheus.Registerer) (*metricSet, error) {
	m := &metricSet{
		submissions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpusched_submissions_total", Help: "Jobs submitted and acknowledged (durable)."}),
		round: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gpusched_schedule_round_seconds",
			Help: "Latency of a scheduling round: engine.Schedule plus applying the plan, including its durable write.",
			// 100 µs .. ~3.3 s
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
	}
	for _, c := range []prometheus.Collector{m.submissions, m.round, &stateCollector{s: s}, s.energy.Collector(&s.mu, world{s})} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: register metrics: %w", err)
		}
	}
	return m, nil
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
type stateCollector struct{ s *Scheduler }

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
	s := c.s
	s.mu.Lock()
	byState := map[api.State]int{}
	queues := map[int]int{}
	for _, j := range s.jobs {
		byState[s.viewState(j)]++
		if j.mj != nil && j.rec.State != api.Running {
			queues[j.mj.Queue]++
		}
	}
	used, total := map[string]int{}, map[string]int{}
	nodes := map[api.NodeState]int{api.NodeReady: 0, api.NodeDown: 0}
	for name, n := range s.nodes {
		if !n.Ready {
			nodes[api.NodeDown]++
			continue
		}
		nodes[api.NodeReady]++
		total[n.Type] += len(n.GPUs)
		used[n.Type] += s.usedGPUs(name)
	}
	s.mu.Unlock()
	for _, st := range api.States() {
		ch <- prometheus.MustNewConstMetric(jobsD, prometheus.GaugeValue, float64(byState[st]), string(st))
	}
	if len(queues) == 0 {
		queues[0] = 0
	}
	for q, n := range queues {
		ch <- prometheus.MustNewConstMetric(queueD, prometheus.GaugeValue, float64(n), strconv.Itoa(q))
	}
	for t, n := range total {
		ch <- prometheus.MustNewConstMetric(totalD, prometheus.GaugeValue, float64(n), t)
		ch <- prometheus.MustNewConstMetric(usedD, prometheus.GaugeValue, float64(used[t]), t)
	}
	for st, n := range nodes {
		ch <- prometheus.MustNewConstMetric(nodesD, prometheus.GaugeValue, float64(n), string(st))
	}
}
