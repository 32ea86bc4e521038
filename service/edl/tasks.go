package edl

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Task states.
const (
	taskTodo   = "todo"
	taskLeased = "leased"
	taskDone   = "done"
	taskFailed = "failed"
)

// queueMeta is a job's task queue, stored under "edl/<job>/queue"; the
// tasks are stored one per key under "edl/<job>/tasks/<index>".
type queueMeta struct {
	Tasks       int     `json:"tasks"`
	Passes      int     `json:"passes"`
	MaxFailures int     `json:"max_failures"`
	TTLS        float64 `json:"ttl_s"`
	// Pass is the current pass, from 1; Passes+1 once every pass is over.
	Pass int `json:"pass"`
	// DoneBefore counts the tasks done in the passes before Pass.
	DoneBefore int64 `json:"done_before"`
}

// taskRec is one task.
type taskRec struct {
	Index    int       `json:"index"`
	Data     string    `json:"data"`
	Pass     int       `json:"pass"`
	State    string    `json:"state"`
	Holder   string    `json:"holder,omitempty"`
	Lease    string    `json:"lease,omitempty"`
	Expires  time.Time `json:"expires,omitzero"`
	Failures int       `json:"failures,omitempty"`
}

// queueState is the queue in memory: the tasks, the indices to lease next
// (in order) and the leased ones.
type queueState struct {
	meta   queueMeta
	tasks  []*taskRec
	todo   []int // FIFO of indices in state todo
	leased map[int]bool
	count  map[string]int // tasks by state
}

// set replaces task i, keeping the counts.
func (q *queueState) set(i int, t *taskRec) {
	if old := q.tasks[i]; old != nil {
		q.count[old.State]--
	}
	q.tasks[i] = t
	q.count[t.State]++
}

// rebuild fills the queue from its stored tasks. A task last written in
// an earlier pass is todo in the current one unless it failed (a pass
// transition writes only the queue record); records beyond the queue's
// size (left by a registration that failed half-way) are ignored.
func (q *queueState) rebuild(tasks []*taskRec) error {
	q.tasks, q.leased, q.todo, q.count = make([]*taskRec, q.meta.Tasks), map[int]bool{}, nil, map[string]int{}
	for _, t := range tasks {
		if t.Index < 0 || t.Index >= q.meta.Tasks {
			continue
		}
		if t.Pass < q.meta.Pass && t.State != taskFailed {
			t = &taskRec{Index: t.Index, Data: t.Data, Pass: q.meta.Pass, State: taskTodo}
		}
		q.set(t.Index, t)
	}
	for i, t := range q.tasks {
		if t == nil {
			return fmt.Errorf("task %d of %d has no record", i, q.meta.Tasks)
		}
	}
	for _, t := range q.tasks {
		switch t.State {
		case taskTodo:
			q.todo = append(q.todo, t.Index)
		case taskLeased:
			q.leased[t.Index] = true
		}
	}
	return nil
}

// view counts the queue.
func (q *queueState) view() api.TaskQueue {
	v := api.TaskQueue{Tasks: q.meta.Tasks, Passes: q.meta.Passes, MaxFailures: q.meta.MaxFailures, TTLS: q.meta.TTLS,
		Pass: min(q.meta.Pass, q.meta.Passes), DoneTotal: q.meta.DoneBefore, Finished: q.meta.Pass > q.meta.Passes,
		Todo: q.count[taskTodo], Leased: q.count[taskLeased], Done: q.count[taskDone], Failed: q.count[taskFailed]}
	if !v.Finished {
		v.DoneTotal += int64(v.Done)
	}
	return v
}

