package scaler_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
)

// perGPU runs every job at 1 work unit per second per GPU on every type.
type perGPU struct{}

func (perGPU) Speed(_ *model.Job, _, n int) float64 { return float64(n) }

// nd is a node: its GPU type name and GPU count. Nodes are named n0, n1, ...
type nd struct {
	typ  string
	gpus int
}

// jb builds a test job: its spec, its resize history (seed 000's ordering
// keys) and, when n > 0, the GPUs it already runs on.
type jb struct {
	spec             model.JobSpec
	exp, shr         int
	lastExp, lastShr model.Time
	n                int   // GPUs it runs on; 0: it waits
	on               []int // nodes to take them from, in order (all when empty)
}

// el is an elastic job of min..max GPUs (it requests max, as
// sim.MakeElastic does); rg a rigid job of n GPUs.
func el(id string, minG, maxG int) *jb {
	return &jb{spec: model.JobSpec{ID: id, GPUs: maxG, MinGPUs: minG, MaxGPUs: maxG}, lastExp: -1, lastShr: -1}
}

func rg(id string, n int) *jb {
	return &jb{spec: model.JobSpec{ID: id, GPUs: n, MinGPUs: n, MaxGPUs: n}, lastExp: -1, lastShr: -1}
}

// running makes the job run on n GPUs: the lowest free ones of the given
// nodes, in order (of every node when none is given).
func (b *jb) running(n int, nodes ...int) *jb { b.n, b.on = n, nodes; return b }
func (b *jb) replica(r int) *jb               { b.spec.ReplicaGPUs = r; return b }
func (b *jb) prio(p int) *jb                  { b.spec.Priority = p; return b }
func (b *jb) gpuType(t string) *jb            { b.spec.GPUType = t; return b }
func (b *jb) cpu(milli int) *jb               { b.req(model.ResourceCPU, int64(milli)); return b }
func (b *jb) mem(mib int) *jb                 { b.req(model.ResourceMemory, int64(mib)<<20); return b }
func (b *jb) requests(n int) *jb              { b.spec.GPUs = n; return b }

// expanded and shrunk set the job's past expansions or shrinks and the time
// of the last one (-1: never).
func (b *jb) expanded(n int, last model.Time) *jb { b.exp, b.lastExp = n, last; return b }
func (b *jb) shrunk(n int, last model.Time) *jb   { b.shr, b.lastShr = n, last; return b }

// world is a state with its jobs by id; jobs arrive in the order they are
// added (Seq and Submit = that rank).
type world struct {
	s    *model.State
	jobs map[string]*model.Job
}

func newWorld(t testing.TB, nodes []nd, jobs ...*jb) *world {
	t.Helper()
	var types []model.GPUType
	var ns []model.Node
	for i, n := range nodes {
		ti := slices.IndexFunc(types, func(g model.GPUType) bool { return g.Name == n.typ })
		if ti < 0 {
			types, ti = append(types, model.GPUType{Name: n.typ, MemMiB: 16384, TFLOPS: 1}), len(types)
		}
		ns = append(ns, model.Node{Name: fmt.Sprintf("n%d", i), Type: ti, GPUs: n.gpus})
	}
	c, err := model.NewCluster(types, ns)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{s: model.NewState(c, perGPU{}), jobs: map[string]*model.Job{}}
	for _, b := range jobs {
		w.add(t, b)
	}
	return w
}

func (w *world) add(t testing.TB, b *jb) *model.Job {
	t.Helper()
	seq := len(w.jobs)
	spec := b.spec
	spec.Submit = model.Time(seq)
	j := model.NewJob(spec, seq, -1, 1e9)
	j.Expansions, j.LastExpand, j.Shrinks, j.LastShrink = b.exp, b.lastExp, b.shr, b.lastShr
	w.jobs[spec.ID] = j
	w.s.Submit(j)
	if b.n == 0 {
		return j
	}
	nodes := b.on
	if len(nodes) == 0 {
		for i := range w.s.Cluster.Nodes {
			nodes = append(nodes, i)
		}
	}
	var alloc []model.GPU
	for _, n := range nodes {
		m := w.s.FreeMask(n)
		for g := 0; g < w.s.Cluster.Nodes[n].GPUs && len(alloc) < b.n; g++ {
			if m&(1<<uint(g)) != 0 {
				alloc = append(alloc, model.GPU{Node: int32(n), Index: int32(g)})
			}
		}
	}
	if len(alloc) < b.n {
		t.Fatalf("job %s: only %d free GPUs on nodes %v, want %d", spec.ID, len(alloc), nodes, b.n)
	}
	if err := w.s.Start(j, alloc); err != nil {
		t.Fatal(err)
	}
	j.Rate = float64(len(alloc))
	return j
}

