package quota_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/quota"
)

// propWorld draws a random world from seed: a cluster of v100 and k80
// nodes, one to four queues with random quotas, limits and weights, an
// inner policy, running jobs (some with checkpoints) and waiting ones.
// unit makes every job one GPU (reclaim is then exact).
func propWorld(t *testing.T, seed uint64, unit bool) (*world, string) {
	rng := rand.New(rand.NewPCG(seed, 18))
	inners := []func() engine.QueuePolicy{
		func() engine.QueuePolicy { return policy.FIFO{} },
		func() engine.QueuePolicy { return policy.FIFO{Backfill: true} },
		func() engine.QueuePolicy { return &policy.Tiresias{Thresholds: policy.TiresiasThresholds()} },
		func() engine.QueuePolicy { return &policy.HLAS{PriorityRatio: 2, StarveRatio: 4} },
		func() engine.QueuePolicy { return &policy.SRTF{} },
	}
	ii := rng.IntN(len(inners))
	per := 1 + rng.IntN(8)
	v100, k80 := per*(1+rng.IntN(3)), per*rng.IntN(3)
	var cfg quota.Config
	nq := 1 + rng.IntN(4)
	for i := range nq {
		q := quota.Queue{Name: fmt.Sprintf("q%d", i), Weight: 0.5 + rng.Float64()*3,
			Quota: map[string]int{"v100": rng.IntN(v100/nq + 1), "k80": rng.IntN(k80/nq + 1)}}
		if rng.IntN(3) == 0 {
			q.Limit = map[string]int{"v100": q.Quota["v100"] + rng.IntN(v100+1)}
		}
		cfg.Queues = append(cfg.Queues, q)
	}
	if rng.IntN(2) == 0 {
		cfg.Usage = quota.UsageGPUHours
	}
	w := newWorld(t, v100, k80, per, inners[ii](), cfg)
	usage := map[string]float64{}
	for _, q := range cfg.Queues {
		usage[q.Name] = rng.Float64() * 100
	}
	w.q.Restore(usage)
	pool := engine.NewPool(w.s.Cluster)
	for i := range 3 + rng.IntN(25) {
		n := 1
		if !unit {
			n = []int{1, 1, 2, 4, per}[rng.IntN(5)]
		}
		q := fmt.Sprintf("q%d", rng.IntN(nq+1)) // q<nq> is undeclared: the default queue
		at := model.Time(i) * s
		if rng.IntN(2) == 0 {
			j := w.add(fmt.Sprintf("j%d", i), q, n, at)
			j.Work = float64(1 + rng.IntN(1000))
			continue
		}
		j := w.add(fmt.Sprintf("j%d", i), q, n, at)
		pool.Reset(w.s)
		gpus := placer.Fewest(pool, n, engine.Feasible(w.s, j, n))
		if gpus == nil {
			continue // stays waiting
		}
		if err := w.s.Start(j, gpus); err != nil {
			t.Fatal(err)
		}
		j.FirstStart, j.LastStart = at, at
		if rng.IntN(2) == 0 {
			j.Checkpoint = at + model.Time(rng.IntN(30))*s
		}
	}
	return w, fmt.Sprintf("seed %d: %s, %d queues, v100=%d k80=%d per node %d", seed, w.q.Name(), nq, v100, k80, per)
}

// holdings returns GPUs held per queue and type.
func holdings(w *world) map[string][2]int {
	m := map[string][2]int{}
	for _, j := range w.s.Running() {
		h := m[w.q.QueueOf(j)]
		h[w.s.Cluster.TypeOf(j.Alloc[0])] += len(j.Alloc)
		m[w.q.QueueOf(j)] = h
	}
	return m
}

