package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/scaler"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/audit"
	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
)

// testMatrix: job type M runs at 2 steps/s on one V100 and 3 on two; on K80
// it runs at 1 step/s on one GPU and not at all on two (a 0 entry).
const testMatrix = `{
 "v100": {"('M', 1)": {"null": 2.0}, "('M', 2)": {"null": 3.0}},
 "k80":  {"('M', 1)": {"null": 1.0}, "('M', 2)": {"null": 0.0}}
}`

var types = map[string]model.GPUType{
	"v100": {Name: "v100", MemMiB: 16384, TFLOPS: 15.7},
	"k80":  {Name: "k80", MemMiB: 12288, TFLOPS: 4.37},
}

// cluster builds nodes "n0", "n1", ... from (type, GPUs) pairs.
func cluster(t *testing.T, nodes ...any) *model.Cluster {
	t.Helper()
	var ts []model.GPUType
	var ns []model.Node
	for i := 0; i < len(nodes); i += 2 {
		name, gpus := nodes[i].(string), nodes[i+1].(int)
		ti := -1
		for k, x := range ts {
			if x.Name == name {
				ti = k
			}
		}
		if ti < 0 {
			ts, ti = append(ts, types[name]), len(ts)
		}
		ns = append(ns, model.Node{Name: "n" + string(rune('0'+len(ns))), Type: ti, GPUs: gpus})
	}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// job is a fluent builder for test job specs.
type job struct{ s model.JobSpec }

func makeJob(id string, submit float64) *job {
	return &job{model.JobSpec{ID: id, Submit: model.FromSeconds(submit), GPUs: 1, MinGPUs: 1, MaxGPUs: 1}}
}
func (j *job) gpus(n int) *job    { j.s.GPUs, j.s.MinGPUs, j.s.MaxGPUs = n, n, n; return j }
func (j *job) dur(s float64) *job { j.s.Duration = model.FromSeconds(s); return j }
func (j *job) steps(m string, n int64) *job {
	j.s.Model, j.s.Steps = m, n
	return j
}
func (j *job) gpuType(t string) *job { j.s.GPUType = t; return j }
func (j *job) elastic(lo, hi int) *job {
	j.s.MinGPUs, j.s.MaxGPUs, j.s.ReplicaGPUs = lo, hi, 1
	return j
}
func (j *job) obj() model.JobSpec { return j.s }

type scenario struct {
	cluster  *model.Cluster
	policy   engine.QueuePolicy
	overhead float64
	jobs     []model.JobSpec
	scaler   engine.Scaler // nil: none
}

func (sc scenario) run(t *testing.T) (*sim.Result, string) {
	t.Helper()
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, sc.cluster, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(sc.policy, placer.Pack{}, sc.scaler)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := eventlog.NewWriter(&log)
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: sc.cluster, Workload: tab, Jobs: sc.jobs,
		RestartOverhead: model.FromSeconds(sc.overhead), Events: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Check(strings.NewReader(log.String()), "events.jsonl"); err != nil {
		t.Fatalf("the event log fails the audit: %v\n%s", err, log.String())
	}
	return res, log.String()
}

// finishes maps job id to finish time in seconds (-1: never finished).
func finishes(res *sim.Result) map[string]float64 {
	out := map[string]float64{}
	for _, r := range res.Records {
		out[r.ID] = -1
		if r.Completed() {
			out[r.ID] = r.Finish.Seconds()
		}
	}
	return out
}

func TestThreeJobsOneGPU(t *testing.T) {
	// A (100 s) at 0, B (50 s) at 1, C (10 s) at 2, all on one V100.
	jobs := []model.JobSpec{makeJob("A", 0).dur(100).obj(), makeJob("B", 1).dur(50).obj(), makeJob("C", 2).dur(10).obj()}
	tests := []struct {
		name     string
		policy   engine.QueuePolicy
		overhead float64
		want     map[string]float64
		avgJCT   float64
		preempt  int
	}{
		// FIFO: A 0–100, B 100–150, C 150–160. JCT 100, 149, 158.
		{"fifo", policy.FIFO{}, 30, map[string]float64{"A": 100, "B": 150, "C": 160}, (100.0 + 149 + 158) / 3, 0},
		// SRTF, no overhead: B preempts A at 1 (50 < 99), C preempts B at 2
		// (10 < 49); C 2–12, B 12–61, A 61–160. JCT 160, 60, 10.
		{"srtf", &policy.SRTF{}, 0, map[string]float64{"A": 160, "B": 61, "C": 12}, (160.0 + 60 + 10) / 3, 2},
		// SRTF, 30 s restart pause: C 2–12 (first start is free); B restarts
		// at 12, resumes at 42, finishes at 91; A restarts at 91, resumes at
		// 121 with 99 s left, finishes at 220. JCT 220, 90, 10.
		{"srtf-overhead", &policy.SRTF{}, 30, map[string]float64{"A": 220, "B": 91, "C": 12}, (220.0 + 90 + 10) / 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := scenario{cluster(t, "v100", 1), tc.policy, tc.overhead, jobs, nil}.run(t)
			got := finishes(res)
			for id, w := range tc.want {
				if got[id] != w {
					t.Errorf("%s finished at %v, want %v", id, got[id], w)
				}
			}
			s := metrics.Summarize(1, res.Records)
			if d := s.AvgJCT - tc.avgJCT; d > 1e-9 || d < -1e-9 {
				t.Errorf("avg JCT %v, want %v", s.AvgJCT, tc.avgJCT)
			}
			if s.Preemptions != tc.preempt {
				t.Errorf("preemptions %d, want %d", s.Preemptions, tc.preempt)
			}
		})
	}
}

