package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// state is where a job is in its life.
type state int

const (
	waiting    state = iota // submitted (or preempted), holds no GPU
	running                 // holds its allocation
	finished                // done; holds nothing and never runs again
	rejected                // can never run; holds nothing
	unfinished              // reported unfinished at the end of the run
)

// where describes s for messages such as "start of j7 after it finished".
func (s state) where() string {
	switch s {
	case waiting:
		return "while it waits"
	case running:
		return "while it runs"
	case finished:
		return "after it finished"
	case unfinished:
		return "after it was reported unfinished"
	default:
		return "after it was rejected"
	}
}

// job is the audit's own record of one job.
type job struct {
	id         string
	line       int // line of the submit event
	submit     float64
	minGPUs    int
	maxGPUs    int
	gpuType    string
	state      state
	alloc      []string
	since      float64 // when alloc took effect
	gpuSeconds float64 // GPU-seconds held up to since
	ran        bool
	firstStart float64
	finish     float64
	heldAtEnd  bool // running when reported unfinished
	// replicaGPUs and requests: what each replica asks of its node's other
	// resources (book).
	replicaGPUs  int
	requests     map[string]int64
	requestNames []string // requests' keys in order (messages do not depend on map order)
}

// checker holds the log's state between lines.
type checker struct {
	now     float64
	gpuType map[string]string // GPU id → type; nil before the cluster event
	holder  map[string]string // GPU id → job holding it
	jobs    map[string]*job
	order   []*job // in submit order
	res     Result
	book    book     // resources besides GPUs
	ev      rawEvent // the line being checked (line)
}

func newChecker() *checker {
	return &checker{holder: map[string]string{}, jobs: map[string]*job{}}
}

// cluster records the cluster's GPUs.
func (c *checker) cluster(e *rawEvent) error {
	if e.GPUs == nil {
		return errors.New("cluster event has no gpus")
	}
	var gpus []gpuInfo
	if err := json.Unmarshal(e.GPUs, &gpus); err != nil {
		return fmt.Errorf("cluster event: gpus must be a list of GPUs: %w", err)
	}
	c.gpuType = make(map[string]string, len(gpus))
	for i, g := range gpus {
		if g.ID == "" {
			return fmt.Errorf("cluster event: GPU #%d has no id", i+1)
		}
		if _, dup := c.gpuType[g.ID]; dup {
			return fmt.Errorf("cluster event: GPU id %s listed twice", g.ID)
		}
		c.gpuType[g.ID] = g.Type
	}
	c.res.ClusterGPUs = len(gpus)
	return c.book.nodes(e, gpus)
}

// submit records a new job from line n.
func (c *checker) submit(n int, e *rawEvent) error {
	if e.Job == "" {
		return errors.New("submit event has no job")
	}
	if j, ok := c.jobs[e.Job]; ok {
		return fmt.Errorf("%s submitted again (first on line %d)", e.Job, j.line)
	}
	if e.GPUs == nil {
		return fmt.Errorf("submit of %s has no gpus", e.Job)
	}
	gpus, err := rawInt(e.GPUs)
	if err != nil {
		return fmt.Errorf("submit of %s: gpus must be an integer: %w", e.Job, err)
	}
	j := &job{id: e.Job, line: n, submit: c.now, minGPUs: gpus, maxGPUs: gpus, gpuType: e.GPUType}
	if e.MinGPUs != nil {
		j.minGPUs = *e.MinGPUs
	}
	if e.MaxGPUs != nil {
		j.maxGPUs = *e.MaxGPUs
	}
	if j.minGPUs < 1 || j.minGPUs > gpus || gpus > j.maxGPUs {
		return fmt.Errorf("submit of %s: want 1 ≤ min_gpus ≤ gpus ≤ max_gpus, got %d, %d, %d",
			e.Job, j.minGPUs, gpus, j.maxGPUs)
	}
	if err := c.book.request(e, j); err != nil {
		return err
	}
	c.jobs[e.Job] = j
	c.order = append(c.order, j)
	c.res.Jobs++
	return nil
}

