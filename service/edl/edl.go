package edl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Errors of the service, tested with errors.Is; their messages are meant
// for the user.
var (
	// ErrNotFound: no such job, queue, task or slot.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request does not fit the state (a queue that
	// exists, a lease that is not current, no free slot).
	ErrConflict = errors.New("conflict")
)

// Jobs is what the service needs of the job lifecycle: that a job exists,
// and where to report the tasks done as its progress
// (*scheduler.Scheduler has both).
type Jobs interface {
	Job(id string) (api.Job, error)
	Progress(id string, p api.Progress) (api.Job, error)
}

// Service keeps the EDL state of every job in a store, under
// "edl/<job>/", and in memory (each job's state is loaded on first use).
// A change is written to the store before it is answered; concurrent
// changes share transactions. Its methods are safe for concurrent use.
type Service struct {
	st    store.Store
	jobs  Jobs
	clock func() time.Time
	seq   uint64 // lease tokens; guarded by mu

	mu     sync.Mutex
	states map[string]*jobState
	batch  batcher
	// progressAt is when each job's progress was last reported.
	progressAt map[string]time.Time
}

// New returns the service over st; clock nil means time.Now.
func New(st store.Store, jobs Jobs, clock func() time.Time) *Service {
	if clock == nil {
		clock = time.Now
	}
	s := &Service{st: st, jobs: jobs, clock: clock, states: map[string]*jobState{}, progressAt: map[string]time.Time{},
		seq: uint64(clock().UnixNano())}
	s.batch.st, s.batch.onFail = st, s.forget
	return s
}

// forget drops every job's state after a write failed (it is loaded again
// from the store on next use) and starts a new epoch of the batcher, so
// that the changes made on the old state are not written.
func (s *Service) forget([]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states = map[string]*jobState{}
	s.batch.bump()
}

// jobState is one job's EDL state in memory.
type jobState struct {
	master *masterRec
	queue  *queueState // nil: no queue registered
	// registering: a queue is being written (RegisterTasks).
	registering bool
	ps          map[int]*psRec
}

// Store keys.
func prefix(job string) string         { return "edl/" + job + "/" }
func masterKey(job string) string      { return prefix(job) + "master" }
func queueKey(job string) string       { return prefix(job) + "queue" }
func taskKey(job string, i int) string { return fmt.Sprintf("%stasks/%06d", prefix(job), i) }
func psKey(job string, i int) string   { return fmt.Sprintf("%sps/%04d", prefix(job), i) }
func notFound(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, a...)...)
}
func conflict(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConflict}, a...)...)
}

// state returns job's state, loading it from the store on first use;
// s.mu is held. An unknown job is ErrNotFound.
func (s *Service) state(ctx context.Context, job string) (*jobState, error) {
	if js := s.states[job]; js != nil {
		return js, nil
	}
	if _, err := s.jobs.Job(job); err != nil {
		return nil, err
	}
	js, err := s.load(ctx, job)
	if err != nil {
		return nil, err
	}
	s.states[job] = js
	return js, nil
}

// load reads a job's EDL records.
func (s *Service) load(ctx context.Context, job string) (*jobState, error) {
	kvs, _, err := s.st.List(ctx, prefix(job))
	if err != nil {
		return nil, fmt.Errorf("load the EDL state of %s: %w", job, err)
	}
	js := &jobState{ps: map[int]*psRec{}}
	var tasks []*taskRec
	for _, kv := range kvs {
		rest := kv.Key[len(prefix(job)):]
		var err error
		switch {
		case rest == "master":
			js.master = &masterRec{}
			err = json.Unmarshal(kv.Value, js.master)
		case rest == "queue":
			js.queue = &queueState{}
			err = json.Unmarshal(kv.Value, &js.queue.meta)
		case len(rest) > 6 && rest[:6] == "tasks/":
			t := &taskRec{}
			err = json.Unmarshal(kv.Value, t)
			tasks = append(tasks, t)
		case len(rest) > 3 && rest[:3] == "ps/":
			p := &psRec{}
			if err = json.Unmarshal(kv.Value, p); err == nil {
				js.ps[p.Index] = p
			}
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", kv.Key, err)
		}
	}
	if js.queue != nil {
		if err := js.queue.rebuild(tasks); err != nil {
			return nil, fmt.Errorf("load the task queue of %s: %w", job, err)
		}
	}
	return js, nil
}

// change is a set of puts to make durable.
type change struct {
	ops  []store.Op
	keys []string
}

// put adds a put of v as JSON (v is one of the package's records: plain
// structs of strings, numbers and times, which always encode).
func (c *change) put(key string, v any) {
	data, _ := json.Marshal(v)
	c.ops = append(c.ops, store.OpPut(key, data))
	c.keys = append(c.keys, key)
}

// queue queues job's change c for its transaction; s.mu is held. Nil
// when c is empty.
func (s *Service) queue(job string, c *change) *batchReq {
	if len(c.ops) == 0 {
		return nil
	}
	return s.batch.enqueue(job, c.ops, c.keys)
}

// wait waits for a queued change (none: nil) and, on failure, forgets the
// job's state so that it is loaded again from the store: memory never
// keeps a change the store refused.
func (s *Service) wait(job string, r *batchReq) error {
	if r == nil {
		return nil
	}
	err := <-r.done
	if err != nil {
		s.mu.Lock()
		delete(s.states, job)
		s.mu.Unlock()
		return fmt.Errorf("store the EDL state of %s: %w", job, err)
	}
	return nil
}

// token returns a new lease token; s.mu is held.
func (s *Service) token() string {
	s.seq++
	return fmt.Sprintf("%x", s.seq)
}

// ttl converts seconds to a duration.
func ttl(sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }

// ptrTime returns a pointer to t in UTC.
func ptrTime(t time.Time) *time.Time { t = t.UTC(); return &t }
