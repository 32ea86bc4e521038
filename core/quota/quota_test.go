package quota_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/quota"
)

// speeds runs every job at n units/s on n GPUs of type 0 ("v100") and a
// quarter of that on type 1 ("k80"): a K80 GPU-hour is worth 0.25.
type speeds struct{}

func (speeds) Speed(_ *model.Job, t, n int) float64 {
	if t == 1 {
		return float64(n) / 4
	}
	return float64(n)
}

// world is a cluster, its state, an engine with the queue layer and the
// jobs by id.
type world struct {
	t    *testing.T
	s    *model.State
	e    *engine.Engine
	q    *quota.Policy
	jobs map[string]*model.Job
	seq  int
}

// newWorld builds nodes of v100s (and of k80s), each of perNode GPUs, and
// the queue layer over inner with cfg.
func newWorld(t *testing.T, v100, k80, perNode int, inner engine.QueuePolicy, cfg quota.Config) *world {
	t.Helper()
	types := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	var nodes []model.Node
	for i := 0; i < v100/perNode; i++ {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("v%d", i), Type: 0, GPUs: perNode})
	}
	for i := 0; i < k80/perNode; i++ {
		nodes = append(nodes, model.Node{Name: fmt.Sprintf("k%d", i), Type: 1, GPUs: perNode})
	}
	c, err := model.NewCluster(types, nodes)
	if err != nil {
		t.Fatal(err)
	}
	q, err := quota.New(inner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(q, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, s: model.NewState(c, speeds{}), e: e, q: q, jobs: map[string]*model.Job{}}
}

// add submits job id of queue q with gpus GPUs at time at.
func (w *world) add(id, q string, gpus int, at model.Time) *model.Job {
	j := model.NewJob(model.JobSpec{ID: id, Queue: q, Submit: at, GPUs: gpus, MinGPUs: gpus, MaxGPUs: gpus}, w.seq, -1, 1e9)
	w.seq++
	w.jobs[id] = j
	w.s.Submit(j)
	return j
}

// run submits and starts job id on GPUs named "node/index" at time at.
func (w *world) run(id, q string, at model.Time, gpus ...string) *model.Job {
	w.t.Helper()
	j := w.add(id, q, len(gpus), at)
	var alloc []model.GPU
	for _, g := range gpus {
		var ni, gi int
		node, idx, _ := strings.Cut(g, "/")
		fmt.Sscan(idx, &gi)
		for i, n := range w.s.Cluster.Nodes {
			if n.Name == node {
				ni = i
			}
		}
		alloc = append(alloc, model.GPU{Node: int32(ni), Index: int32(gi)})
	}
	if err := w.s.Start(j, alloc); err != nil {
		w.t.Fatal(err)
	}
	j.FirstStart, j.LastStart = at, at
	return j
}

// round schedules at now and applies the plan to the state.
func (w *world) round(now model.Time) engine.Plan {
	w.t.Helper()
	plan := w.e.Schedule(w.s, now)
	if err := engine.Apply(plan, applier{w, now}); err != nil {
		w.t.Fatal(err)
	}
	return plan
}

type applier struct {
	w   *world
	now model.Time
}

func (a applier) Update(u engine.Update) error      { u.Apply(a.now); return nil }
func (a applier) Reject(r engine.Rejection) error   { return a.w.s.End(r.Job, model.Rejected) }
func (a applier) Preempt(j *model.Job) error        { j.EndPeriod(a.now, a.w.s.Cluster); return a.w.s.Stop(j) }
func (a applier) Resize(x engine.Assignment) error  { return a.w.s.Resize(x.Job, x.GPUs) }
func (a applier) Migrate(x engine.Assignment) error { return a.w.s.Resize(x.Job, x.GPUs) }
func (a applier) Start(x engine.Assignment) error {
	x.Job.LastStart = a.now
	return a.w.s.Start(x.Job, x.GPUs)
}

// ids returns the ids of jobs, sorted.
func ids(jobs []*model.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Spec.ID)
	}
	sort.Strings(out)
	return out
}

func started(p engine.Plan) []string {
	var out []string
	for _, a := range p.Start {
		out = append(out, fmt.Sprintf("%s:%d", a.Job.Spec.ID, len(a.GPUs)))
	}
	sort.Strings(out)
	return out
}

// held returns what each queue holds now, per type, as "q:type=n".
func (w *world) held() []string {
	m := map[string]int{}
	for _, j := range w.s.Running() {
		m[j.Spec.Queue+":"+w.s.Cluster.Types[w.s.Cluster.TypeOf(j.Alloc[0])].Name] += len(j.Alloc)
	}
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

func two(qa, qb int) quota.Config {
	return quota.Config{Queues: []quota.Queue{
		{Name: "a", Quota: map[string]int{"v100": qa}, Weight: 1},
		{Name: "b", Quota: map[string]int{"v100": qb}, Weight: 1},
	}}
}

const s = model.Second

// TestBorrowIdle: with queue b empty, queue a borrows b's idle quota.
func TestBorrowIdle(t *testing.T) {
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, two(2, 2))
	for i := range 4 {
		w.add(fmt.Sprintf("a%d", i), "a", 1, 0)
	}
	p := w.round(0)
	if got := started(p); !slices.Equal(got, []string{"a0:1", "a1:1", "a2:1", "a3:1"}) {
		t.Errorf("started %v, want all four of a's jobs", got)
	}
}