// TestProperties: for random worlds, one round of the queue layer never
// takes a queue beyond its limit, stops only jobs of queues above their
// quota (fifo), gives a job stopped jobs' GPUs only within its queue's
// quota, never changes the state, and is deterministic.
func TestProperties(t *testing.T) {
	for seed := range uint64(400) {
		w, name := propWorld(t, seed, seed%2 == 0)
		t.Run(name, func(t *testing.T) {
			twin, _ := propWorld(t, seed, seed%2 == 0)
			before := holdings(w)
			free, waiting := w.s.FreeGPUs(), len(w.s.Waiting())
			plan := w.e.Schedule(w.s, 100*s)
			if w.s.FreeGPUs() != free || len(w.s.Waiting()) != waiting {
				t.Fatal("Schedule changed the state")
			}
			if again := twin.e.Schedule(twin.s, 100*s); !reflect.DeepEqual(summary(plan), summary(again)) {
				t.Fatalf("not deterministic:\n%v\n%v", summary(plan), summary(again))
			}
			freed := map[model.GPU]*model.Job{}
			for _, j := range plan.Preempt {
				for _, g := range j.Alloc {
					freed[g] = j
				}
			}
			_, fifo := w.q.Inner().(policy.FIFO)
			if err := engine.Apply(plan, applier{w, 100 * s}); err != nil {
				t.Fatal(err)
			}
			after := holdings(w)
			for _, q := range w.q.Queues() {
				for ti, tn := range []string{"v100", "k80"} {
					if l, ok := q.Limit[tn]; ok && after[q.Name][ti] > max(l, before[q.Name][ti]) {
						t.Errorf("queue %s holds %d %s, limit %d", q.Name, after[q.Name][ti], tn, l)
					}
				}
			}
			checkReclaims(t, w, plan, freed, before, after, fifo)
		})
	}
}

// checkReclaims: a stopped job whose GPUs a job of another queue takes
// belonged to a queue above its quota of that type before the round, or
// to a queue whose inner order preferred another of its jobs this round;
// under fifo every stopped job is a reclaim for a job of another queue
// that fits within its queue's quota on top of what that queue held, and
// with one-GPU jobs the stopped job's queue keeps at least its quota.
// (Under a preemptive inner order a job may lose its GPUs to a job of its
// own queue: the inner policy's choice; hlas's demotions stop jobs too. GPUs
// of a stopped job that its claimant does not need are idle: any job may
// take them.)
func checkReclaims(t *testing.T, w *world, plan engine.Plan, freed map[model.GPU]*model.Job, before, after map[string][2]int, fifo bool) {
	t.Helper()
	quotaOf := func(name string, ti int) int {
		for _, q := range w.q.Queues() {
			if q.Name == name {
				return q.Quota[[]string{"v100", "k80"}[ti]]
			}
		}
		return 0
	}
	other, within := map[*model.Job]bool{}, map[*model.Job]bool{}
	for _, a := range plan.Start {
		qn := w.q.QueueOf(a.Job)
		for _, g := range a.GPUs {
			v := freed[g]
			if v == nil || w.q.QueueOf(v) == qn {
				continue
			}
			other[v] = true
			if ti := w.s.Cluster.TypeOf(g); before[qn][ti]+len(a.GPUs) <= quotaOf(qn, ti) {
				within[v] = true
			}
		}
	}
	_, hlas := w.q.Inner().(*policy.HLAS)
	startedIn := map[string]bool{}
	for _, a := range plan.Start {
		startedIn[w.q.QueueOf(a.Job)] = true
	}
	for _, j := range plan.Preempt {
		p := j.Periods[len(j.Periods)-1]
		ti, qn := p.Type, w.q.QueueOf(j)
		if other[j] && !hlas && !startedIn[qn] && before[qn][ti] <= quotaOf(qn, ti) {
			t.Errorf("%s of queue %s lost its GPUs to another queue while it held %d ≤ its quota %d", j.Spec.ID, qn, before[qn][ti], quotaOf(qn, ti))
		}
		if !fifo {
			continue
		}
		if !within[j] {
			t.Errorf("%s was stopped, but no job of another queue within its quota took its GPUs", j.Spec.ID)
		}
		if p.GPUs == 1 && after[qn][ti] < quotaOf(qn, ti) {
			t.Errorf("reclaim took queue %s below its quota: %d < %d", qn, after[qn][ti], quotaOf(qn, ti))
		}
	}
}

// summary is a plan as comparable data.
func summary(p engine.Plan) []string {
	var out []string
	for _, d := range p.Trace {
		out = append(out, fmt.Sprintf("%s %s %s", d.Job, d.Status, d.Reason))
	}
	for _, a := range p.Start {
		out = append(out, fmt.Sprintf("start %s %v", a.Job.Spec.ID, a.GPUs))
	}
	for _, j := range p.Preempt {
		out = append(out, "preempt "+j.Spec.ID)
	}
	return out
}
