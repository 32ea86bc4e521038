package sim_test

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/audit"
)

// step is one resize of a scripted scaler: at the round at At seconds, job
// Job grows by K GPUs (K < 0: shrinks by -K).
type step struct {
	At  float64
	Job string
	K   int
}

// scripted is a scaler that resizes as its steps say, and asks for a round
// at each step's time.
type scripted struct{ steps []step }

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Scale(_ *model.State, now model.Time, r *engine.Resizer) {
	for _, st := range s.steps {
		if model.FromSeconds(st.At) != now {
			continue
		}
		for _, j := range r.Jobs() {
			if j.Spec.ID != st.Job {
				continue
			}
			if st.K > 0 {
				r.Grow(j, st.K)
			} else {
				r.Shrink(j, -st.K)
			}
		}
	}
}

func (s *scripted) Next(now model.Time) model.Time {
	next := model.Time(-1)
	for _, st := range s.steps {
		if at := model.FromSeconds(st.At); at > now && (next < 0 || at < next) {
			next = at
		}
	}
	return next
}

// TestGrowOntoSleepingNode: a job grown onto a node that is not up yet goes
// on running on its GPUs until the node is up, then runs at its new size
// after the restart pause (issue 28). 4-GPU V100 nodes, up 300 s after a
// wake-up (n0 at once), idle for 10,000 s before sleeping, no spare nodes;
// 30 s restart pause. A (elastic 4..8 GPUs, 1,000 s on 4: 1 unit/s on 4,
// 1.5 on 6, 2 on 8, 3 on 12) starts at 0 on n0; the script grows it by 4 at
// 100, onto n1, asleep, which is up at 400:
//   - it runs on 4 GPUs to 400 (400 done), pauses to 430 and runs the 600
//     left on 8: it ends at 730 (stopped from 100 to 430 as before, it
//     would end at 430 + 900/2 = 880);
//   - 250 s of work: it ends at 250 on its 4 GPUs, before n1 is up;
//   - shrunk back by 4 at 200: it never stopped: it ends at 1,000;
//   - shrunk by 2 at 200: it joins at 400 on 6: 430 + 600/1.5 = 830;
//   - grown by 4 more at 200, onto n2 (up at 500): it runs on 4 to 500 and
//     on 12 from 530: 530 + 500/3, 696.667 (finishes are rounded up to the
//     millisecond);
//   - n1 up at once (always on): the resize pays its pause at 100 as
//     before, 130 + 900/2 = 580.
func TestGrowOntoSleepingNode(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		dur   float64
		max   int
		wake  float64 // n1's and n2's
		steps []step
		want  float64
	}{
		{"runs on its GPUs until the node is up", 2, 1000, 8, 300, []step{{100, "A", 4}}, 730},
		{"finishes before the node is up", 2, 250, 8, 300, []step{{100, "A", 4}}, 250},
		{"shrunk back before the join: never stopped", 2, 1000, 8, 300, []step{{100, "A", 4}, {200, "A", -4}}, 1000},
		{"shrunk in part before the join", 2, 1000, 8, 300, []step{{100, "A", 4}, {200, "A", -2}}, 830},
		{"grown again onto a later node", 3, 1000, 12, 300, []step{{100, "A", 4}, {200, "A", 4}}, 696.667},
		{"onto a node that is on: paused at once", 2, 1000, 8, 0, []step{{100, "A", 4}}, 580},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, log := growRun(t, tt.nodes, tt.wake, tt.steps,
				makeJob("A", 0).gpus(4).elastic(4, tt.max).dur(tt.dur).obj())
			if got := finishTimes(res); !equalFloats(got, []float64{tt.want}) {
				t.Errorf("A ends at %v, want %v\n%s", got, tt.want, log)
			}
			if got, want := res.Records[0].Resizes, len(tt.steps); got != want {
				t.Errorf("%d resizes, want %d", got, want)
			}
		})
	}
}

// TestGrowOntoSleepingNodeEnergy accounts the first case of
// TestGrowOntoSleepingNode by hand, A's GPUs at full utilisation (300 W
// busy, 50 W idle, base 200 W, 20 W asleep):
//   - n0: 4 busy GPUs 0–730: 1,400 W · 730 s = 1,022,000 J;
//   - n1: asleep 0–100 (20 W: 2,000 J, idle); waking 100–400 with A's 4
//     GPUs on it, drawing its idle 400 W (120,000 J), A's static draw as for
//     any job placed on a waking node; busy 400–730, the restart pause
//     included, 1,400 W · 330 s = 462,000 J.
//
// Total 1,606,000 J, idle 2,000 J, A 1,604,000 J; two wake-ups.
func TestGrowOntoSleepingNodeEnergy(t *testing.T) {
	res, log := growRun(t, 2, 300, []step{{100, "A", 4}}, makeJob("A", 0).gpus(4).elastic(4, 8).dur(1000).obj())
	const kWh = 3.6e6
	e := res.Energy
	if !near(e.TotalKWh, 1_606_000/kWh) || !near(e.IdleKWh, 2_000/kWh) || e.Wakes != 2 {
		t.Errorf("energy %v kWh (idle %v, wakes %d), want %v (idle %v, 2 wakes)\n%s",
			e.TotalKWh, e.IdleKWh, e.Wakes, 1_606_000/kWh, 2_000/kWh, log)
	}
	if got := res.Records[0].EnergyKWh; !near(got, 1_604_000/kWh) {
		t.Errorf("A: %v kWh, want %v", got, 1_604_000/kWh)
	}
	// GPU time held counts the added GPUs from the resize: 4 · 100 s +
	// 8 · 630 s.
	if got := res.Records[0].GPUTime.Seconds(); !near(got, 5440) {
		t.Errorf("A held %v GPU-seconds, want 5,440", got)
	}
}

