package edl

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
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
}

// rebuild fills the queue from its stored tasks.
func (q *queueState) rebuild(tasks []*taskRec) error {
	if len(tasks) != q.meta.Tasks {
		return fmt.Errorf("%d task records for a queue of %d", len(tasks), q.meta.Tasks)
	}
	q.tasks, q.leased, q.todo = make([]*taskRec, len(tasks)), map[int]bool{}, nil
	for _, t := range tasks {
		if t.Index < 0 || t.Index >= len(tasks) || q.tasks[t.Index] != nil {
			return fmt.Errorf("task record with index %d", t.Index)
		}
		q.tasks[t.Index] = t
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
		Pass: min(q.meta.Pass, q.meta.Passes), DoneTotal: q.meta.DoneBefore, Finished: q.meta.Pass > q.meta.Passes}
	for _, t := range q.tasks {
		switch t.State {
		case taskTodo:
			v.Todo++
		case taskLeased:
			v.Leased++
		case taskDone:
			v.Done++
		case taskFailed:
			v.Failed++
		}
	}
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
	if js.queue != nil {
		s.mu.Unlock()
		return api.TaskQueue{}, conflict("job %s already has a task queue of %d tasks", job, js.queue.meta.Tasks)
	}
	q := &queueState{meta: queueMeta{Tasks: len(spec.Tasks), Passes: max(spec.Passes, 1), MaxFailures: spec.MaxFailures,
		TTLS: spec.TTLS, Pass: 1}, leased: map[int]bool{}}
	if q.meta.MaxFailures <= 0 {
		q.meta.MaxFailures = 3
	}
	if q.meta.TTLS <= 0 {
		q.meta.TTLS = 60
	}
	var c change
	for i, d := range spec.Tasks {
		t := &taskRec{Index: i, Data: d, Pass: 1, State: taskTodo}
		q.tasks = append(q.tasks, t)
		q.todo = append(q.todo, i)
		c.put(taskKey(job, i), t)
	}
	c.put(queueKey(job), q.meta)
	js.queue = q
	v := q.view()
	w := s.queue(&c)
	s.mu.Unlock()
	return v, s.wait(job, w)
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
// r.TTLS). Expired leases are taken back first: the task returns to the
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
	s.expire(job, q, now, &c)
	s.nextPass(job, q, &c)
	out := s.grant(job, q, r, now, &c)
	w := s.queue(&c)
	s.mu.Unlock()
	if err := s.wait(job, w); err != nil {
		return api.Lease{}, err
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
	q.tasks[i], q.leased[i] = &t, true
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
	q.tasks[i] = &t
	c.put(taskKey(job, i), &t)
}

// nextPass starts the next pass when the current one is over (no task todo
// or leased): every task that has not failed is todo again. After the last
// pass the queue is finished.
func (s *Service) nextPass(job string, q *queueState, c *change) {
	if len(q.todo) > 0 || len(q.leased) > 0 || q.meta.Pass > q.meta.Passes {
		return
	}
	done := 0
	for _, t := range q.tasks {
		if t.State == taskDone {
			done++
		}
	}
	q.meta.DoneBefore += int64(done)
	q.meta.Pass++
	if q.meta.Pass <= q.meta.Passes {
		for i, old := range q.tasks {
			if old.State == taskFailed {
				continue
			}
			t := &taskRec{Index: i, Data: old.Data, Pass: q.meta.Pass, State: taskTodo}
			q.tasks[i] = t
			q.todo = append(q.todo, i)
			c.put(taskKey(job, i), t)
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
	q := js.queue
	switch {
	case q == nil:
		s.mu.Unlock()
		return api.TaskQueue{}, notFound("job %s has no task queue", job)
	case index < 0 || index >= len(q.tasks):
		s.mu.Unlock()
		return api.TaskQueue{}, notFound("job %s has no task %d (0..%d)", job, index, len(q.tasks)-1)
	}
	t := q.tasks[index]
	if t.State != taskLeased || t.Lease != lease {
		s.mu.Unlock()
		return api.TaskQueue{}, conflict("task %d of job %s is %s, not leased under %q (an expired lease goes to another trainer)",
			index, job, t.State, lease)
	}
	var c change
	if ok {
		nt := *t
		nt.State, nt.Holder, nt.Lease, nt.Expires = taskDone, t.Holder, "", time.Time{}
		q.tasks[index] = &nt
		delete(q.leased, index)
		c.put(taskKey(job, index), &nt)
	} else {
		s.fail(job, q, index, &c)
	}
	s.nextPass(job, q, &c)
	v := q.view()
	w := s.queue(&c)
	s.mu.Unlock()
	if err := s.wait(job, w); err != nil {
		return api.TaskQueue{}, err
	}
	if ok {
		_, _ = s.jobs.Progress(job, api.Progress{Steps: v.DoneTotal}) // a job that has ended takes none
	}
	return v, nil
}
