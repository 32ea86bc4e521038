package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/audit"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// runWith simulates jobs on c with placer pl, the network net and a 30 s
// restart pause, and returns the result and the event log, which it audits.
func runWith(t *testing.T, c *model.Cluster, pl engine.Placer, q engine.QueuePolicy, net *network.Network, jobs []model.JobSpec) (*sim.Result, string) {
	t.Helper()
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(q, pl, nil)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := eventlog.NewWriter(&log)
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, Jobs: jobs,
		RestartOverhead: 30 * model.Second, Network: net, Events: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Check(strings.NewReader(log.String()), "events"); err != nil {
		t.Fatalf("audit: %v\n%s", err, log.String())
	}
	return res, log.String()
}

func TestStagingDelaysStart(t *testing.T) {
	// One storage device; n0 reaches it at 8 Gbit/s, n1 at 4 Gbit/s, both
	// with no latency. 10 GB = 80,000 Mbit: 10 s to n0, 20 s to n1.
	c := cluster(t, "v100", 1, "v100", 1)
	net, err := network.New([]network.Storage{{Name: "s", Interfaces: []network.Interface{{Name: "e", BandwidthGbps: 10, Quality: 1}}}},
		[][]network.Link{{{BandwidthGbps: 8}}, {{BandwidthGbps: 4}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	withData := func(j *job, gb int64) model.JobSpec { s := j.obj(); s.DatasetMB = gb * 1000; return s }
	tests := []struct {
		name string
		jobs []model.JobSpec
		want map[string]float64
	}{
		// A (100 s, 10 GB) on n0: staged 0–10, runs 10–110. B (no data)
		// on n1 runs 0–100.
		{"staging adds to the start", []model.JobSpec{withData(makeJob("A", 0).dur(100), 10), makeJob("B", 0).dur(100).obj()},
			map[string]float64{"A": 110, "B": 100}},
		// C on both nodes waits for the slower one: 20 s, then 100 s.
		{"slowest node of the allocation", []model.JobSpec{withData(makeJob("C", 0).gpus(2).dur(100), 10)},
			map[string]float64{"C": 120}},
		// Without data, nothing to stage.
		{"no dataset", []model.JobSpec{makeJob("D", 0).dur(100).obj()}, map[string]float64{"D": 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runWith(t, c, placer.Pack{}, policy.FIFO{}, net, tc.jobs)
			got := finishes(res)
			for id, w := range tc.want {
				if got[id] != w {
					t.Errorf("%s finished at %v, want %v", id, got[id], w)
				}
			}
		})
	}
	// No network: the same job runs 0–100.
	res, _ := runWith(t, c, placer.Pack{}, policy.FIFO{}, nil, []model.JobSpec{withData(makeJob("A", 0).dur(100), 10)})
	if got := finishes(res)["A"]; got != 100 {
		t.Errorf("without a network A finished at %v, want 100", got)
	}
}

func TestPauseEvent(t *testing.T) {
	// One 4-GPU node with th1 0.25, th2 0.5: 0–1 busy GPUs are state 1,
	// 2 state 2, 3–4 state 3. J1 (3 GPUs, 0–100) puts it in state 3, so
	// J2 (at 1) and J3 (at 2) are paused although a GPU is free (seed 002,
	// claim 8) — each logged once, though J2 is paused again at 2. J1's
	// finish at 100 brings the node back to state 1: J2 and J3 start.
	c := cluster(t, "v100", 4)
	table := &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: []int{0},
		Th: [][]placer.LoadThresholds{{{Th1: 0.25, Th2: 0.5}}}}
	e, err := placer.NewEnergy(c, table, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{makeJob("J1", 0).gpus(3).dur(100).obj(), makeJob("J2", 1).dur(10).obj(), makeJob("J3", 2).dur(10).obj()}
	res, log := runWith(t, c, e, policy.FIFO{Backfill: true}, nil, jobs)
	for _, want := range []string{
		`{"t":1,"event":"pause","job":"J2","reason":"best node n0 is in load state 3"}`,
		`{"t":2,"event":"pause","job":"J3","reason":"best node n0 is in load state 3"}`,
		`{"t":100,"event":"start","job":"J2","alloc":["n0/0"]}`,
		`{"t":100,"event":"start","job":"J3","alloc":["n0/1"]}`,
	} {
		if !strings.Contains(log, want+"\n") {
			t.Errorf("event log lacks %s:\n%s", want, log)
		}
	}
	if n := strings.Count(log, `"event":"pause"`); n != 2 {
		t.Errorf("%d pause events, want 2:\n%s", n, log)
	}
	if got := finishes(res); got["J2"] != 110 || got["J3"] != 110 {
		t.Errorf("finishes %v, want J2 and J3 at 110", got)
	}
}
