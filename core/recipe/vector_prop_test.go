package recipe_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/recipe"
)

// The resource vector's property (issue 26): on random clusters whose
// nodes offer random amounts of CPU, memory, pods and a named resource,
// with random jobs (rigid and elastic, one or several replicas, random
// requests, some asking for nothing), every plan of every policy × placer
// × scaler, applied round after round as a shell applies it, leaves no node
// holding more of any resource than it offers. The check recomputes what
// each node holds from the running jobs' allocations and their specs,
// apart from model.State's own accounting (which also refuses an overfull
// start or resize: such a plan fails the test as an Apply error).

// vecCasesPerCombo is how many random cases each combination runs.
const vecCasesPerCombo = 2

func TestVectorNeverOverfills(t *testing.T) {
	for _, pol := range recipe.Policies() {
		for _, pla := range recipe.Placers() {
			for _, sca := range recipe.Scalers() {
				for k := range vecCasesPerCombo {
					names := recipe.Names{Policy: pol, Placer: pla, Scaler: sca}
					seed := uint64(len(pol)*1000+len(pla)*100+len(sca)*10+k) + 1
					t.Run(fmt.Sprintf("%s-%s-%s-%d", pol, pla, sca, k), func(t *testing.T) {
						runVecCase(t, names, seed)
					})
				}
			}
		}
	}
}

// speedOf runs every job at one unit per GPU per second on type 0 and
// two-thirds of that on type 1.
type speedOf struct{}

func (speedOf) Speed(_ *model.Job, t, n int) float64 {
	if t == 1 {
		return float64(n) * 2 / 3
	}
	return float64(n)
}

// vecCluster draws 3 to 8 nodes of two types with 2 to 8 GPUs and random
// capacities; the named resource is on some nodes only.
func vecCluster(rng *rand.Rand) (*model.Cluster, error) {
	types := []model.GPUType{{Name: "fast", MemMiB: 32768, TFLOPS: 15}, {Name: "slow", MemMiB: 16384, TFLOPS: 10}}
	var nodes []model.Node
	for i := range 3 + rng.IntN(6) {
		capa := model.Resources{model.ResourceCPU: int64(2+rng.IntN(31)) * 1000, model.ResourceMemory: int64(4+rng.IntN(125)) << 30,
			model.ResourcePods: int64(2 + rng.IntN(12))}
		if rng.IntN(2) == 0 {
			capa["rdma/hca"] = int64(rng.IntN(4))
		}
		nodes = append(nodes, model.Node{Name: fmt.Sprint("n", i), Type: rng.IntN(2), GPUs: 2 + rng.IntN(7), Capacity: capa})
	}
	return model.NewCluster(types, nodes)
}

// vecJobs draws 8 to 30 jobs submitted over the first 20 minutes.
func vecJobs(rng *rand.Rand) []*model.Job {
	var jobs []*model.Job
	for i := range 8 + rng.IntN(23) {
		g := []int{1, 1, 2, 2, 4, 8}[rng.IntN(6)]
		spec := model.JobSpec{ID: fmt.Sprint("j", i), Submit: model.Time(rng.IntN(1200)) * model.Second,
			GPUs: g, MinGPUs: g, MaxGPUs: g, Duration: model.Time(60+rng.IntN(1800)) * model.Second}
		if rng.IntN(3) == 0 { // elastic
			spec.MinGPUs, spec.MaxGPUs = max(1, g/2), g*2
		}
		if rng.IntN(3) == 0 {
			spec.ReplicaGPUs = 1
		}
		if rng.IntN(5) > 0 {
			spec.Requests = model.Resources{model.ResourceCPU: int64(rng.IntN(12000)), model.ResourceMemory: int64(rng.IntN(48)) << 30}
			if rng.IntN(4) == 0 {
				spec.Requests["rdma/hca"] = 1
			}
		}
		jobs = append(jobs, model.NewJob(spec, i, -1, float64(g)*spec.Duration.Seconds()))
	}
	return jobs
}

