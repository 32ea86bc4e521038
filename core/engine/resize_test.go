package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// rzJob is a job of a Resizer fixture: min..max GPUs in replicas of r
// (0: 1), running on the named GPUs ("n1/0 n1/1"), or waiting when gpus is
// empty.
type rzJob struct {
	id             string
	minG, maxG, r1 int
	gpus           string
}

// rzFix is a state with a pool and a resizer over it, reset for one round.
// Its cluster is n0, n1, n2 (type a) and n3 (type b), 4 GPUs each.
type rzFix struct {
	t    *testing.T
	s    *model.State
	p    *Pool
	r    *Resizer
	jobs map[string]*model.Job
}

func newRzFix(t *testing.T, jobs ...rzJob) *rzFix {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}, {Name: "b", MemMiB: 1, TFLOPS: 1}}
	c, err := model.NewCluster(types, []model.Node{{Name: "n0", GPUs: 4}, {Name: "n1", GPUs: 4}, {Name: "n2", GPUs: 4}, {Name: "n3", Type: 1, GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	f := &rzFix{t: t, s: model.NewState(c, rzSpeed{}), jobs: map[string]*model.Job{}}
	for i, sj := range jobs {
		j := model.NewJob(model.JobSpec{ID: sj.id, GPUs: sj.maxG, MinGPUs: sj.minG, MaxGPUs: sj.maxG, ReplicaGPUs: sj.r1}, i, -1, 1)
		f.jobs[sj.id] = j
		f.s.Submit(j)
		if sj.gpus != "" {
			if err := f.s.Start(j, f.gpus(sj.gpus)); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.p = NewPool(c)
	f.p.Reset(f.s)
	f.r = newResizer()
	f.r.reset(f.s, f.p)
	return f
}

// gpus parses "n1/0 n1/1".
func (f *rzFix) gpus(names string) []model.GPU {
	var out []model.GPU
	for _, name := range strings.Fields(names) {
		node, idx, _ := strings.Cut(name, "/")
		n := slices.IndexFunc(f.s.Cluster.Nodes, func(x model.Node) bool { return x.Name == node })
		if n < 0 || len(idx) != 1 {
			f.t.Fatalf("bad GPU name %q", name)
		}
		out = append(out, model.GPU{Node: int32(n), Index: int32(idx[0] - '0')})
	}
	return out
}

func (f *rzFix) names(gpus []model.GPU) string {
	var out []string
	for _, g := range gpus {
		out = append(out, f.s.Cluster.GPUName(g))
	}
	return strings.Join(out, " ")
}

// alloc is job id's tentative allocation.
func (f *rzFix) alloc(id string) string { return f.names(f.r.alloc[f.jobs[id]]) }

// masks is the pool's free GPUs, node by node.
func (f *rzFix) masks() []uint64 {
	var out []uint64
	for n := range f.s.Cluster.Nodes {
		out = append(out, f.p.NodeMask(n))
	}
	return out
}

func (f *rzFix) grow(id string, k int, want bool) {
	f.t.Helper()
	if got := f.r.Grow(f.jobs[id], k); got != want {
		f.t.Fatalf("Grow(%s, %d) = %v, want %v", id, k, got, want)
	}
}

func (f *rzFix) shrink(id string, k int, want bool) {
	f.t.Helper()
	if got := f.r.Shrink(f.jobs[id], k); got != want {
		f.t.Fatalf("Shrink(%s, %d) = %v, want %v", id, k, got, want)
	}
}

func (f *rzFix) ids() []string {
	var out []string
	for _, j := range f.r.Jobs() {
		out = append(out, j.Spec.ID)
	}
	return out
}

// TestResizerGrowOwnNodesFirst: Grow takes free GPUs of the job's type on
// the nodes it already uses, in allocation order (lowest index first on
// each), then on the node with the most free GPUs.
func TestResizerGrowOwnNodesFirst(t *testing.T) {
	// Free type a: n0 2 (n0/2, n0/3), n1 2 (n1/2, n1/3), n2 4.
	f := newRzFix(t, rzJob{"R", 2, 2, 0, "n0/0 n0/1"}, rzJob{"J", 1, 8, 0, "n1/0 n1/1"})
	// J's node n1 gives 2, then the fullest node n2 (4 free > n0's 2).
	f.grow("J", 3, true)
	if got, want := f.alloc("J"), "n1/0 n1/1 n1/2 n1/3 n2/0"; got != want {
		t.Errorf("after Grow 3: %s, want %s", got, want)
	}
	if f.p.Free(0) != 5 || f.p.NodeFree(2) != 3 {
		t.Errorf("pool: %d free of type a, %d on n2; want 5, 3", f.p.Free(0), f.p.NodeFree(2))
	}
	// n2 is now one of J's nodes: its GPUs come before n0's.
	f.grow("J", 2, true)
	if got, want := f.alloc("J"), "n1/0 n1/1 n1/2 n1/3 n2/0 n2/1 n2/2"; got != want {
		t.Errorf("after Grow 2: %s, want %s", got, want)
	}
	f.grow("J", 2, false) // 9 > max 8
	f.grow("J", 1, true)
	if got, want := f.alloc("J"), "n1/0 n1/1 n1/2 n1/3 n2/0 n2/1 n2/2 n2/3"; got != want {
		t.Errorf("after Grow 1: %s, want %s", got, want)
	}
	if f.r.Size(f.jobs["J"]) != 8 || len(f.jobs["J"].Alloc) != 2 {
		t.Errorf("size %d (want 8), state allocation %d GPUs (want 2: the state is not changed)", f.r.Size(f.jobs["J"]), len(f.jobs["J"].Alloc))
	}
}

// TestResizerGrowAllocationOrder: own nodes are visited in the order of the
// allocation (n2 before n0), even when another node has more free GPUs.
func TestResizerGrowAllocationOrder(t *testing.T) {
	// Free type a: n0 1 (n0/3), n1 4, n2 3.
	f := newRzFix(t, rzJob{"R", 2, 2, 0, "n0/0 n0/1"}, rzJob{"X", 1, 8, 0, "n2/0 n0/2"})
	f.grow("X", 4, true)
	if got, want := f.alloc("X"), "n2/0 n0/2 n2/1 n2/2 n2/3 n0/3"; got != want {
		t.Errorf("X grew to %s, want %s", got, want)
	}
	// Nothing left on its nodes: the fullest node n1, lowest index first.
	f.grow("X", 2, true)
	if got, want := f.alloc("X"), "n2/0 n0/2 n2/1 n2/2 n2/3 n0/3 n1/0 n1/1"; got != want {
		t.Errorf("X grew to %s, want %s", got, want)
	}
}

// TestResizerShrinkDropsLast: Shrink gives back the job's last GPUs (the
// highest replica indices) and keeps the first ones in order.
func TestResizerShrinkDropsLast(t *testing.T) {
	f := newRzFix(t, rzJob{"J", 1, 8, 0, "n1/0 n1/1 n2/0 n1/2"}, rzJob{"K", 2, 8, 2, "n0/0 n0/1 n0/2 n0/3 n2/3 n2/2"})
	f.shrink("J", 2, true)
	if got, want := f.alloc("J"), "n1/0 n1/1"; got != want {
		t.Errorf("J shrank to %s, want %s", got, want)
	}
	if !f.p.AllFree(f.gpus("n2/0 n1/2")) || f.p.AllFree(f.gpus("n1/1")) {
		t.Errorf("pool after the shrink: n2/0 and n1/2 should be free, n1/1 not")
	}
	f.shrink("K", 2, true)
	f.shrink("K", 2, true)
	if got, want := f.alloc("K"), "n0/0 n0/1"; got != want {
		t.Errorf("K shrank to %s, want %s", got, want)
	}
	f.shrink("K", 2, false) // below min 2
	if got := f.names(f.jobs["J"].Alloc); got != "n1/0 n1/1 n2/0 n1/2" {
		t.Errorf("the state's allocation of J changed: %s", got)
	}
}

// TestResizerBounds: sizes stay within [min, max] in steps of the replica
// size; a refused Grow or Shrink changes nothing.
func TestResizerBounds(t *testing.T) {
	jobs := []rzJob{
		{"R", 2, 2, 0, "n0/0 n0/1"},           // rigid: no candidate
		{"J", 1, 4, 0, "n1/0 n1/1"},           // 2 of 1..4
		{"K", 2, 8, 2, "n1/2 n1/3 n2/0 n2/1"}, // 4 of 2..8, replicas of 2
		{"B", 2, 8, 2, "n3/0 n3/1 n3/2 n3/3"}, // type b, which is full
		{"Q", 1, 4, 0, ""},                    // waiting: no candidate
		{"S", 2, 8, 0, "n2/2 n2/3"},           // at its minimum; n0/2, n0/3 stay free
		{"M", 1, 2, 0, ""},                    // waiting
	}
	for _, tc := range []struct {
		name string
		op   func(f *rzFix) bool
	}{
		{"grow beyond max", func(f *rzFix) bool { return f.r.Grow(f.jobs["J"], 3) }},
		{"grow by zero", func(f *rzFix) bool { return f.r.Grow(f.jobs["J"], 0) }},
		{"grow by a negative count", func(f *rzFix) bool { return f.r.Grow(f.jobs["J"], -1) }},
		{"grow by part of a replica", func(f *rzFix) bool { return f.r.Grow(f.jobs["K"], 1) }},
		{"grow without free GPUs of its type", func(f *rzFix) bool { return f.r.Grow(f.jobs["B"], 2) }},
		{"grow a rigid job", func(f *rzFix) bool { return f.r.Grow(f.jobs["R"], 1) }},
		{"grow a waiting job", func(f *rzFix) bool { return f.r.Grow(f.jobs["Q"], 1) }},
		{"shrink below min", func(f *rzFix) bool { return f.r.Shrink(f.jobs["J"], 2) }},
		{"shrink a job at its min", func(f *rzFix) bool { return f.r.Shrink(f.jobs["S"], 1) }},
		{"shrink by zero", func(f *rzFix) bool { return f.r.Shrink(f.jobs["J"], 0) }},
		{"shrink by a negative count", func(f *rzFix) bool { return f.r.Shrink(f.jobs["J"], -1) }},
		{"shrink by part of a replica", func(f *rzFix) bool { return f.r.Shrink(f.jobs["K"], 1) }},
		{"shrink a rigid job", func(f *rzFix) bool { return f.r.Shrink(f.jobs["R"], 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRzFix(t, jobs...)
			masks, sizes := f.masks(), map[string]int{}
			for id, j := range f.jobs {
				sizes[id] = f.r.Size(j)
			}
			if tc.op(f) {
				t.Fatal("accepted")
			}
			if !slices.Equal(f.masks(), masks) {
				t.Error("a refused change changed the pool")
			}
			for id, j := range f.jobs {
				if f.r.Size(j) != sizes[id] {
					t.Errorf("a refused change changed the size of %s", id)
				}
			}
		})
	}
	// The limits themselves are allowed.
	f := newRzFix(t, jobs...)
	f.grow("J", 2, true) // 4 = max
	f.shrink("K", 2, true)
	if f.r.Size(f.jobs["J"]) != 4 || f.r.Size(f.jobs["K"]) != 2 {
		t.Errorf("J %d (want 4), K %d (want 2)", f.r.Size(f.jobs["J"]), f.r.Size(f.jobs["K"]))
	}
	f.shrink("K", 2, false) // below min 2
	f.grow("J", 1, false)   // above max 4
}

// TestResizerOneDirection: a job grows or shrinks in a round, never both.
func TestResizerOneDirection(t *testing.T) {
	f := newRzFix(t, rzJob{"J", 1, 8, 0, "n1/0 n1/1"}, rzJob{"K", 1, 8, 0, "n2/0 n2/1 n2/2"})
	f.grow("J", 1, true)
	f.shrink("J", 1, false) // not even the replica it just got
	f.grow("J", 1, true)    // growing again is fine
	f.shrink("K", 1, true)
	f.grow("K", 1, false)
	f.shrink("K", 1, true)
	if f.r.Size(f.jobs["J"]) != 4 || f.r.Size(f.jobs["K"]) != 1 {
		t.Errorf("J %d (want 4), K %d (want 1)", f.r.Size(f.jobs["J"]), f.r.Size(f.jobs["K"]))
	}
}

// TestResizerRollback: rollback undoes every change since begin, newest
// first: the pool, the sizes, the surplus and each job's direction; changes
// before begin (or committed) stay.
func TestResizerRollback(t *testing.T) {
	f := newRzFix(t, rzJob{"J", 1, 8, 0, "n1/0 n1/1"}, rzJob{"K", 2, 8, 2, "n2/0 n2/1 n2/2 n2/3"}, rzJob{"L", 1, 4, 0, "n0/0"})
	f.grow("L", 1, true) // outside any transaction
	masks := f.masks()
	surplus := f.r.Surplus(0)
	lAlloc := f.alloc("L")

	f.r.begin()
	f.grow("J", 2, true)
	f.shrink("K", 2, true)
	f.grow("J", 1, true)
	f.grow("L", 1, true)
	f.r.rollback()

	if got := f.alloc("J"); got != "n1/0 n1/1" {
		t.Errorf("J after rollback: %s", got)
	}
	if got := f.alloc("K"); got != "n2/0 n2/1 n2/2 n2/3" {
		t.Errorf("K after rollback: %s", got)
	}
	if got := f.alloc("L"); got != lAlloc {
		t.Errorf("L after rollback: %s, want %s (its growth before begin stays)", got, lAlloc)
	}
	if !slices.Equal(f.masks(), masks) {
		t.Errorf("pool after rollback %x, want %x", f.masks(), masks)
	}
	if f.r.Surplus(0) != surplus {
		t.Errorf("surplus after rollback %d, want %d", f.r.Surplus(0), surplus)
	}
	var plan Plan
	f.r.finish(&plan)
	if len(plan.Resize) != 1 || plan.Resize[0].Job != f.jobs["L"] {
		t.Errorf("resizes after rollback: %d, want only L's growth", len(plan.Resize))
	}
	// Directions are restored: J (grown, rolled back) may shrink, K (shrunk,
	// rolled back) may grow; L keeps its direction from before begin.
	f.shrink("J", 1, true)
	f.grow("K", 2, true)
	f.shrink("L", 1, false)

	// A committed transaction stays when a later one is rolled back (the
	// engine's pattern: each donate begins, then commits or rolls back).
	f.r.begin()
	f.grow("K", 2, true)
	f.r.commit()
	f.r.begin()
	f.grow("L", 1, true) // on the last free GPU of type a
	f.r.rollback()
	if f.r.Size(f.jobs["K"]) != 8 || f.r.Size(f.jobs["L"]) != 2 || f.p.Free(0) != 1 {
		t.Errorf("K %d (want 8, committed), L %d (want 2, rolled back), %d free (want 1)",
			f.r.Size(f.jobs["K"]), f.r.Size(f.jobs["L"]), f.p.Free(0))
	}
}

// TestResizerJobs: the candidates are the running elastic jobs by arrival
// rank, less those stopped (held) or moved (released) this round, then the
// elastic jobs the round starts, in start order. Held and moved jobs cannot
// be resized.
func TestResizerJobs(t *testing.T) {
	f := newRzFix(t,
		rzJob{"A", 1, 4, 0, "n0/0"},
		rzJob{"R", 2, 2, 0, "n0/1 n0/2"}, // rigid
		rzJob{"S", 1, 4, 0, "n1/0"},      // stopped this round
		rzJob{"M", 1, 4, 0, "n1/1"},      // moved this round
		rzJob{"C", 1, 4, 0, "n2/0"},
		rzJob{"W2", 1, 4, 0, ""}, // started second
		rzJob{"W1", 1, 4, 0, ""}, // started first
		rzJob{"WR", 2, 2, 0, ""}, // rigid, started
	)
	if got, want := f.ids(), []string{"A", "S", "M", "C"}; !slices.Equal(got, want) {
		t.Fatalf("Jobs() = %v, want %v", got, want)
	}
	if f.r.Surplus(0) != 0 {
		t.Errorf("surplus %d, want 0 (every job at its minimum)", f.r.Surplus(0))
	}
	f.p.Hold(f.jobs["S"])
	f.p.Release(f.jobs["M"])
	f.r.addStarted(Assignment{Job: f.jobs["W1"], GPUs: f.gpus("n2/1 n2/2")})
	f.r.addStarted(Assignment{Job: f.jobs["W2"], GPUs: f.gpus("n2/3")})
	f.r.addStarted(Assignment{Job: f.jobs["WR"], GPUs: f.gpus("n3/0 n3/1")})
	f.r.addStarted(Assignment{Job: f.jobs["W1"], GPUs: f.gpus("n2/1 n2/2")}) // twice: once
	if got, want := f.ids(), []string{"A", "C", "W1", "W2"}; !slices.Equal(got, want) {
		t.Errorf("Jobs() = %v, want %v", got, want)
	}
	if f.r.Surplus(0) != 1 {
		t.Errorf("surplus %d, want 1 (W1 started one above its minimum)", f.r.Surplus(0))
	}
	f.grow("S", 1, false)
	f.grow("M", 1, false)
	f.shrink("M", 1, false)
	// A job the resizer changed stays a candidate (it holds it itself).
	f.grow("A", 1, true)
	if got := f.ids(); !slices.Contains(got, "A") {
		t.Errorf("Jobs() = %v after growing A, want A in it", got)
	}
	if f.p.Settled(f.jobs["A"]) {
		t.Error("a resized job is still settled: a placer could move it")
	}
}

// TestResizerFinish: resized running jobs become Resize entries with a
// Resized trace; jobs the round starts get their new size in their Start
// allocation and no Resize; unchanged jobs get nothing.
func TestResizerFinish(t *testing.T) {
	f := newRzFix(t, rzJob{"J", 1, 8, 0, "n1/0 n1/1"}, rzJob{"K", 1, 8, 0, "n2/0 n2/1 n2/2"},
		rzJob{"U", 1, 8, 0, "n0/0"}, rzJob{"W", 1, 4, 0, ""})
	start := Assignment{Job: f.jobs["W"], GPUs: f.gpus("n0/1")}
	f.p.Take(start.GPUs)
	plan := Plan{Start: []Assignment{start}}
	f.r.addStarted(start)
	f.grow("J", 1, true)
	f.shrink("K", 2, true)
	f.grow("W", 2, true)
	f.r.finish(&plan)
	var got []string
	for _, a := range plan.Resize {
		got = append(got, a.Job.Spec.ID+"="+f.names(a.GPUs))
	}
	if want := []string{"J=n1/0 n1/1 n1/2", "K=n2/0"}; !slices.Equal(got, want) {
		t.Errorf("Resize %v, want %v", got, want)
	}
	if got, want := f.names(plan.Start[0].GPUs), "n0/1 n0/2 n0/3"; got != want {
		t.Errorf("W starts on %s, want %s", got, want)
	}
	var tr []string
	for _, d := range plan.Trace {
		tr = append(tr, d.Job+":"+d.Status.String())
	}
	if want := []string{"J:resized", "K:resized"}; !slices.Equal(tr, want) {
		t.Errorf("trace %v, want %v", tr, want)
	}
}

// rzPolicy is FIFO with backfill that stops the given running jobs.
type rzPolicy struct{ stop []*model.Job }

func (rzPolicy) Name() string { return "rz" }
func (p rzPolicy) Order(s *model.State, _ model.Time, _ []*model.Job) Order {
	return Order{Jobs: s.Waiting(), Backfill: true, Stop: p.stop}
}

// rzPlacer places job "W" on mover's GPUs and moves mover to n1/0, n1/1;
// other jobs on the lowest free GPUs.
type rzPlacer struct{ mover *model.Job }

func (rzPlacer) Name() string { return "rz" }
func (m rzPlacer) Place(_ *model.State, p *Pool, j *model.Job, n int, _ TypeSet) Placement {
	if j.Spec.ID == "W" {
		return Placement{GPUs: m.mover.Alloc, Moves: []Assignment{{Job: m.mover, GPUs: []model.GPU{{Node: 1, Index: 0}, {Node: 1, Index: 1}}}}}
	}
	var g []model.GPU
	for node := range p.Cluster().Nodes {
		g = p.Lowest(g, node, n-len(g))
	}
	if len(g) < n {
		return Placement{}
	}
	return Placement{GPUs: g}
}

// rzScaler records what the resizer offers and tries to grow every job.
type rzScaler struct {
	jobs  []string
	grown map[string]bool
}

func (*rzScaler) Name() string { return "rz" }
func (sc *rzScaler) Scale(s *model.State, _ model.Time, r *Resizer) {
	sc.jobs, sc.grown = nil, map[string]bool{}
	for _, j := range r.Jobs() {
		sc.jobs = append(sc.jobs, j.Spec.ID)
	}
	for _, j := range s.Running() {
		sc.grown[j.Spec.ID] = r.Grow(j, 1)
	}
}

// TestResizerThroughEngine: in a real round, the job the policy stops (S)
// and the job the placer moves (M) are not offered to the scaler and cannot
// be grown; the elastic job the round starts (W2) comes last.
func TestResizerThroughEngine(t *testing.T) {
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}
	c, err := model.NewCluster(types, []model.Node{{Name: "n0", GPUs: 4}, {Name: "n1", GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, rzSpeed{})
	jobs := map[string]*model.Job{}
	for i, sj := range []struct {
		id         string
		minG, maxG int
		gpus       []model.GPU
	}{
		{"M", 1, 4, []model.GPU{{Node: 0, Index: 0}, {Node: 0, Index: 1}}},
		{"S", 1, 4, []model.GPU{{Node: 0, Index: 2}}},
		{"E", 1, 4, []model.GPU{{Node: 0, Index: 3}}},
		{"W", 2, 2, nil},
		{"W2", 1, 2, nil},
	} {
		j := model.NewJob(model.JobSpec{ID: sj.id, Submit: model.Time(i), GPUs: sj.maxG, MinGPUs: sj.minG, MaxGPUs: sj.maxG}, i, -1, 1)
		jobs[sj.id] = j
		s.Submit(j)
		if sj.gpus != nil {
			if err := s.Start(j, sj.gpus); err != nil {
				t.Fatal(err)
			}
		}
	}
	sc := &rzScaler{}
	e, err := New(rzPolicy{stop: []*model.Job{jobs["S"]}}, rzPlacer{mover: jobs["M"]}, sc)
	if err != nil {
		t.Fatal(err)
	}
	plan := e.Schedule(s, 0)
	if len(plan.Migrate) != 1 || plan.Migrate[0].Job != jobs["M"] || len(plan.Start) != 2 {
		t.Fatalf("the round should move M and start W and W2: migrate %d, start %d", len(plan.Migrate), len(plan.Start))
	}
	if want := []string{"E", "W2"}; !slices.Equal(sc.jobs, want) {
		t.Errorf("Jobs() = %v, want %v", sc.jobs, want)
	}
	if sc.grown["S"] || sc.grown["M"] || !sc.grown["E"] {
		t.Errorf("grown %v: S and M must be refused, E accepted", sc.grown)
	}
}

// rzSpeed gives n GPUs the speed n, except that a job whose ID starts with
// "z" cannot run on 3 GPUs (a zero entry in its throughput matrix row).
type rzSpeed struct{}

func (rzSpeed) Speed(j *model.Job, _, n int) float64 {
	if strings.HasPrefix(j.Spec.ID, "z") && n == 3 {
		return 0
	}
	return float64(n)
}

// TestResizerNeverToZeroSpeed: a job is neither grown nor shrunk to a GPU
// count at which its profile gives it no speed (the fulfillment scaler's
// overflow of issue 13: a job grown onto a zero matrix entry made no
// progress and its finish time overflowed); other sizes stay allowed.
func TestResizerNeverToZeroSpeed(t *testing.T) {
	f := newRzFix(t,
		rzJob{id: "zg", minG: 1, maxG: 4, gpus: "n0/0 n0/1"},
		rzJob{id: "zs", minG: 1, maxG: 4, gpus: "n1/0 n1/1 n1/2 n1/3"},
	)
	f.grow("zg", 1, false) // to 3: no speed there
	f.grow("zg", 2, true)  // to 4: fine
	if got := f.alloc("zg"); got != "n0/0 n0/1 n0/2 n0/3" {
		t.Errorf("zg holds %s after growing to 4", got)
	}
	f.shrink("zs", 1, false) // to 3: no speed there
	f.shrink("zs", 2, true)  // to 2: fine
}