// TestReclaimNewest: a holds all 4 GPUs (quota 2); b submits a 2-GPU job:
// a's two most recently started jobs are stopped for it (no checkpoints),
// and a keeps its quota.
func TestReclaimNewest(t *testing.T) {
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, two(2, 2))
	for i := range 4 {
		w.run(fmt.Sprintf("a%d", i), "a", model.Time(i+1)*s, fmt.Sprintf("v0/%d", i))
	}
	w.add("b0", "b", 2, 10*s)
	p := w.round(10 * s)
	if got := ids(p.Preempt); !slices.Equal(got, []string{"a2", "a3"}) {
		t.Errorf("preempted %v, want a2, a3 (the most recently started)", got)
	}
	if got := started(p); !slices.Equal(got, []string{"b0:2"}) {
		t.Errorf("started %v, want b0:2", got)
	}
	for _, d := range p.Trace {
		if d.Status == engine.Preempted && d.Reason != quota.ReasonReclaim {
			t.Errorf("trace %+v: want the reclaim reason", d)
		}
	}
	if got := w.held(); !slices.Equal(got, []string{"a:v100=2", "b:v100=2"}) {
		t.Errorf("held %v", got)
	}
	if w.q.Reclaims() != 2 {
		t.Errorf("reclaims %d, want 2", w.q.Reclaims())
	}
	// The next round changes nothing: both queues are at their quota.
	if p := w.round(11 * s); len(p.Preempt)+len(p.Start) != 0 {
		t.Errorf("second round: %v", p.Trace)
	}
}

// TestReclaimByCheckpoint: of a's two 2-GPU jobs, the one with the newest
// checkpoint (least work lost) is the victim, although it started first.
func TestReclaimByCheckpoint(t *testing.T) {
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, two(2, 2))
	old := w.run("old", "a", 1*s, "v0/0", "v0/1")
	young := w.run("young", "a", 2*s, "v0/2", "v0/3")
	old.Checkpoint, young.Checkpoint = 95*s, 20*s // lost work at 100 s: 5 s and 80 s
	w.add("b0", "b", 2, 100*s)
	p := w.round(100 * s)
	if got := ids(p.Preempt); !slices.Equal(got, []string{"old"}) {
		t.Errorf("preempted %v, want old (newest checkpoint)", got)
	}
	if got := started(p); !slices.Equal(got, []string{"b0:2"}) {
		t.Errorf("started %v", got)
	}
}

// TestReclaimKeepsQuota: a holds 3 (quota 2), one GPU is free, b needs 2:
// one of a's jobs is stopped, not two.
func TestReclaimKeepsQuota(t *testing.T) {
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, two(2, 2))
	for i := range 3 {
		w.run(fmt.Sprintf("a%d", i), "a", model.Time(i+1)*s, fmt.Sprintf("v0/%d", i))
	}
	w.add("b0", "b", 2, 10*s)
	p := w.round(10 * s)
	if got := ids(p.Preempt); !slices.Equal(got, []string{"a2"}) {
		t.Errorf("preempted %v, want a2 only", got)
	}
	if got := w.held(); !slices.Equal(got, []string{"a:v100=2", "b:v100=2"}) {
		t.Errorf("held %v", got)
	}
}

// TestNoPreemptionToBorrow: a queue without quota never preempts; its job
// waits for idle GPUs.
func TestNoPreemptionToBorrow(t *testing.T) {
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, two(2, 0))
	for i := range 4 {
		w.run(fmt.Sprintf("a%d", i), "a", model.Time(i+1)*s, fmt.Sprintf("v0/%d", i))
	}
	w.add("b0", "b", 1, 10*s)
	p := w.round(10 * s)
	if len(p.Preempt)+len(p.Start) != 0 {
		t.Errorf("a borrower preempted: %v", p.Trace)
	}
}

// TestLimit: a queue never holds more than its limit; a job its limit can
// never hold is rejected.
func TestLimit(t *testing.T) {
	cfg := quota.Config{Queues: []quota.Queue{{Name: "a", Quota: map[string]int{"v100": 2}, Limit: map[string]int{"v100": 3}, Weight: 1}}}
	w := newWorld(t, 8, 0, 4, policy.FIFO{Backfill: true}, cfg)
	w.add("huge", "a", 4, 0)
	for i := range 4 {
		w.add(fmt.Sprintf("a%d", i), "a", 1, s)
	}
	p := w.round(s)
	if got := started(p); !slices.Equal(got, []string{"a0:1", "a1:1", "a2:1"}) {
		t.Errorf("started %v, want three", got)
	}
	if len(p.Reject) != 1 || p.Reject[0].Job.Spec.ID != "huge" || !strings.Contains(p.Reject[0].Reason, "limit") {
		t.Errorf("rejections %+v, want huge for its queue's limit", p.Reject)
	}
}

