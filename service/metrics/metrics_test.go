package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// gather returns the metrics of reg as "name{label=value} value" lines.
func gather(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out = append(out, fmt.Sprintf("%s{%s} %g", mf.GetName(), strings.Join(labels, ","), v))
		}
	}
	return out
}

// TestGauges: the gauges show the counts at the time of the scrape; a
// state without jobs is 0, and without waiting jobs queue 0 is shown
// empty.
func TestGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	counts := Counts{Jobs: map[api.State]int{api.Running: 2}, Used: map[string]int{"v100": 3}, Total: map[string]int{"v100": 8},
		Nodes: map[api.NodeState]int{api.NodeReady: 1, api.NodeDown: 0}}
	m, err := New(reg, func() Counts { return counts })
	if err != nil {
		t.Fatal(err)
	}
	m.Submissions.Inc()
	got := gather(t, reg)
	for _, want := range []string{"gpusched_gpus{type=v100} 8", "gpusched_gpus_used{type=v100} 3", "gpusched_nodes{state=down} 0",
		"gpusched_nodes{state=ready} 1", "gpusched_queue_length{queue=0} 0", "gpusched_submissions_total{} 1",
		"gpusched_jobs{state=running} 2", "gpusched_jobs{state=queued} 0"} {
		if !slices.Contains(got, want) {
			t.Errorf("metrics lack %q: %q", want, got)
		}
	}
	counts.Queues = map[int]int{1: 4}
	got = gather(t, reg)
	if !slices.Contains(got, "gpusched_queue_length{queue=1} 4") || slices.Contains(got, "gpusched_queue_length{queue=0} 0") {
		t.Errorf("queue lengths after a change: %q", got)
	}
	if _, err := New(reg, func() Counts { return counts }); err == nil {
		t.Error("registering twice: no error")
	}
}

func TestRegistry(t *testing.T) {
	if r, g, err := Registry(nil, nil); err != nil || r == nil || g == nil {
		t.Fatalf("Registry(nil, nil) = %v, %v, %v", r, g, err)
	}
	if _, _, err := Registry(nil, prometheus.NewRegistry()); err == nil {
		t.Error("a Gatherer without its Registerer: no error")
	}
	if _, _, err := Registry(prometheus.WrapRegistererWithPrefix("x_", prometheus.NewRegistry()), nil); err == nil {
		t.Error("a Registerer that is no Gatherer: no error")
	}
	r := prometheus.NewRegistry()
	if reg, g, err := Registry(r, nil); err != nil || reg != r || g != r {
		t.Errorf("Registry(registry, nil) = %v, %v, %v", reg, g, err)
	}
}

// TestCountsOf: the gauges' counts of a job table — jobs by the state
// they show, waiting model jobs by queue, nodes by state, GPUs of ready
// nodes by type (none used without a model).
func TestCountsOf(t *testing.T) {
	tab := jobs.NewTable("")
	add := func(id string, st api.State, queue int, modelled bool) {
		j := &jobs.Job{Rec: ledger.Record{Job: api.Job{ID: id, State: st}}}
		if modelled {
			j.Model = &model.Job{Queue: queue}
		}
		tab.Jobs[id] = j
	}
	add("j1", api.Queued, 0, true)
	add("j2", api.Queued, 1, true)
	add("j3", api.Running, 1, true)
	add("j4", api.Succeeded, 0, false)
	tab.Nodes["n1"] = &nodes.Node{Name: "n1", Type: "v100", Ready: true, GPUs: make([]api.GPU, 4)}
	tab.Nodes["n2"] = &nodes.Node{Name: "n2", Type: "k80", GPUs: make([]api.GPU, 8)}
	n := CountsOf(&tab)
	if n.Jobs[api.Queued] != 2 || n.Jobs[api.Running] != 1 || n.Jobs[api.Succeeded] != 1 || len(n.Jobs) != 3 {
		t.Errorf("jobs %v", n.Jobs)
	}
	if n.Queues[0] != 1 || n.Queues[1] != 1 || len(n.Queues) != 2 {
		t.Errorf("queues %v, want one waiting job in each", n.Queues)
	}
	if n.Nodes[api.NodeReady] != 1 || n.Nodes[api.NodeDown] != 1 || n.Total["v100"] != 4 || len(n.Total) != 1 || n.Used["v100"] != 0 {
		t.Errorf("nodes %v total %v used %v", n.Nodes, n.Total, n.Used)
	}
}