// jobOf returns the submitted job that e is about.
func (c *checker) jobOf(e *rawEvent) (*job, error) {
	if e.Job == "" {
		return nil, fmt.Errorf("%s event has no job", e.Event)
	}
	j, ok := c.jobs[e.Job]
	if !ok {
		return nil, fmt.Errorf("%s of %s before its submit", e.Event, e.Job)
	}
	return j, nil
}

// start gives a waiting job its allocation.
func (c *checker) start(e *rawEvent, j *job) error {
	if j.state != waiting {
		return fmt.Errorf("start of %s %s", j.id, j.state.where())
	}
	if err := c.checkAlloc(e, j); err != nil {
		return err
	}
	if err := c.hold(j, e.Alloc); err != nil {
		return err
	}
	j.state = running
	if !j.ran {
		j.ran, j.firstStart = true, c.now
	}
	return nil
}

// resize replaces a running job's allocation.
func (c *checker) resize(e *rawEvent, j *job) error {
	if j.state != running {
		return fmt.Errorf("resize of %s %s", j.id, j.state.where())
	}
	if err := c.checkAlloc(e, j); err != nil {
		return err
	}
	if sameSet(j.alloc, e.Alloc) {
		return fmt.Errorf("resize of %s leaves its allocation unchanged", j.id)
	}
	c.release(j)
	if err := c.hold(j, e.Alloc); err != nil {
		return err
	}
	c.res.Resizes++
	return nil
}

// stop ends a running job's allocation on preempt or finish.
func (c *checker) stop(e *rawEvent, j *job) error {
	if j.state != running {
		return fmt.Errorf("%s of %s %s", e.Event, j.id, j.state.where())
	}
	c.release(j)
	if e.Event == "finish" {
		j.state, j.finish = finished, c.now
		c.res.Completed++
	} else {
		j.state = waiting
		c.res.Preemptions++
	}
	return nil
}

// reject marks a job that never ran as unable to run.
func (c *checker) reject(e *rawEvent, j *job) error {
	if j.state != waiting {
		return fmt.Errorf("reject of %s %s", j.id, j.state.where())
	}
	if j.ran {
		return fmt.Errorf("reject of %s, which has already run", j.id)
	}
	if e.Reason == "" {
		return fmt.Errorf("reject of %s gives no reason", j.id)
	}
	j.state = rejected
	c.res.Rejected++
	return nil
}

// unfinished closes the log for a job still waiting or running when the run
// ends; it must say why, and nothing may happen to the job afterwards. A
// running job's GPUs count as held up to this event.
func (c *checker) unfinished(e *rawEvent, j *job) error {
	if j.state != waiting && j.state != running {
		return fmt.Errorf("unfinished report of %s %s", j.id, j.state.where())
	}
	if e.Reason == "" {
		return fmt.Errorf("unfinished report of %s gives no reason", j.id)
	}
	if j.state == running {
		c.release(j)
		j.heldAtEnd = true
	}
	j.state = unfinished
	return nil
}

// end checks that the log accounts for every job: finished, rejected or
// reported unfinished.
func (c *checker) end() error {
	for _, j := range c.order {
		if j.state == waiting || j.state == running {
			return fmt.Errorf("%s (submitted on line %d) is %s but neither finished, rejected nor reported unfinished",
				j.id, j.line, map[state]string{waiting: "waiting", running: "running"}[j.state])
		}
	}
	return nil
}

// pause checks a pause event (seed 002): the placer holds back a job that
// waits; it changes nothing.
func (c *checker) pause(j *job) error {
	if j.state != waiting {
		return fmt.Errorf("pause of %s %s", j.id, j.state.where())
	}
	return nil
}

