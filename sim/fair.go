package sim

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
)

// Fairness is how evenly a run served its queues (Config.Queues).
type Fairness struct {
	// Queues are the queues in the configuration's order, the default
	// queue included (package quota).
	Queues []quota.Queue
	// Jain is the time-average of Jain's fairness index over the queues
	// that are backlogged (have a job waiting), at every instant when at
	// least two are: (Σx)² / (n·Σx²) over their normalised shares x = the
	// type-weighted GPUs a queue holds (quota.Weight) divided by its
	// weight. 1 is perfectly fair; 1/n is one queue holding everything.
	// Valid is false when two queues were never backlogged at once.
	Jain  float64
	Valid bool
	// Contended is how long at least two queues were backlogged.
	Contended model.Time
	// Reclaims counts the preemptions that gave a queue back its
	// guaranteed quota (quota.ReasonReclaim).
	Reclaims int
}

// fairness tracks, as the run goes, what every queue holds and how many
// of its jobs wait, and integrates Jain's index over time.
type fairness struct {
	queues  []quota.Queue
	index   map[string]int
	def     int
	held    []float64 // per queue: type-weighted GPUs held
	waiting []int     // per queue: waiting jobs
	rate    []float64 // per job (Seq): the weighted GPUs it holds now
	last    model.Time
	jain    float64 // ∫ index dt over the contended time
	busy    model.Time
	reclaim int
}

// newFairness returns the tracker of cfg's queues for jobs jobs, or nil
// without queues.
func newFairness(cfg *quota.Config, jobs int) *fairness {
	if cfg == nil {
		return nil
	}
	qs, def := cfg.Queues, -1
	name := cfg.Default
	if name == "" {
		name = quota.DefaultQueue
	}
	f := &fairness{index: map[string]int{}, last: -1}
	for i, q := range qs {
		f.index[q.Name] = i
		if q.Name == name {
			def = i
		}
	}
	f.queues = append(f.queues, qs...)
	if def < 0 {
		def = len(f.queues)
		f.queues = append(f.queues, quota.Queue{Name: name, Weight: 1})
	}
	f.def = def
	f.held = make([]float64, len(f.queues))
	f.waiting = make([]int, len(f.queues))
	f.rate = make([]float64, jobs)
	return f
}

// queue returns the index of job j's queue.
func (f *fairness) queue(j *model.Job) int {
	if i, ok := f.index[j.Spec.Queue]; ok {
		return i
	}
	return f.def
}

// observe integrates the index from the last observation to t.
func (f *fairness) observe(t model.Time) {
	if f == nil {
		return
	}
	if f.last >= 0 && t > f.last {
		if idx, ok := f.index1(); ok {
			dt := t - f.last
			f.jain += idx * float64(dt)
			f.busy += dt
		}
	}
	f.last = t
}

// index1 returns Jain's index over the backlogged queues now; false when
// fewer than two are backlogged.
func (f *fairness) index1() (float64, bool) {
	var n int
	var sum, sq float64
	for q, w := range f.waiting {
		if w == 0 {
			continue
		}
		x := f.held[q] / f.queues[q].Weight
		n++
		sum += x
		sq += x * x
	}
	if n < 2 {
		return 0, false
	}
	if sq == 0 {
		return 1, true // all hold nothing: equal
	}
	return sum * sum / (float64(n) * sq), true
}

// wait adds d to the waiting jobs of j's queue.
func (f *fairness) wait(j *model.Job, d int) {
	if f != nil {
		f.waiting[f.queue(j)] += d
	}
}

// hold sets the weighted GPUs running job j holds (0 when it stops).
func (f *fairness) hold(r *run, j *model.Job) {
	if f == nil {
		return
	}
	v := 0.0
	if j.State == model.Running && len(j.Alloc) > 0 {
		c := r.cfg.Cluster
		v = float64(len(j.Alloc)) * quota.Weight(c, r.cfg.Workload, j, c.TypeOf(j.Alloc[0]), len(j.Alloc))
	}
	q := f.queue(j)
	f.held[q] += v - f.rate[j.Seq]
	f.rate[j.Seq] = v
}

// noteReclaims counts the plan's reclaims and returns the jobs they stop
// (nil when there is none).
func (f *fairness) noteReclaims(plan engine.Plan) map[string]bool {
	if f == nil {
		return nil
	}
	var out map[string]bool
	for _, d := range plan.Trace {
		if d.Status == engine.Preempted && d.Reason == quota.ReasonReclaim {
			if out == nil {
				out = map[string]bool{}
			}
			out[d.Job] = true
			f.reclaim++
		}
	}
	return out
}

// result returns the run's Fairness, or nil without queues.
func (f *fairness) result() *Fairness {
	if f == nil {
		return nil
	}
	out := &Fairness{Queues: f.queues, Contended: f.busy, Reclaims: f.reclaim, Valid: f.busy > 0}
	if f.busy > 0 {
		out.Jain = f.jain / float64(f.busy)
	}
	return out
}
