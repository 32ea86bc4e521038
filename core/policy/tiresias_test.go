package policy_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/sim"
)

func sec(s float64) model.Time { return model.FromSeconds(s) }

// tj is a fluent builder for a tiresias test job: a 1-GPU waiting job
// unless told otherwise.
type tj struct {
	j       *model.Job
	running bool
	from    model.Time // start of a running job's open period
}

func mkJob(id string, seq int, submit float64) *tj {
	spec := model.JobSpec{ID: id, Submit: sec(submit), GPUs: 1, MinGPUs: 1, MaxGPUs: 1}
	return &tj{j: model.NewJob(spec, seq, -1, 1e9)}
}

func (b *tj) gpus(n int) *tj {
	b.j.Spec.GPUs, b.j.Spec.MinGPUs, b.j.Spec.MaxGPUs = n, n, n
	return b
}

// ran adds a closed execution period on n GPUs; the job was preempted at
// its end unless it runs again.
func (b *tj) ran(from, to float64, n int) *tj {
	b.j.Periods = append(b.j.Periods, model.Period{Start: sec(from), End: sec(to), GPUs: n})
	b.j.Queued = sec(to)
	return b
}

// runs makes the job run on its GPUs since from.
func (b *tj) runs(from float64) *tj { b.running, b.from = true, sec(from); return b }

func (b *tj) queue(q int) *tj { b.j.Queue = q; return b }

// tiresiasState puts the jobs on a one-node, 16-GPU cluster.
func tiresiasState(t testing.TB, jobs ...*tj) *model.State {
	t.Helper()
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}, []model.Node{{Name: "n0", GPUs: 16}})
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, perGPU{})
	next := int32(0)
	for _, b := range jobs {
		s.Submit(b.j)
		if !b.running {
			continue
		}
		alloc := make([]model.GPU, b.j.Spec.GPUs)
		for i := range alloc {
			alloc[i] = model.GPU{Node: 0, Index: next}
			next++
		}
		if err := s.Start(b.j, alloc); err != nil {
			t.Fatal(err)
		}
		b.j.LastStart = b.from
	}
	return s
}

func TestTiresiasLevels(t *testing.T) {
	// Thresholds 100 and 300 GPU-seconds: Q0 [0, 100), Q1 [100, 300), Q2
	// [300, ∞). Attained service = Σ seconds × GPUs since the last reset.
	tests := []struct {
		name string
		job  *tj
		now  float64
		want int
	}{
		{"just below the first limit", mkJob("j", 0, 0).runs(0), 99.999, 0},           // 99.999
		{"exactly at the first limit", mkJob("j", 0, 0).runs(0), 100, 1},              // 100
		{"GPUs count: 4 GPUs × 25 s", mkJob("j", 0, 0).gpus(4).runs(0), 25, 1},        // 100
		{"just below the second limit", mkJob("j", 0, 0).gpus(2).runs(0), 149.999, 1}, // 299.998
		{"exactly at the second limit", mkJob("j", 0, 0).gpus(2).runs(0), 150, 2},     // 300
		{"far beyond the last limit", mkJob("j", 0, 0).runs(0), 1e6, 2},
		{"closed periods of a waiting job", mkJob("j", 0, 0).ran(0, 50, 1).ran(60, 110, 2), 500, 1},      // 50 + 100
		{"closed and open periods", mkJob("j", 0, 0).gpus(2).ran(0, 40, 2).runs(50), 60, 1},              // 80 + 20
		{"already recorded: no update", mkJob("j", 0, 0).queue(1).runs(0), 200, 1},                       // 200
		{"after a reset only later service counts", withReset(mkJob("j", 0, 0).runs(0), 50), 149.999, 0}, // 99.999
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tiresiasState(t, tc.job)
			ord := (&policy.Tiresias{Thresholds: []float64{100, 300}}).Order(s, sec(tc.now), nil)
			var want []engine.Update
			if tc.want != tc.job.j.Queue {
				want = []engine.Update{{Job: tc.job.j, Queue: tc.want}}
			}
			if !slices.Equal(ord.Updates, want) {
				t.Errorf("updates %+v, want %+v", ord.Updates, want)
			}
			if !ord.Preemptive || len(ord.Jobs) != 1 {
				t.Errorf("preemptive %v, %d jobs", ord.Preemptive, len(ord.Jobs))
			}
		})
	}
}

func withReset(b *tj, at float64) *tj { b.j.ResetAt = sec(at); return b }