func TestGangWaitsForAllGPUs(t *testing.T) {
	// Two 4-GPU V100 nodes. J1 (3 GPUs) and J2 (2 GPUs) leave 1 + 2 GPUs
	// free; J3 needs 4 and must wait — it never starts on 3 — until J1 ends
	// at 100, then takes n0 whole (best fit: n0 has 4 free, n1 has 2).
	jobs := []model.JobSpec{
		makeJob("J1", 0).gpus(3).dur(100).obj(),
		makeJob("J2", 0).gpus(2).dur(200).obj(),
		makeJob("J3", 1).gpus(4).dur(10).obj(),
	}
	res, log := scenario{cluster(t, "v100", 4, "v100", 4), policy.FIFO{}, 30, jobs, nil}.run(t)
	got := finishes(res)
	if got["J3"] != 110 {
		t.Errorf("J3 finished at %v, want 110", got["J3"])
	}
	want := `{"t":100,"event":"start","job":"J3","alloc":["n0/0","n0/1","n0/2","n0/3"]}`
	if !strings.Contains(log, want) {
		t.Errorf("event log lacks %s:\n%s", want, log)
	}
	if !strings.Contains(log, `{"t":0,"event":"start","job":"J2","alloc":["n1/0","n1/1"]}`) {
		t.Errorf("J2 not best-fitted onto n1:\n%s", log)
	}
}

func TestZeroThroughputTypeNeverUsed(t *testing.T) {
	// K80 node with 4 GPUs (M cannot run on 2 K80s: a 0 entry) and a V100
	// node with 2. X holds both V100s until 100; Y (M on 2 GPUs, 300 steps
	// at 3 steps/s) must wait for them although 4 K80s are idle, and runs
	// 100–200. Z (M on 2 GPUs, constrained to k80) can never run: rejected.
	jobs := []model.JobSpec{
		makeJob("X", 0).gpus(2).dur(100).gpuType("v100").obj(),
		makeJob("Y", 1).gpus(2).steps("M", 300).obj(),
		makeJob("Z", 2).gpus(2).steps("M", 10).gpuType("k80").obj(),
	}
	res, log := scenario{cluster(t, "k80", 4, "v100", 2), policy.FIFO{Backfill: true}, 30, jobs, nil}.run(t)
	got := finishes(res)
	if got["Y"] != 200 {
		t.Errorf("Y finished at %v, want 200", got["Y"])
	}
	if got["Z"] != -1 || !res.Records[2].Rejected {
		t.Errorf("Z should be rejected, got finish %v rejected=%v", got["Z"], res.Records[2].Rejected)
	}
	if strings.Contains(log, `"job":"Y","alloc":["n0`) {
		t.Errorf("Y placed on K80s:\n%s", log)
	}
}