// energyTable gives every node the same thresholds.
func energyTable(c *model.Cluster) *placer.EnergyTable {
	return &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: make([]int, len(c.Nodes)),
		Th: [][]placer.LoadThresholds{{{Th1: 0.5, Th2: 0.9}}}}
}

func runVecCase(t *testing.T, names recipe.Names, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 26))
	c, err := vecCluster(rng)
	if err != nil {
		t.Fatal(err)
	}
	o := recipe.DefaultOptions()
	o.Backfill = true
	o.Energy = recipe.EnergyInputs{Cluster: c, Table: energyTable(c)}
	e, err := recipe.New(names, o)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speedOf{})
	jobs := vecJobs(rng)
	next := 0
	for now := model.Time(0); now <= 180*model.Minute; now += 30 * model.Second {
		for ; next < len(jobs) && jobs[next].Spec.Submit <= now; next++ {
			s.Submit(jobs[next])
		}
		endDone(t, s, now)
		plan := e.Schedule(s, now)
		if err := engine.Apply(plan, stateApplier{s: s, t: now}); err != nil {
			t.Fatalf("t=%v: %v", now, err)
		}
		if err := overfull(s); err != nil {
			t.Fatalf("t=%v: %v", now, err)
		}
	}
}

// endDone ends the running jobs whose work is done by now.
func endDone(t *testing.T, s *model.State, now model.Time) {
	t.Helper()
	for _, j := range append([]*model.Job(nil), s.Running()...) {
		if j.Remaining(now) <= 0 {
			if err := s.End(j, model.Finished); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// overfull recomputes, from the running jobs' allocations and specs, what
// every node holds of every resource it offers, and names the first node
// that holds more than it offers.
func overfull(s *model.State) error {
	c := s.Cluster
	held := make([]model.Resources, len(c.Nodes))
	for _, j := range s.Running() {
		model.NodeCounts(j.Alloc, func(n, k int) {
			if held[n] == nil {
				held[n] = model.Resources{}
			}
			reps := int64(model.Replicas(k, j.Spec.ReplicaGPUs))
			for r, q := range j.Spec.Requests {
				held[n][r] += reps * q
			}
			held[n][model.ResourcePods] += reps // a replica is a pod
		})
	}
	for n, node := range c.Nodes {
		for r, capa := range node.Capacity {
			if got := held[n].Get(r); got > capa {
				return fmt.Errorf("node %s holds %s of %s, offers %s", node.Name,
					model.FormatAmount(r, got), r, model.FormatAmount(r, capa))
			}
		}
	}
	return nil
}

// stateApplier applies a plan to the model alone, as the simulator does:
// a preemption stops the job, a resize or migration reallocates it.
type stateApplier struct {
	s *model.State
	t model.Time
}

func (a stateApplier) Update(u engine.Update) error { u.Apply(a.t); return nil }
func (a stateApplier) Reject(x engine.Rejection) error {
	return a.s.End(x.Job, model.Rejected)
}
func (a stateApplier) Preempt(j *model.Job) error {
	j.Done, j.Mark, j.Rate = j.DoneAt(a.t), a.t, 0
	return a.s.Stop(j)
}
func (a stateApplier) Resize(x engine.Assignment) error  { return a.move(x) }
func (a stateApplier) Migrate(x engine.Assignment) error { return a.move(x) }
func (a stateApplier) Start(x engine.Assignment) error {
	if err := a.s.Start(x.Job, x.GPUs); err != nil {
		return err
	}
	a.run(x.Job)
	return nil
}

func (a stateApplier) move(x engine.Assignment) error {
	x.Job.Done = x.Job.DoneAt(a.t)
	if err := a.s.Resize(x.Job, x.GPUs); err != nil {
		return err
	}
	a.run(x.Job)
	return nil
}

// run sets the job's speed on its allocation from now.
func (a stateApplier) run(j *model.Job) {
	j.Mark, j.Resume, j.LastStart = a.t, a.t, a.t
	j.Rate = a.s.Profile.Speed(j, a.s.Cluster.TypeOf(j.Alloc[0]), len(j.Alloc))
	if j.FirstStart < 0 {
		j.FirstStart = a.t
	}
}