// TestFairShareOrder: idle GPUs go to the queue with the least usage per
// unit of weight.
func TestFairShareOrder(t *testing.T) {
	for _, tc := range []struct {
		wa, wb float64
		want   string
	}{
		{1, 1, "b0:2"}, // a 10 h, b 5 h: b first
		{4, 1, "a0:2"}, // a 10/4 = 2.5 < b 5
	} {
		cfg := quota.Config{Queues: []quota.Queue{{Name: "a", Weight: tc.wa}, {Name: "b", Weight: tc.wb}}}
		w := newWorld(t, 2, 0, 2, policy.FIFO{}, cfg)
		w.q.Restore(map[string]float64{"a": 10, "b": 5})
		w.add("a0", "a", 2, 0)
		w.add("b0", "b", 2, s)
		if got := started(w.round(s)); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("weights %v/%v: started %v, want %s", tc.wa, tc.wb, got, tc.want)
		}
	}
}

// TestStrictLanes: under strict fifo a blocked job holds back only its own
// queue.
func TestStrictLanes(t *testing.T) {
	cfg := quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}}}
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, cfg)
	w.run("r", "b", 0, "v0/0")
	w.add("abig", "a", 4, s)
	w.add("asmall", "a", 1, 2*s)
	w.add("bsmall", "b", 1, 3*s)
	if got := started(w.round(3 * s)); !slices.Equal(got, []string{"bsmall:1"}) {
		t.Errorf("started %v, want only bsmall (asmall waits behind abig)", got)
	}
}

// TestUsage: usage is charged from round to round for the allocation each
// plan left: 2 K80s for 100 s are 200 GPU-seconds, 50 weighted.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		usage quota.Usage
		want  float64
	}{{quota.UsageTypeWeighted, 50}, {quota.UsageGPUHours, 200}} {
		cfg := quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1}}, Usage: tc.usage}
		w := newWorld(t, 0, 2, 2, policy.FIFO{}, cfg)
		w.add("k", "a", 2, 0)
		w.round(0)
		w.round(100 * s)
		if got := w.q.Usage()["a"] * 3600; math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%v: usage %v GPU-s, want %v", tc.usage, got, tc.want)
		}
	}
}

// TestPreemptiveInner: under tiresias, a guaranteed job of b ranks before
// a's borrowing jobs, which lose their place.
func TestPreemptiveInner(t *testing.T) {
	w := newWorld(t, 4, 0, 4, &policy.Tiresias{Thresholds: policy.TiresiasThresholds()}, two(2, 2))
	for i := range 4 {
		w.run(fmt.Sprintf("a%d", i), "a", model.Time(i+1)*s, fmt.Sprintf("v0/%d", i))
	}
	w.add("b0", "b", 2, 10*s)
	p := w.round(10 * s)
	if len(p.Preempt) != 2 || !slices.Equal(started(p), []string{"b0:2"}) {
		t.Fatalf("preempted %v, started %v", ids(p.Preempt), started(p))
	}
	if got := w.held(); !slices.Equal(got, []string{"a:v100=2", "b:v100=2"}) {
		t.Errorf("held %v", got)
	}
	if w.q.Reclaims() != 2 {
		t.Errorf("reclaims %d, want 2", w.q.Reclaims())
	}
}

// TestDefaultQueue: jobs of undeclared queues share the default queue.
func TestDefaultQueue(t *testing.T) {
	w := newWorld(t, 4, 0, 4, policy.FIFO{}, two(2, 2))
	j := w.add("x", "nope", 1, 0)
	if w.q.QueueOf(j) != quota.DefaultQueue {
		t.Errorf("queue of x: %s", w.q.QueueOf(j))
	}
	if got := started(w.round(0)); !slices.Equal(got, []string{"x:1"}) {
		t.Errorf("started %v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  quota.Config
		want string
	}{
		{quota.Config{Queues: []quota.Queue{{Name: "", Weight: 1}}}, "name: empty"},
		{quota.Config{Queues: []quota.Queue{{Name: "a b", Weight: 1}}}, "only letters"},
		{quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1}, {Name: "a", Weight: 1}}}, "declared twice"},
		{quota.Config{Queues: []quota.Queue{{Name: "a"}}}, "weight 0"},
		{quota.Config{Queues: []quota.Queue{{Name: "a", Weight: math.NaN()}}}, "weight NaN"},
		{quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1, Quota: map[string]int{"v100": -1}}}}, "quota: v100: -1"},
		{quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1, Quota: map[string]int{"v100": 4}, Limit: map[string]int{"v100": 2}}}}, "below its quota"},
		{quota.Config{Queues: []quota.Queue{{Name: "a", Weight: 1}}, Default: "x y"}, "default queue"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if err := two(2, 2).Validate(); err != nil {
		t.Error(err)
	}
}
