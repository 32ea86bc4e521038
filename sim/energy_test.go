package sim_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/scaler"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// powered is a run with a power model: cfg's Engine, Cluster and Workload
// are filled in (fifo + pack unless eng is set) and the event log returned.
type powered struct {
	cluster *model.Cluster
	power   *power.Cluster
	eng     *engine.Engine
	jobs    []model.JobSpec
	cfg     sim.Config
}

func (p powered) run(t *testing.T) (*sim.Result, string) {
	t.Helper()
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, p.cluster, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	if p.eng == nil {
		if p.eng, err = engine.New(policy.FIFO{}, placer.Pack{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	w := eventlog.NewWriter(&log)
	cfg := p.cfg
	cfg.Engine, cfg.Cluster, cfg.Workload, cfg.Jobs, cfg.Power, cfg.Events = p.eng, p.cluster, tab, p.jobs, p.power, w
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return res, log.String()
}

// roundPower gives every GPU type of c idle 50 W and max 300 W and every
// node base 200 W, knee 0.5 and slowdown 0.5: round figures for hand
// computation (a 4-GPU node runs its jobs at 0.75 with 3 busy GPUs, at 0.5
// with 4).
func roundPower(c *model.Cluster) *power.Cluster {
	p := &power.Cluster{Types: make([]power.GPUPower, len(c.Types)), Nodes: make([]power.NodePower, len(c.Nodes))}
	for i := range p.Types {
		p.Types[i] = power.GPUPower{IdleW: 50, MaxW: 300}
	}
	for i := range p.Nodes {
		p.Nodes[i] = power.NodePower{BaseW: 200, Contention: power.Contention{Knee: 0.5, Slowdown: 0.5}}
	}
	return p
}

// byID gives job id its workload and every other job the default one.
func byID(id string, w power.Workload) func(*model.JobSpec) power.Workload {
	return func(s *model.JobSpec) power.Workload {
		if s.ID == id {
			return w
		}
		return power.DefaultWorkload()
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestEnergyByHand(t *testing.T) {
	// Two 2-GPU V100 nodes; idle 50 W, max 300 W per GPU. n0 has base
	// 200 W; n1 base 100 W and, when power-managed, sleeps at 20 W.
	// A (2 GPUs, 100 s) takes n0 at 0, B (1 GPU, 50 s) n1 at 0, C (1 GPU,
	// 40 s, utilisation 0.6: its GPU draws 50 + 250·0.6 = 200 W) joins B on
	// n1 at 10; B and C end at 50, A at 100.
	//   n0, 0–100: 200 + 2·300 = 800 W                        → 80,000 J
	//   n1, 0–10: 100 + 50 + 300 = 450 W                      →  4,500 J
	//   n1, 10–50: 100 + 300 + 200 = 600 W                    → 24,000 J
	//   n1, 50–100: idle, 100 + 2·50 = 200 W or asleep 20 W   → 10,000 or 1,000 J
	// Jobs: A 2·300·100 + 200·100 = 80,000 J (the whole static power of n0);
	// B 450·10 (alone: n1's static 150 W is its own) + (300 + 100/2)·40 =
	// 18,500 J; C (200 + 50)·40 = 10,000 J; the rest of n1 is idle energy.
	jobs := []model.JobSpec{
		makeJob("A", 0).gpus(2).dur(100).obj(),
		makeJob("B", 0).dur(50).obj(),
		makeJob("C", 10).dur(40).obj(),
	}
	const kWh = 3.6e6
	tests := []struct {
		name              string
		sleeps            bool
		total, idle, n1   float64 // joules
		powerAt50, powerE float64 // cluster watts from 50 s and after the last event
	}{
		{"n1 stays on", false, 118_500, 10_000, 38_500, 1000, 500},
		{"n1 sleeps when idle", true, 109_500, 1_000, 29_500, 820, 320},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster(t, "v100", 2, "v100", 2)
			p := roundPower(c)
			p.Nodes[1] = power.NodePower{BaseW: 100, Sleeps: tt.sleeps, SleepW: 20}
			res, log := powered{cluster: c, power: p, jobs: jobs,
				cfg: sim.Config{Energy: true, PowerWorkload: byID("C", power.Workload{Util: 0.6, Sensitivity: 1})}}.run(t)
			for _, want := range []string{`"job":"A","alloc":["n0/0","n0/1"]`, `"job":"B","alloc":["n1/0"]`, `"job":"C","alloc":["n1/1"]`} {
				if !strings.Contains(log, want) {
					t.Fatalf("placement differs from the hand computation: no %s in\n%s", want, log)
				}
			}
			e := res.Energy
			checks := []struct {
				what      string
				got, want float64
			}{
				{"total", e.TotalKWh, tt.total / kWh},
				{"idle", e.IdleKWh, tt.idle / kWh},
				{"n0", e.NodeKWh[0], 80_000 / kWh},
				{"n1", e.NodeKWh[1], tt.n1 / kWh},
				{"A", res.Records[0].EnergyKWh, 80_000 / kWh},
				{"B", res.Records[1].EnergyKWh, 18_500 / kWh},
				{"C", res.Records[2].EnergyKWh, 10_000 / kWh},
			}
			for _, c := range checks {
				if !near(c.got, c.want) {
					t.Errorf("%s: %v kWh, want %v", c.what, c.got, c.want)
				}
			}
			wantSamples := []struct{ t, w float64 }{{0, 800 + 450}, {10, 800 + 600}, {50, tt.powerAt50}, {100, tt.powerE}}
			if len(res.Samples) != len(wantSamples) {
				t.Fatalf("samples %+v, want %d", res.Samples, len(wantSamples))
			}
			for i, w := range wantSamples {
				if s := res.Samples[i]; s.T.Seconds() != w.t || !near(s.PowerW, w.w) {
					t.Errorf("sample %d: %v W at %v s, want %v W at %v s", i, s.PowerW, s.T.Seconds(), w.w, w.t)
				}
			}
		})
	}
}

func TestContentionByHand(t *testing.T) {
	// One 4-GPU V100 node, knee 0.5, slowdown 0.5: factor 1 with 2 busy
	// GPUs, 0.75 with 3. A (2 GPUs, 100 s of work) starts at 0, B (1 GPU)
	// at 20.
	jobs := func(bWork float64) []model.JobSpec {
		return []model.JobSpec{makeJob("A", 0).gpus(2).dur(100).obj(), makeJob("B", 20).dur(bWork).obj()}
	}
	tests := []struct {
		name       string
		contention bool
		bWork      float64
		bWorkload  power.Workload
		wantA      float64
		wantB      float64
	}{
		// Off: A 0–100, B 20–50.
		{"off", false, 30, power.DefaultWorkload(), 100, 50},
		// On: from 20 both run at 0.75. B's 30 s take 40 s: it ends at 60.
		// A has done 20 + 0.75·40 = 50 by then and runs its other 50 at
		// full speed: it ends at 110.
		{"on", true, 30, power.DefaultWorkload(), 110, 60},
		// B feels contention twice as strongly: 0.75² = 0.5625, so its
		// 45 s take 80 s (20–100); A at 0.75 meanwhile does 60, has done
		// 80 at 100 and ends at 120.
		{"on, sensitive job", true, 45, power.Workload{Util: 1, Sensitivity: 2}, 120, 100},
		// B feels no contention (sensitivity 0) but A does: B ends at 65,
		// A has done 20 + 0.75·45 = 53.75 by then and ends at 111.25.
		{"on, insensitive job", true, 45, power.Workload{Util: 1, Sensitivity: 0}, 111.25, 65},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster(t, "v100", 4)
			cfg := sim.Config{Contention: tt.contention, PowerWorkload: byID("B", tt.bWorkload)}
			res, _ := powered{cluster: c, power: roundPower(c), jobs: jobs(tt.bWork), cfg: cfg}.run(t)
			got := finishes(res)
			if got["A"] != tt.wantA || got["B"] != tt.wantB {
				t.Errorf("A finished at %v, B at %v; want %v and %v", got["A"], got["B"], tt.wantA, tt.wantB)
			}
			if res.Energy != nil {
				t.Error("energy accounted without Config.Energy")
			}
		})
	}
}

// TestContentionDuringRestartPause: a job that a rise in load slows while
// it is still in its restart pause keeps the pause and runs slower after
// it. One 4-GPU node (knee 0.5, slowdown 0.5), srtf, 10 s pause. L (2 GPUs,
// 100 s) starts at 0; S (4 GPUs, 5 s of work at factor 0.5) preempts it at
// 10 and ends at 20; L restarts at 20 and resumes at 30 with 90 s left. X
// (1 GPU, 40 s) arrives at 25, in L's pause: load 3/4, factor 0.75 for
// both. X ends at 25 + 40/0.75 = 78.334 (rounded up to the millisecond); L
// has done 0.75·(78.334 − 30) by then and runs the rest at full speed.
func TestContentionDuringRestartPause(t *testing.T) {
	c := cluster(t, "v100", 4)
	eng, err := engine.New(&policy.SRTF{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []model.JobSpec{
		makeJob("L", 0).gpus(2).dur(100).obj(),
		makeJob("S", 10).gpus(4).dur(5).obj(),
		makeJob("X", 25).dur(40).obj(),
	}
	res, log := powered{cluster: c, power: roundPower(c), eng: eng, jobs: jobs,
		cfg: sim.Config{Contention: true, RestartOverhead: 10 * model.Second}}.run(t)
	got := finishes(res)
	xEnd := 25 + math.Ceil(40/0.75*1000)/1000 // finishes round up to the millisecond
	lEnd := xEnd + (90 - 0.75*(xEnd-30))
	if got["S"] != 20 || got["X"] != xEnd || math.Abs(got["L"]-lEnd) > 0.001 {
		t.Errorf("finishes %v; want S 20, X %v, L %v\n%s", got, xEnd, lEnd, log)
	}
}

// TestEnergySumRule: on a run with preemptions, migrations and resizes on
// two GPU types and power-managed nodes, the jobs' energy plus the idle
// energy is the total, and so is the sum over the nodes.
func TestEnergySumRule(t *testing.T) {
	c := cluster(t, "v100", 4, "v100", 4, "k80", 4, "k80", 2)
	p := roundPower(c)
	p.Types[1] = power.GPUPower{IdleW: 25, MaxW: 150}
	p.Nodes[1].Sleeps, p.Nodes[3].Sleeps, p.Nodes[3].SleepW = true, true, 7.5
	p.Nodes[1].SleepAfterS, p.Nodes[1].WakeS, p.Nodes[3].WakeS = 45, 20, 12.5
	r := rand.New(rand.NewPCG(5, 6))
	var jobs []model.JobSpec
	for i := range 60 {
		n := 1 << r.IntN(3)
		d := 30 + r.IntN(600)
		if i%3 == 0 { // model M: 2× as fast on v100 as on k80, not 3.6× as by TFLOPS, so swaps gain
			jobs = append(jobs, makeJob(fmt.Sprintf("j%d", i), float64(i*r.IntN(40))).steps("M", int64(2*d)).obj())
			continue
		}
		j := makeJob(fmt.Sprintf("j%d", i), float64(i*r.IntN(40))).gpus(n).dur(float64(d)).obj()
		j.MinGPUs, j.MaxGPUs = 1, 4
		jobs = append(jobs, j)
	}
	sortBySubmit(jobs)
	sc, err := scaler.NewFulfillment(0.9, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, contention := range []bool{false, true} {
		eng, err := engine.New(&policy.HLAS{PriorityRatio: 2, StarveRatio: 4, Blind: true}, &placer.Hetero{}, sc)
		if err != nil {
			t.Fatal(err)
		}
		util := func(s *model.JobSpec) power.Workload {
			return power.Workload{Util: 0.5 + float64(len(s.ID)%3)/4, Sensitivity: float64(len(s.ID) % 2)}
		}
		res, _ := powered{cluster: c, power: p, eng: eng, jobs: jobs,
			cfg: sim.Config{Energy: true, Contention: contention, PowerWorkload: util, RestartOverhead: 5 * model.Second}}.run(t)
		var jobsKWh, nodesKWh float64
		var preempt, resize, migrate int
		for _, rec := range res.Records {
			jobsKWh += rec.EnergyKWh
			preempt, resize, migrate = preempt+rec.Preemptions, resize+rec.Resizes, migrate+rec.Migrations
			if rec.EnergyKWh < 0 || rec.Completed() != (rec.EnergyKWh > 0) {
				t.Errorf("job %s: %v kWh, completed %v", rec.ID, rec.EnergyKWh, rec.Completed())
			}
		}
		for _, k := range res.Energy.NodeKWh {
			nodesKWh += k
		}
		e := res.Energy
		if !near(jobsKWh+e.IdleKWh, e.TotalKWh) || !near(nodesKWh, e.TotalKWh) || e.IdleKWh <= 0 {
			t.Errorf("contention %v: jobs %v + idle %v kWh, nodes %v kWh, total %v kWh", contention, jobsKWh, e.IdleKWh, nodesKWh, e.TotalKWh)
		}
		// The power samples step with the draw, suspensions between events
		// included: their area is the energy.
		var area float64
		for i := 1; i < len(res.Samples); i++ {
			area += res.Samples[i-1].PowerW * (res.Samples[i].T - res.Samples[i-1].T).Seconds()
		}
		if !near(area/3.6e6, e.TotalKWh) || e.Wakes == 0 {
			t.Errorf("contention %v: area under the samples %v kWh, total %v kWh; %d wake-ups", contention, area/3.6e6, e.TotalKWh, e.Wakes)
		}
		if preempt == 0 || resize == 0 || migrate == 0 {
			t.Errorf("contention %v: the run should preempt (%d), resize (%d) and migrate (%d)", contention, preempt, resize, migrate)
		}
	}
}

// sortBySubmit sorts specs by submit time, stably.
func sortBySubmit(specs []model.JobSpec) {
	for i := 1; i < len(specs); i++ {
		for k := i; k > 0 && specs[k].Submit < specs[k-1].Submit; k-- {
			specs[k], specs[k-1] = specs[k-1], specs[k]
		}
	}
}

func TestPowerConfigErrors(t *testing.T) {
	c := cluster(t, "v100", 2)
	bad := roundPower(c)
	bad.Nodes[0].SleepW, bad.Nodes[0].Sleeps = -1, true
	noTypes := roundPower(c)
	noTypes.Types[0] = power.GPUPower{}
	tests := []struct {
		name string
		cfg  sim.Config
		want string
	}{
		{"energy without power", sim.Config{Energy: true}, "sim: power: energy accounting and contention need a power description"},
		{"contention without power", sim.Config{Contention: true}, "sim: power: energy accounting and contention need a power description"},
		{"bad node", sim.Config{Energy: true, Power: bad}, "sim: power: node n0: sleep power -1 W"},
		{"bad node, contention only", sim.Config{Contention: true, Power: bad}, "sim: power: node n0: sleep power -1 W"},
		{"type without figures", sim.Config{Energy: true, Power: noTypes}, "sim: power: GPU type v100: maximum power 0 W"},
		{"bad workload", sim.Config{Energy: true, Power: roundPower(c), PowerWorkload: byID("A", power.Workload{})}, "sim: job A: power workload: utilisation 0"},
	}
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		cfg := tt.cfg
		cfg.Engine, cfg.Cluster, cfg.Workload, cfg.Jobs = eng, c, tab, []model.JobSpec{makeJob("A", 0).dur(1).obj()}
		if _, err := sim.Run(cfg); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one starting %q", tt.name, err, tt.want)
		}
	}
	// A type without figures is fine for contention alone.
	cfg := sim.Config{Engine: eng, Cluster: c, Workload: tab, Contention: true, Power: noTypes,
		Jobs: []model.JobSpec{makeJob("A", 0).dur(1).obj()}}
	if res, err := sim.Run(cfg); err != nil || res.Energy != nil {
		t.Errorf("contention only, type without figures: %v, energy %v", err, res.Energy)
	}
}