// newEngine is the engine the scenarios drive: FIFO with backfill, pack and
// the scaler under test.
func newEngine(t testing.TB, sc engine.Scaler) *engine.Engine {
	t.Helper()
	e, err := engine.New(policy.FIFO{Backfill: true}, placer.Pack{}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sizes maps job id to GPU count; fmt prints maps sorted by key, so
// fmt.Sprint(sizes(...)) compares as a string.
func sizes(as []engine.Assignment) map[string]int {
	out := map[string]int{}
	for _, a := range as {
		out[a.Job.Spec.ID] = len(a.GPUs)
	}
	return out
}

func sameSizes(got map[string]int, want map[string]int) bool {
	if want == nil {
		want = map[string]int{}
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}

// checkPlan checks the allocations of a plan without Migrate entries against
// the state it was computed from: a resize keeps the job's GPUs and adds GPUs
// of the same type (grow) or drops its last ones (shrink), stays within
// [min, max] in replica steps, and every GPU a resize or a start takes is
// free, or freed by a shrink of the same plan, and taken once.
func checkPlan(t testing.TB, s *model.State, p engine.Plan) {
	t.Helper()
	c := s.Cluster
	owner := map[model.GPU]string{}
	for _, j := range s.Running() {
		for _, g := range j.Alloc {
			owner[g] = j.Spec.ID
		}
	}
	freed := map[model.GPU]bool{}
	for _, v := range p.Preempt {
		for _, g := range v.Alloc {
			freed[g] = true
		}
	}
	type claim struct {
		job  *model.Job
		gpus []model.GPU
	}
	var claims []claim
	bounds := func(j *model.Job, gpus []model.GPU) {
		n, sp := len(gpus), &j.Spec
		if n < sp.MinGPUs || n > sp.MaxGPUs || n%sp.Replica() != 0 {
			t.Errorf("%s gets %d GPUs, outside [%d, %d] in steps of %d", sp.ID, n, sp.MinGPUs, sp.MaxGPUs, sp.Replica())
		}
		for _, g := range gpus {
			if c.TypeOf(g) != c.TypeOf(gpus[0]) {
				t.Errorf("%s gets GPUs of two types: %v", sp.ID, gpus)
			}
		}
	}
	for _, a := range p.Resize {
		old := a.Job.Alloc
		bounds(a.Job, a.GPUs)
		switch {
		case len(a.GPUs) < len(old):
			if !slices.Equal(a.GPUs, old[:len(a.GPUs)]) {
				t.Errorf("shrink of %s does not keep its first GPUs: %v -> %v", a.Job.Spec.ID, old, a.GPUs)
			}
			for _, g := range old[len(a.GPUs):] {
				freed[g] = true
			}
		case len(a.GPUs) > len(old):
			if !slices.Equal(a.GPUs[:len(old)], old) {
				t.Errorf("growth of %s does not keep its GPUs: %v -> %v", a.Job.Spec.ID, old, a.GPUs)
			}
			if c.TypeOf(a.GPUs[0]) != c.TypeOf(old[0]) {
				t.Errorf("growth of %s changes its GPU type", a.Job.Spec.ID)
			}
			claims = append(claims, claim{a.Job, a.GPUs[len(old):]})
		default:
			t.Errorf("resize of %s does not change its size", a.Job.Spec.ID)
		}
	}
	for _, a := range p.Start {
		bounds(a.Job, a.GPUs)
		claims = append(claims, claim{a.Job, a.GPUs})
	}
	for _, a := range p.Migrate {
		bounds(a.Job, a.GPUs)
		for _, g := range a.Job.Alloc {
			freed[g] = true
		}
		claims = append(claims, claim{a.Job, a.GPUs})
	}
	taken := map[model.GPU]string{}
	for _, cl := range claims {
		for _, g := range cl.gpus {
			if o := owner[g]; o != "" && !freed[g] {
				t.Errorf("%s takes GPU %s of %s", cl.job.Spec.ID, c.GPUName(g), o)
			}
			if o := taken[g]; o != "" {
				t.Errorf("%s and %s both take GPU %s", o, cl.job.Spec.ID, c.GPUName(g))
			}
			taken[g] = cl.job.Spec.ID
		}
	}
}

// usedAfter is the number of GPUs in use once the plan is applied.
func usedAfter(s *model.State, p engine.Plan) int {
	used := s.Cluster.TotalGPUs() - s.FreeGPUs()
	for _, a := range p.Resize {
		used += len(a.GPUs) - len(a.Job.Alloc)
	}
	for _, a := range p.Start {
		used += len(a.GPUs)
	}
	for _, v := range p.Preempt {
		used -= len(v.Alloc)
	}
	return used
}

func (b *jb) req(name string, v int64) {
	if b.spec.Requests == nil {
		b.spec.Requests = model.Resources{}
	}
	b.spec.Requests[name] = v
}