func TestTiresiasOrder(t *testing.T) {
	// Thresholds 100 and 300 GPU-seconds.
	tests := []struct {
		name string
		jobs []*tj
		now  float64
		want []string
	}{{
		// Q0 is FIFO by arrival (submit time, then rank).
		name: "top queue by arrival",
		jobs: []*tj{mkJob("a", 0, 20), mkJob("b", 1, 10), mkJob("c", 2, 10)},
		now:  30,
		want: []string{"b", "c", "a"},
	}, {
		// x reached 100 at 50 (2 GPUs from 0), y at 30 (4 GPUs from 5);
		// both were stopped on demotion. Q1 is FIFO by entry: y, x.
		name: "lower queue by demotion time",
		jobs: []*tj{mkJob("x", 0, 0).ran(0, 50, 2), mkJob("y", 1, 5).ran(5, 30, 4)},
		now:  100,
		want: []string{"y", "x"},
	}, {
		// All in Q0 (attained 10, 25, 10, 0). Running r first; then the
		// jobs preempted in the queue, latest first (p2 at 30, p1 at 20);
		// then w, waiting since it arrived.
		name: "running, then preempted latest first, then FIFO",
		jobs: []*tj{mkJob("w", 0, 0), mkJob("p1", 1, 1).ran(10, 20, 1), mkJob("p2", 2, 2).ran(5, 30, 1), mkJob("r", 3, 3).runs(40)},
		now:  50,
		want: []string{"r", "p2", "p1", "w"},
	}, {
		// d has 120 GPU-seconds: Q1, behind w of Q0 although it runs.
		name: "demoted running job after a waiting job of a higher queue",
		jobs: []*tj{mkJob("d", 0, 0).runs(0), mkJob("w", 1, 110)},
		now:  120,
		want: []string{"w", "d"},
	}, {
		// In Q1 at 120: d1 (2 GPUs) entered at 50; d2 entered at 100;
		// d3 entered at 100 (110 s on 1 GPU), was stopped at 110 and runs
		// again since 115, so it runs in Q1 since 115: d1, d2, d3.
		name: "running jobs of a queue by when they began running there",
		jobs: []*tj{mkJob("d3", 0, 0).ran(0, 110, 1).runs(115), mkJob("d2", 1, 0).runs(0), mkJob("d1", 2, 0).gpus(2).runs(0)},
		now:  120,
		want: []string{"d1", "d2", "d3"},
	}, {
		// Equal keys fall back to the arrival rank (Seq).
		name: "ties by arrival rank",
		jobs: []*tj{mkJob("e2", 2, 0), mkJob("e0", 0, 0), mkJob("e1", 1, 0), mkJob("r1", 4, 0).runs(10), mkJob("r0", 3, 0).runs(10)},
		now:  20,
		want: []string{"r0", "r1", "e0", "e1", "e2"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tiresiasState(t, tc.jobs...)
			p := &policy.Tiresias{Thresholds: []float64{100, 300}}
			ord := p.Order(s, sec(tc.now), nil)
			if got := ids(ord.Jobs); !slices.Equal(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
			again := p.Order(s, sec(tc.now), nil)
			if got := ids(again.Jobs); !slices.Equal(got, tc.want) {
				t.Errorf("second call: order %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTiresiasPromotion(t *testing.T) {
	// Thresholds 50 and 300 GPU-seconds. A waiting job below Q0 is promoted
	// when (time since it first ran) − (run time) ≥ knob × run time.
	tests := []struct {
		name    string
		job     *tj
		knob    float64
		now     float64
		promote bool
	}{
		// Ran 10–110 (100 s, Q1). At 310 it has waited 310−10−100 = 200 = 2 × 100.
		{"waited exactly knob times its run time", mkJob("z", 0, 0).ran(10, 110, 1).queue(1), 2, 310, true},
		{"one millisecond short", mkJob("z", 0, 0).ran(10, 110, 1).queue(1), 2, 309.999, false},
		// Ran 0–50 and 100–150: 100 s run, waited 300−0−100 = 200 in all,
		// though only 150 since the last preemption.
		{"waiting adds up over preemptions", mkJob("z", 0, 0).ran(0, 50, 1).ran(100, 150, 1).queue(1), 2, 300, true},
		{"knob 0 never promotes", mkJob("z", 0, 0).ran(10, 110, 1).queue(1), 0, 1e6, false},
		// 40 GPU-seconds: Q0 already.
		{"top-queue jobs are not promoted", mkJob("z", 0, 0).ran(0, 40, 1), 2, 1e6, false},
		{"running jobs are not promoted", mkJob("z", 0, 0).ran(0, 100, 1).queue(1).runs(1000), 2, 1001, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tiresiasState(t, tc.job)
			p := &policy.Tiresias{Thresholds: []float64{50, 300}, PromoteKnob: tc.knob}
			ord := p.Order(s, sec(tc.now), nil)
			var want []engine.Update
			if tc.promote {
				want = []engine.Update{{Job: tc.job.j, Queue: 0, Reset: true}}
			}
			if !slices.Equal(ord.Updates, want) {
				t.Errorf("updates %+v, want %+v", ord.Updates, want)
			}
		})
	}
}

func TestTiresiasPromotedJobJoinsTopQueue(t *testing.T) {
	// z (Q1, ran 10–110) is promoted at 310 and enters Q0 then: behind the
	// running r and behind a, which arrived at 300; ahead of Q1's y.
	z := mkJob("z", 0, 0).ran(10, 110, 1).queue(1)
	y := mkJob("y", 1, 0).ran(0, 120, 1).queue(1)
	a := mkJob("a", 2, 300)
	r := mkJob("r", 3, 305).runs(305)
	s := tiresiasState(t, z, y, a, r)
	p := &policy.Tiresias{Thresholds: []float64{50, 300}, PromoteKnob: 2}
	now := sec(310)
	ord := p.Order(s, now, nil)
	want := []string{"r", "a", "z", "y"}
	if got := ids(ord.Jobs); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if w := []engine.Update{{Job: z.j, Queue: 0, Reset: true}}; !slices.Equal(ord.Updates, w) {
		t.Fatalf("updates %+v, want %+v", ord.Updates, w)
	}
	// The shell applies the update; the next round agrees and says nothing.
	z.j.Queue = 0
	z.j.ResetHistory(now)
	ord = p.Order(s, now, nil)
	if got := ids(ord.Jobs); !slices.Equal(got, want) || len(ord.Updates) != 0 {
		t.Errorf("after the reset: order %v, updates %+v", got, ord.Updates)
	}
}

// TestTiresiasThroughSimulator replays two jobs on one GPU with a round
// every 10 s. Thresholds {100}, no restart pause: A (1000 s) runs from 0;
// B (20 s) arrives at 50 and waits behind A, which runs in the same queue.
// At 100 A reaches 100 GPU-seconds and drops to Q1, so B preempts it and
// runs 100–120; A resumes at 120 with 900 s left and ends at 1020.
func TestTiresiasThroughSimulator(t *testing.T) {
	c, err := model.NewCluster([]model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}}, []model.Node{{Name: "n0", GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := profile.ParseMatrix("test", []byte(`{"v100": {"('M', 1)": {"null": 1.0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, c.Types[0])
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(&policy.Tiresias{Thresholds: []float64{100}}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{
		{ID: "A", Submit: 0, GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: sec(1000)},
		{ID: "B", Submit: sec(50), GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: sec(20)},
	}
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, Jobs: jobs, Round: sec(10)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"A": {1020, 1}, "B": {120, 0}} // finish, preemptions
	for _, r := range res.Records {
		if got := [2]float64{r.Finish.Seconds(), float64(r.Preemptions)}; got != want[r.ID] {
			t.Errorf("%s: finish, preemptions %v, want %v", r.ID, got, want[r.ID])
		}
	}
}

func TestTiresiasDeterministic(t *testing.T) {
	s, now := bigTiresiasState(t, 2000, 500)
	p := &policy.Tiresias{Thresholds: policy.TiresiasThresholds(), PromoteKnob: 2}
	first := slices.Clone(p.Order(s, now, nil).Jobs)
	second := p.Order(s, now, nil).Jobs
	if !slices.Equal(first, second) || len(first) != 2500 {
		t.Fatalf("two calls disagree (%d, %d jobs)", len(first), len(second))
	}
}

// bigTiresiasState builds running jobs (1–8 GPUs, one 8-GPU node each) and
// waiting jobs, about half with past execution periods, so that attained
// service spans all default queues; it returns the state and a time after
// every event.
func bigTiresiasState(t testing.TB, waiting, running int) (*model.State, model.Time) {
	t.Helper()
	nodes := make([]model.Node, running)
	for i := range nodes {
		nodes[i] = model.Node{Name: fmt.Sprint("n", i), GPUs: 8}
	}
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, perGPU{})
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 1, 1, 1, 1, 1, 2, 2, 4, 8}
	total := waiting + running
	now := model.Time(total)*model.Second + sec(30000)
	for i := 0; i < total; i++ {
		n := sizes[rng.IntN(len(sizes))]
		b := mkJob(fmt.Sprint(i), i, float64(i)).gpus(n)
		if rng.IntN(2) == 0 {
			from := float64(i + rng.IntN(1000))
			b.ran(from, from+float64(1+rng.IntN(10000)), n)
		}
		s.Submit(b.j)
		if i >= running {
			continue
		}
		alloc := make([]model.GPU, n)
		for k := range alloc {
			alloc[k] = model.GPU{Node: int32(i), Index: int32(k)}
		}
		if err := s.Start(b.j, alloc); err != nil {
			t.Fatal(err)
		}
		b.j.LastStart = max(b.j.Queued, b.j.Spec.Submit) + sec(float64(rng.IntN(1000)))
	}
	return s, now
}

// BenchmarkTiresiasOrder orders 10,000 waiting and 2,000 running jobs, in
// the first round (every queue level to record) and in a steady state (the
// previous round's updates applied).
func BenchmarkTiresiasOrder(b *testing.B) {
	for _, bc := range []struct {
		name   string
		steady bool
	}{{"first", false}, {"steady", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s, now := bigTiresiasState(b, 10000, 2000)
			p := &policy.Tiresias{Thresholds: policy.TiresiasThresholds(), PromoteKnob: 2}
			if bc.steady {
				for _, u := range p.Order(s, now, nil).Updates {
					u.Job.Queue = u.Queue
					if u.Reset {
						u.Job.ResetHistory(now)
					}
				}
			}
			var buf []*model.Job
			var ups int
			b.ReportAllocs()
			for b.Loop() {
				ord := p.Order(s, now, buf[:0])
				buf, ups = ord.Jobs, len(ord.Updates)
			}
			b.ReportMetric(float64(ups), "updates/op")
		})
	}
}