// checkAlloc verifies the allocation that e gives j.
func (c *checker) checkAlloc(e *rawEvent, j *job) error {
	if len(e.Alloc) == 0 {
		return fmt.Errorf("%s of %s has an empty alloc", e.Event, j.id)
	}
	seen := make(map[string]bool, len(e.Alloc))
	for _, g := range e.Alloc {
		typ, ok := c.gpuType[g]
		switch {
		case !ok:
			return fmt.Errorf("GPU %s given to %s does not exist", g, j.id)
		case seen[g]:
			return fmt.Errorf("GPU %s listed twice in the alloc of %s", g, j.id)
		case c.holder[g] != "" && c.holder[g] != j.id:
			return fmt.Errorf("GPU %s given to %s while held by %s", g, j.id, c.holder[g])
		case j.gpuType != "" && typ != j.gpuType:
			return fmt.Errorf("GPU %s of type %q given to %s, which requires %q", g, typ, j.id, j.gpuType)
		}
		seen[g] = true
	}
	if n := len(e.Alloc); n < j.minGPUs || n > j.maxGPUs {
		return fmt.Errorf("%s given %d GPUs; its submit allows %d to %d", j.id, n, j.minGPUs, j.maxGPUs)
	}
	return nil
}

// hold gives alloc to j from now on; it fails when a node cannot hold
// what j's replicas there ask besides GPUs.
func (c *checker) hold(j *job, alloc []string) error {
	j.alloc = slices.Clone(alloc)
	j.since = c.now
	for _, g := range alloc {
		c.holder[g] = j.id
	}
	return c.book.charge(j, alloc, 1)
}

// release takes j's allocation back, accounting the GPU-seconds it held.
func (c *checker) release(j *job) {
	j.gpuSeconds += heldSince(j, c.now)
	for _, g := range j.alloc {
		delete(c.holder, g)
	}
	c.book.charge(j, j.alloc, -1) // taking back never fails
	j.alloc = nil
}

// heldSince is the GPU-seconds j's current allocation has held up to t.
func heldSince(j *job, t float64) float64 {
	return float64(len(j.alloc)) * (t - j.since)
}

// sameSet reports whether a and b, each free of duplicates, hold the same ids.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// result recomputes the run's figures from the jobs seen.
func (c *checker) result() Result {
	r := c.res
	r.End = c.now
	var jcts []float64
	var queue float64
	started := 0
	first, last := math.Inf(1), math.Inf(-1)
	for _, j := range c.order {
		first = min(first, j.submit)
		r.GPUSeconds += j.gpuSeconds + heldSince(j, c.now)
		if j.state == unfinished {
			r.Unfinished = append(r.Unfinished, j.id)
			if j.heldAtEnd {
				r.Running = append(r.Running, j.id)
			}
		}
		if j.ran {
			started++
			queue += j.firstStart - j.submit
		}
		if j.state == finished {
			jcts = append(jcts, j.finish-j.submit)
			last = max(last, j.finish)
		}
	}
	if started > 0 {
		r.AvgQueue = queue / float64(started)
	}
	if len(jcts) > 0 {
		r.AvgJCT, r.P50JCT, r.P99JCT = jctStats(jcts)
		r.Makespan = max(0, last-first)
	}
	if r.Makespan > 0 && r.ClusterGPUs > 0 {
		r.GPUUtil = r.GPUSeconds / (float64(r.ClusterGPUs) * r.Makespan)
	}
	return r
}

// jctStats returns the mean and the nearest-rank 50th and 99th percentiles
// of the non-empty jcts, which it sorts.
func jctStats(jcts []float64) (avg, p50, p99 float64) {
	slices.Sort(jcts)
	var sum float64
	for _, x := range jcts {
		sum += x
	}
	return sum / float64(len(jcts)), nearestRank(jcts, 0.50), nearestRank(jcts, 0.99)
}

// nearestRank returns the p-quantile (0 < p ≤ 1) of the sorted, non-empty xs
// by the nearest-rank method: the ⌈p·n⌉-th smallest value.
func nearestRank(xs []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[max(0, min(k, len(xs)-1))]
}