// RegisterTasks creates job's task queue (seed 001: the master creates the
// queue if it does not exist). A job has one queue: registering again is
// ErrConflict.
func (s *Service) RegisterTasks(ctx context.Context, job string, spec api.TaskQueueSpec) (api.TaskQueue, error) {
	s.mu.Lock()
	js, err := s.state(ctx, job)
	if err != nil {
		s.mu.Unlock()
		return api.TaskQueue{}, err
	}
	if js.queue != nil || js.registering {
		s.mu.Unlock()
		return api.TaskQueue{}, conflict("job %s already has a task queue", job)
	}
	q := &queueState{meta: queueMeta{Tasks: len(spec.Tasks), Passes: max(spec.Passes, 1), MaxFailures: spec.MaxFailures,
		TTLS: spec.TTLS, Pass: 1}, leased: map[int]bool{}, count: map[string]int{}}
	if q.meta.MaxFailures <= 0 {
		q.meta.MaxFailures = 3
	}
	if q.meta.TTLS <= 0 {
		q.meta.TTLS = 60
	}
	var c change
	for i, d := range spec.Tasks {
		t := &taskRec{Index: i, Data: d, Pass: 1, State: taskTodo}
		q.tasks = append(q.tasks, nil)
		q.set(i, t)
		q.todo = append(q.todo, i)
		c.put(taskKey(job, i), t)
	}
	c.put(queueKey(job), q.meta) // last: the queue exists once it is written
	js.registering = true
	s.mu.Unlock()
	err = s.writeChunks(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	js.registering = false
	if err != nil {
		return api.TaskQueue{}, fmt.Errorf("register the tasks of %s: %w", job, err)
	}
	js.queue = q
	return q.view(), nil
}

// writeChunks writes a large change in order, in transactions the store
// takes (a queue of 100,000 tasks is more than etcd takes at once). No
// other change touches its keys meanwhile: the queue is not in memory
// until its last record is written.
func (s *Service) writeChunks(c change) error {
	size := store.TxnLimit(s.st)
	if size <= 0 {
		size = 4096
	}
	for len(c.ops) > 0 {
		n := min(size, len(c.ops))
		if _, err := s.st.Txn(context.Background(), c.ops[:n]...); err != nil {
			return err
		}
		c.ops = c.ops[n:]
	}
	return nil
}

// Tasks returns job's task queue; ErrNotFound without one.
func (s *Service) Tasks(ctx context.Context, job string) (api.TaskQueue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	js, err := s.state(ctx, job)
	if err != nil {
		return api.TaskQueue{}, err
	}
	if js.queue == nil {
		return api.TaskQueue{}, notFound("job %s has no task queue (POST /v1/jobs/%s/tasks)", job, job)
	}
	return js.queue.view(), nil
}

// Lease hands holder the next task of the pass for the queue's TTL (or
// r.TTLS), after recording r.Done (the holder's previous task) done in the
// same write: a trainer needs one request per task. A stale r.Done is
// ErrConflict and leases nothing. Expired leases are taken back first: the task returns to the
// queue, or is marked failed after MaxFailures. When every remaining task
// is leased the answer is "wait"; when the pass is done the next one
// starts; after the last pass the answer is "finished". The lease is
// durable before it is answered.
func (s *Service) Lease(ctx context.Context, job string, r api.LeaseRequest) (api.Lease, error) {
	s.mu.Lock()
	js, err := s.state(ctx, job)
	if err != nil {
		s.mu.Unlock()
		return api.Lease{}, err
	}
	q := js.queue
	if q == nil {
		s.mu.Unlock()
		return api.Lease{}, notFound("job %s has no task queue (POST /v1/jobs/%s/tasks)", job, job)
	}
	now := s.clock()
	var c change
	if r.Done != nil {
		if err := s.report(job, q, r.Done.Index, r.Done.Lease, true, &c); err != nil {
			s.mu.Unlock()
			return api.Lease{}, err
		}
	}
	s.expire(job, q, now, &c)
	s.nextPass(job, q, &c)
	out := s.grant(job, q, r, now, &c)
	v := q.view()
	w := s.queue(job, &c)
	s.mu.Unlock()
	if err := s.wait(job, w); err != nil {
		return api.Lease{}, err
	}
	if r.Done != nil && s.progressDue(job, v.Finished) {
		_, _ = s.jobs.Progress(job, api.Progress{Steps: v.DoneTotal})
	}
	return out, nil
}

// grant leases the next todo task, or says to wait or that all is done.
func (s *Service) grant(job string, q *queueState, r api.LeaseRequest, now time.Time, c *change) api.Lease {
	if q.meta.Pass > q.meta.Passes {
		v := q.view()
		return api.Lease{Status: api.LeaseFinished, Queue: &v}
	}
	if len(q.todo) == 0 {
		wait := time.Second
		for i := range q.leased {
			wait = min(wait, max(q.tasks[i].Expires.Sub(now), 10*time.Millisecond))
		}
		return api.Lease{Status: api.LeaseWait, RetryAfterS: wait.Seconds()}
	}
	i := q.todo[0]
	q.todo = q.todo[1:]
	d := q.meta.TTLS
	if r.TTLS > 0 {
		d = r.TTLS
	}
	t := *q.tasks[i]
	t.State, t.Holder, t.Lease, t.Expires = taskLeased, r.Holder, s.token(), now.Add(ttl(d))
	q.set(i, &t)
	q.leased[i] = true
	c.put(taskKey(job, i), &t)
	return api.Lease{Status: api.LeaseGranted, Task: &api.Task{Index: i, Data: t.Data, Pass: t.Pass, Lease: t.Lease,
		ExpiresAt: t.Expires.UTC(), Failures: t.Failures}}
}

// expire takes back the leases that ran out: the task counts a failure and
// returns to the queue, or is marked failed after MaxFailures.
func (s *Service) expire(job string, q *queueState, now time.Time, c *change) {
	var gone []int
	for i := range q.leased {
		if !now.Before(q.tasks[i].Expires) {
			gone = append(gone, i)
		}
	}
	slices.Sort(gone)
	for _, i := range gone {
		s.fail(job, q, i, c)
	}
}

// fail counts a failure of leased task i (its lease expired or its holder
// reported it failed).
func (s *Service) fail(job string, q *queueState, i int, c *change) {
	t := *q.tasks[i]
	delete(q.leased, i)
	t.Failures++
	t.Holder, t.Lease, t.Expires = "", "", time.Time{}
	if t.Failures >= q.meta.MaxFailures {
		t.State = taskFailed
	} else {
		t.State = taskTodo
		q.todo = append(q.todo, i)
	}
	q.set(i, &t)
	c.put(taskKey(job, i), &t)
}

// nextPass starts the next pass when the current one is over (no task todo
// or leased): every task that has not failed is todo again. After the last
// pass the queue is finished. Only the queue record is written: a task
// record of an earlier pass reads as todo (rebuild).
func (s *Service) nextPass(job string, q *queueState, c *change) {
	if len(q.todo) > 0 || len(q.leased) > 0 || q.meta.Pass > q.meta.Passes {
		return
	}
	q.meta.DoneBefore += int64(q.count[taskDone])
	q.meta.Pass++
	if q.meta.Pass <= q.meta.Passes {
		for i, old := range q.tasks {
			if old.State == taskFailed {
				continue
			}
			q.set(i, &taskRec{Index: i, Data: old.Data, Pass: q.meta.Pass, State: taskTodo})
			q.todo = append(q.todo, i)
		}
	}
	c.put(queueKey(job), q.meta)
}

// Report records leased task index of job done (ok) or failed. The lease
// must be the task's current one: a lease that expired and was handed to
// another holder, or a task already reported, is ErrConflict, so that a
// task is done once. A done task feeds the job's progress (the tasks done
// over every pass, as steps).
func (s *Service) Report(ctx context.Context, job string, index int, lease string, ok bool) (api.TaskQueue, error) {
	s.mu.Lock()
	js, err := s.state(ctx, job)
	if err != nil {
		s.mu.Unlock()
		return api.TaskQueue{}, err
	}
	var c change
	if err := s.report(job, js.queue, index, lease, ok, &c); err != nil {
		s.mu.Unlock()
		return api.TaskQueue{}, err
	}
	q := js.queue
	s.nextPass(job, q, &c)
	v := q.view()
	w := s.queue(job, &c)
	s.mu.Unlock()
	if err := s.wait(job, w); err != nil {
		return api.TaskQueue{}, err
	}
	if ok && s.progressDue(job, v.Finished) {
		_, _ = s.jobs.Progress(job, api.Progress{Steps: v.DoneTotal}) // a job that has ended takes none
	}
	return v, nil
}

// report records leased task index done (ok) or failed into c; s.mu is
// held.
func (s *Service) report(job string, q *queueState, index int, lease string, ok bool, c *change) error {
	switch {
	case q == nil:
		return notFound("job %s has no task queue", job)
	case index < 0 || index >= len(q.tasks):
		return notFound("job %s has no task %d (0..%d)", job, index, len(q.tasks)-1)
	}
	t := q.tasks[index]
	if t.State != taskLeased || t.Lease != lease {
		return conflict("task %d of job %s is %s, not leased under %q (an expired lease goes to another trainer)",
			index, job, t.State, lease)
	}
	if !ok {
		s.fail(job, q, index, c)
		return nil
	}
	nt := *t
	nt.State, nt.Lease, nt.Expires = taskDone, "", time.Time{}
	q.set(index, &nt)
	delete(q.leased, index)
	c.put(taskKey(job, index), &nt)
	return nil
}

// progressEvery is how often the tasks done feed a job's progress.
const progressEvery = 500 * time.Millisecond

// progressDue reports whether job's progress is to be reported now: at
// most every progressEvery, and when the queue is finished.
func (s *Service) progressDue(job string, finished bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if last, ok := s.progressAt[job]; ok && !finished && now.Sub(last) < progressEvery {
		return false
	}
	s.progressAt[job] = now
	return true
}