// TestElasticNeverGrowsOntoZeroSpeed pins issue 13's overflow: the
// fulfillment scaler grew an elastic job onto a GPU count where the
// throughput matrix has a 0 entry; the job then had no speed, its finish
// time overflowed to about -9.2e15 s and the run "finished" it there. Now
// E (M, elastic 1..2, on four K80s, where M cannot run on 2) stays at one
// K80 and runs its 100 steps at 1 step/s: 0–100.
func TestElasticNeverGrowsOntoZeroSpeed(t *testing.T) {
	sc, err := scaler.NewFulfillment(1, true)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{makeJob("E", 0).steps("M", 100).elastic(1, 2).obj()}
	res, log := scenario{cluster(t, "k80", 4), policy.FIFO{}, 30, jobs, sc}.run(t)
	if got := finishes(res)["E"]; got != 100 {
		t.Errorf("E finished at %v, want 100\n%s", got, log)
	}
	if strings.Contains(log, `"resize"`) {
		t.Errorf("E was resized onto a size where it cannot run:\n%s", log)
	}
}

// TestEveryJobAccountedFor: a job whose finish lies beyond the simulation
// horizon is never finished at a garbage time; it is reported unfinished,
// and so is a job that waits behind it; a job that could not finish within
// the horizon even at its best speed is rejected at submission.
//
// One K80 and one V100; M runs at 1 step/s on a K80 and 2 on a V100.
// A (10 s, V100 only) takes the V100 at 0; B (M, 1.5e12 steps) gets the
// K80, where it would take 1.5e12 s, past the horizon of 1e12 s (on the
// V100 it would take 7.5e11 s, so it is not rejected); C (K80 only) waits
// behind B; D (M, 3e12 steps: 1.5e12 s even on the V100) is rejected.
func TestEveryJobAccountedFor(t *testing.T) {
	jobs := []model.JobSpec{
		makeJob("A", 0).dur(10).gpuType("v100").obj(),
		makeJob("B", 0).steps("M", 1_500_000_000_000).obj(),
		makeJob("C", 1).dur(5).gpuType("k80").obj(),
		makeJob("D", 2).steps("M", 3_000_000_000_000).obj(),
	}
	res, log := scenario{cluster(t, "k80", 1, "v100", 1), policy.FIFO{Backfill: true}, 30, jobs, nil}.run(t)
	if got := finishes(res); got["A"] != 10 || got["B"] != -1 || got["C"] != -1 || got["D"] != -1 {
		t.Errorf("finishes %v, want A at 10 and no other\n%s", got, log)
	}
	for _, want := range []string{
		`{"t":2,"event":"reject","job":"D","reason":"it would run past the simulation horizon (31688 years after the start) even at its best speed"}`,
		`{"t":10,"event":"unfinished","job":"B","reason":"running: would finish after the simulation horizon"}`,
		`{"t":10,"event":"unfinished","job":"C","reason":"waiting: not enough free GPUs of a feasible type"}`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("event log lacks %s:\n%s", want, log)
		}
	}
	s := metrics.Summarize(2, res.Records)
	if s.Completed != 1 || s.Rejected != 1 || s.Unfinished != 2 {
		t.Errorf("summary: %d completed, %d rejected, %d unfinished; want 1, 1, 2", s.Completed, s.Rejected, s.Unfinished)
	}
}