// growRun runs jobs on nodes 4-GPU V100 nodes, n0 up at once and the others
// wake s after a wake-up, under fifo, pack and the scripted steps, with a
// 30 s restart pause, energy accounting (every job at full utilisation)
// and no spare nodes (no scaler without steps: elastic jobs then start at
// their requested size); the event log must pass the audit.
func growRun(t *testing.T, nodes int, wake float64, steps []step, jobs ...model.JobSpec) (*sim.Result, string) {
	t.Helper()
	var spec []any
	for range nodes {
		spec = append(spec, "v100", 4)
	}
	c := cluster(t, spec...)
	p := sleepy(c, 10_000, wake)
	p.Nodes[0].WakeS = 0
	var sc engine.Scaler
	if steps != nil {
		sc = &scripted{steps}
	}
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, sc)
	if err != nil {
		t.Fatal(err)
	}
	full := func(*model.JobSpec) power.Workload { return power.Workload{Util: 1} }
	res, log := powered{cluster: c, power: p, eng: eng, jobs: jobs,
		cfg: sim.Config{Energy: true, PowerWorkload: full, RestartOverhead: 30 * model.Second}}.run(t)
	if _, err := audit.Check(strings.NewReader(log), "events.jsonl"); err != nil {
		t.Fatalf("the event log fails the audit: %v\n%s", err, log)
	}
	return res, log
}

// TestGrowthLeftBehindByPreemption: a job preempted while its growth waits
// for a node keeps the work it did on its old GPUs. As in
// TestGrowOntoSleepingNode, A (1,000 s on 4 GPUs) grows onto n1 at 100 (up
// at 400), under srtf; S (8 GPUs, 10 s), submitted at 150, preempts A,
// which has done 150 s of work, takes both nodes, runs when n1 is up,
// 400–410, and A restarts at 410 on its minimum of 4 GPUs (n0, on): it
// resumes at 440 with 850 s left and ends at 1,290.
func TestGrowthLeftBehindByPreemption(t *testing.T) {
	c := cluster(t, "v100", 4, "v100", 4)
	p := sleepy(c, 10_000, 300)
	p.Nodes[0].WakeS = 0
	eng, err := engine.New(&policy.SRTF{}, placer.Pack{}, &scripted{[]step{{100, "A", 4}}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{makeJob("A", 0).gpus(4).elastic(4, 8).dur(1000).obj(), makeJob("S", 150).gpus(8).dur(10).obj()}
	res, log := powered{cluster: c, power: p, eng: eng, jobs: jobs,
		cfg: sim.Config{Energy: true, RestartOverhead: 30 * model.Second}}.run(t)
	if _, err := audit.Check(strings.NewReader(log), "events.jsonl"); err != nil {
		t.Fatalf("the event log fails the audit: %v\n%s", err, log)
	}
	if got := finishTimes(res); !equalFloats(got, []float64{1290, 410}) {
		t.Errorf("finishes %v, want [1290 410]\n%s", got, log)
	}
}

// TestStartOnNodesUp: an elastic job started on nodes not all up starts on
// the GPUs of those that are, if they are at least its minimum, and the
// others join when they are up, after the restart pause (issue 28). As in
// TestGrowOntoSleepingNode (n0 up at once, n1 up 300 s after its wake-up,
// 30 s pause, no scaler), A asks for 8 GPUs, 500 s on 8 (1 unit/s on 8, 0.5 on 4), and
// starts at 0 on n0 and n1:
//   - elastic 4..8: it runs on n0's 4 GPUs to 300 (150 done), pauses to 330
//     and runs the 350 left on 8: it ends at 680;
//   - rigid, or elastic 6..8 (n0's 4 GPUs are below its minimum): it waits
//     for n1 and ends at 300 + 500 = 800;
//   - n1 up 20 s after its wake-up: 4 GPUs for 20 s (10 units) would not
//     make up for the join's 30 s pause on 8 (30 units): it waits, ends at
//     520 (starting on n0 it would end at 50 + 490 = 540).
func TestStartOnNodesUp(t *testing.T) {
	tests := []struct {
		name string
		min  int
		wake float64
		want float64
	}{
		{"elastic: starts on the node that is up", 4, 300, 680},
		{"rigid: waits for both nodes", 8, 300, 800},
		{"below its minimum: waits", 6, 300, 800},
		{"short wake-up: waits", 4, 20, 520},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := makeJob("A", 0).gpus(8).dur(500)
			if tt.min < 8 {
				a = a.elastic(tt.min, 8)
			}
			res, log := growRun(t, 2, tt.wake, nil, a.obj())
			if got := finishTimes(res); !equalFloats(got, []float64{tt.want}) {
				t.Errorf("A ends at %v, want %v\n%s", got, tt.want, log)
			}
			if got := res.Records[0].Resizes; got != 0 {
				t.Errorf("%d resizes, want 0", got)
			}
			// It holds its 8 GPUs from its start either way.
			if got := res.Records[0].GPUTime.Seconds(); !near(got, 8*tt.want) {
				t.Errorf("A held %v GPU-seconds, want %v", got, 8*tt.want)
			}
			// The log shows one start on all 8 GPUs either way.
			if got := strings.Count(log, `"start"`); got != 1 {
				t.Errorf("%d starts in the log, want 1\n%s", got, log)
			}
		})
	}
}
