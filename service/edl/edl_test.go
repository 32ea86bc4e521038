package edl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/scheduler"
	"github.com/gpusched/gpusched/service/settings"
	"github.com/gpusched/gpusched/service/store"
)

// clock is a test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// setup returns a service over a Mem store with one job, j1, submitted to
// a real scheduler.
func setup(t *testing.T) (*Service, *clock, store.Store, *scheduler.Scheduler) {
	t.Helper()
	st := store.NewMem(store.MemOptions{})
	sch, err := scheduler.New(settings.Config{Store: st, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sch.Close() })
	if _, err := sch.Submit(t.Context(), api.JobSpec{Command: []string{"train"}, GPUs: 1}); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	return New(st, sch, c.Now), c, st, sch
}

func TestMaster(t *testing.T) {
	s, c, st, sch := setup(t)
	ctx := t.Context()
	steps := []struct {
		name    string
		req     api.MasterRequest
		advance time.Duration
		granted bool
		holder  string
		epoch   int64
	}{
		{"a takes the free role", api.MasterRequest{Holder: "a", Addr: "n1:1", TTLS: 10}, 0, true, "a", 1},
		{"b cannot while a holds it", api.MasterRequest{Holder: "b", TTLS: 10}, 5 * time.Second, false, "a", 1},
		{"a renews (same epoch)", api.MasterRequest{Holder: "a", Addr: "n1:1", TTLS: 10}, 0, true, "a", 1},
		{"b takes it once a's lease ran out", api.MasterRequest{Holder: "b", Addr: "n2:1", TTLS: 10}, 11 * time.Second, true, "b", 2},
		{"a's late renewal is refused", api.MasterRequest{Holder: "a", TTLS: 10}, 0, false, "b", 2},
		{"b releases", api.MasterRequest{Holder: "b", Release: true}, 0, false, "", 2},
		{"a takes it again", api.MasterRequest{Holder: "a", TTLS: 10}, 0, true, "a", 3},
	}
	for _, step := range steps {
		c.add(step.advance)
		m, err := s.AcquireMaster(ctx, "j1", step.req)
		if err != nil || m.Granted != step.granted || m.Holder != step.holder || m.Epoch != step.epoch {
			t.Fatalf("%s: %+v %v; want granted %v holder %q epoch %d", step.name, m, err, step.granted, step.holder, step.epoch)
		}
	}
	// A new leader (a new service over the same store) sees the same role.
	if m, err := New(st, sch, c.Now).Master(ctx, "j1"); err != nil || m.Holder != "a" || m.Epoch != 3 {
		t.Fatalf("after a reload: %+v %v", m, err)
	}
	if _, err := s.Master(ctx, "j9"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
}

func TestTaskQueue(t *testing.T) {
	s, c, st, sch := setup(t)
	ctx := t.Context()
	if _, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: "t0"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("lease without a queue: %v", err)
	}
	spec := api.TaskQueueSpec{Tasks: []string{"c0", "c1", "c2"}, Passes: 2, MaxFailures: 2, TTLS: 10}
	if _, err := s.RegisterTasks(ctx, "j1", spec); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RegisterTasks(ctx, "j1", spec); !errors.Is(err, ErrConflict) {
		t.Fatalf("second registration: %v", err)
	}
	lease := func(h string) api.Lease {
		t.Helper()
		l, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: h})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l0, l1, l2 := lease("t0"), lease("t1"), lease("t2")
	if l0.Task.Data != "c0" || l1.Task.Data != "c1" || l2.Task.Data != "c2" {
		t.Fatalf("leases %+v %+v %+v", l0.Task, l1.Task, l2.Task)
	}
	if w := lease("t3"); w.Status != api.LeaseWait || w.RetryAfterS <= 0 {
		t.Fatalf("all leased: %+v", w)
	}
	done := func(l api.Lease) error {
		_, err := s.Report(ctx, "j1", l.Task.Index, l.Task.Lease, true)
		return err
	}
	if err := done(l0); err != nil {
		t.Fatal(err)
	}
	if err := done(l0); !errors.Is(err, ErrConflict) {
		t.Fatalf("task done twice: %v", err)
	}
	// t1 dies: its lease runs out; c1 goes back to the queue (failure 1).
	c.add(11 * time.Second)
	// l2 expired too, but its task was not taken back yet (expiries are
	// processed when a trainer asks for a task): its late report counts.
	if err := done(l2); err != nil {
		t.Fatalf("late report of an expired lease nobody took over: %v", err)
	}
	r1 := lease("t3")
	if r1.Status != api.LeaseGranted || r1.Task.Failures != 1 {
		t.Fatalf("re-lease after expiry: %+v", r1.Task)
	}
	if err := done(l1); !errors.Is(err, ErrConflict) {
		t.Fatalf("the dead trainer's late report: %v", err)
	}
	if err := done(r1); err != nil {
		t.Fatal(err)
	}
	if q, _ := s.Tasks(ctx, "j1"); q.DoneTotal != 3 || q.Pass != 2 || q.Todo != 3 {
		t.Fatalf("after pass 1's reports (pass 2 starts): %+v", q)
	}
	// Drain pass 1 and pass 2, failing c2 twice (it is marked failed).
	for {
		l := lease("tx")
		if l.Status == api.LeaseFinished {
			break
		}
		if l.Status == api.LeaseWait {
			c.add(11 * time.Second)
			continue
		}
		if l.Task.Data == "c2" {
			if _, err := s.Report(ctx, "j1", l.Task.Index, l.Task.Lease, false); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := done(l); err != nil {
			t.Fatal(err)
		}
	}
	q, err := New(st, sch, c.Now).Tasks(ctx, "j1") // as a new leader loads it
	if err != nil {
		t.Fatal(err)
	}
	// Pass 1: c0, c1, c2 done. Pass 2: c0, c1 done, c2 failed twice
	// (max_failures 2): marked failed.
	if !q.Finished || q.Failed != 1 || q.DoneTotal != 5 {
		t.Fatalf("final queue %+v", q)
	}
}

// TestTasksDoneOnce: 64 trainers lease and finish 1,000 tasks
// concurrently, a tenth of them "dying" (never reporting; their leases
// expire): every task is done exactly once.
func TestTasksDoneOnce(t *testing.T) {
	s, c, _, _ := setup(t)
	ctx := t.Context()
	tasks := make([]string, 1000)
	for i := range tasks {
		tasks[i] = fmt.Sprintf("chunk-%d", i)
	}
	if _, err := s.RegisterTasks(ctx, "j1", api.TaskQueueSpec{Tasks: tasks, MaxFailures: 100, TTLS: 1}); err != nil {
		t.Fatal(err)
	}
	var (
		doneBy sync.Map
		count  atomic.Int64
		wg     sync.WaitGroup
	)
	for w := range 64 {
		wg.Go(func() {
			for n := 0; ; n++ {
				l, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: fmt.Sprint("t", w)})
				if err != nil {
					t.Error(err)
					return
				}
				switch l.Status {
				case api.LeaseFinished:
					return
				case api.LeaseWait:
					c.add(500 * time.Millisecond)
					continue
				}
				if (w+n)%10 == 0 {
					continue // this trainer "dies" with the task
				}
				if _, err := s.Report(ctx, "j1", l.Task.Index, l.Task.Lease, true); err != nil {
					if !errors.Is(err, ErrConflict) {
						t.Error(err)
					}
					continue // its lease expired meanwhile and went on
				}
				if _, dup := doneBy.LoadOrStore(l.Task.Index, w); dup {
					t.Errorf("task %d done twice", l.Task.Index)
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	if count.Load() != 1000 {
		t.Fatalf("%d tasks done, want 1000", count.Load())
	}
	if q, _ := s.Tasks(ctx, "j1"); q.DoneTotal != 1000 || !q.Finished {
		t.Fatalf("queue %+v", q)
	}
}

func TestPServers(t *testing.T) {
	s, c, st, sch := setup(t)
	ctx := t.Context()
	claim := func(h string) (api.PServer, error) {
		return s.ClaimPServer(ctx, "j1", api.PServerClaim{Holder: h, Addr: h + ":1", Desired: 2, TTLS: 5})
	}
	p0, err0 := claim("ps-a")
	p1, err1 := claim("ps-b")
	if err0 != nil || err1 != nil || p0.Index != 0 || p1.Index != 1 {
		t.Fatalf("claims: %+v %v, %+v %v", p0, err0, p1, err1)
	}
	if _, err := claim("ps-c"); !errors.Is(err, ErrConflict) {
		t.Fatalf("third claim of 2: %v", err)
	}
	if again, _ := claim("ps-a"); again.Index != 0 {
		t.Fatalf("a holder claiming again: %+v", again)
	}
	if _, err := s.RenewPServer(ctx, "j1", 0, api.PServerClaim{Holder: "ps-a", TTLS: 5, Checkpoint: "/ckpt/ps-0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RenewPServer(ctx, "j1", 0, api.PServerClaim{Holder: "ps-c", TTLS: 5}); !errors.Is(err, ErrConflict) {
		t.Fatalf("renewing another's slot: %v", err)
	}
	c.add(3 * time.Second)
	if _, err := s.RenewPServer(ctx, "j1", 1, api.PServerClaim{Holder: "ps-b", TTLS: 5}); err != nil {
		t.Fatal(err)
	}
	c.add(3 * time.Second)    // ps-a is dead: its slot expired
	s2 := New(st, sch, c.Now) // as after a failover
	if l, _ := s2.PServers(ctx, "j1"); l.Live != 1 || len(l.PServers) != 2 {
		t.Fatalf("slots: %+v", l)
	}
	p, err := s2.ClaimPServer(ctx, "j1", api.PServerClaim{Holder: "ps-a2", Desired: 2, TTLS: 5})
	if err != nil || p.Index != 0 || p.Checkpoint != "/ckpt/ps-0" || p.Epoch != 2 {
		t.Fatalf("restarted pserver's claim: %+v %v; want index 0 with /ckpt/ps-0, epoch 2", p, err)
	}
}

// TestWriteFailureForgets: a change the store refuses is not kept in
// memory (the state is loaded again).
func TestWriteFailureForgets(t *testing.T) {
	s, _, st, _ := setup(t)
	ctx := t.Context()
	rev, _ := st.Put(ctx, "leader/x", []byte("me"))
	fenced := store.Fence(st, "leader/x", rev)
	sch, err := scheduler.New(settings.Config{Store: fenced, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	f := New(fenced, sch, nil)
	if _, err := f.RegisterTasks(ctx, "j1", api.TaskQueueSpec{Tasks: []string{"a"}, Passes: 1, MaxFailures: 1, TTLS: 1}); err != nil {
		t.Fatal(err)
	}
	st.Delete(ctx, "leader/x") // deposed
	if _, err := f.Lease(ctx, "j1", api.LeaseRequest{Holder: "t"}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("lease by a deposed leader: %v", err)
	}
	if q, err := s.Tasks(context.Background(), "j1"); err != nil || q.Todo != 1 || q.Leased != 0 {
		t.Fatalf("store after the refused lease: %+v %v", q, err)
	}
}

// TestLeaseWithDone: a lease request may report the previous task done
// (one request per task); a stale report leases nothing.
func TestLeaseWithDone(t *testing.T) {
	s, _, _, _ := setup(t)
	ctx := t.Context()
	if _, err := s.RegisterTasks(ctx, "j1", api.TaskQueueSpec{Tasks: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	l1, _ := s.Lease(ctx, "j1", api.LeaseRequest{Holder: "t"})
	l2, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: "t", Done: &api.TaskDone{Index: l1.Task.Index, Lease: l1.Task.Lease}})
	if err != nil || l2.Task == nil || l2.Task.Data != "b" {
		t.Fatalf("lease with done: %+v %v", l2, err)
	}
	if _, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: "t", Done: &api.TaskDone{Index: l1.Task.Index, Lease: l1.Task.Lease}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale done with a lease: %v", err)
	}
	l3, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: "t", Done: &api.TaskDone{Index: l2.Task.Index, Lease: l2.Task.Lease}})
	if err != nil || l3.Status != api.LeaseFinished || l3.Queue.DoneTotal != 2 {
		t.Fatalf("last done with a lease: %+v %v", l3, err)
	}
}

// TestDrop: after a job's state was written (master role, task queue,
// leases), Drop deletes every key under edl/<job>/ and forgets the job in
// memory, leaving other keys alone.
func TestDrop(t *testing.T) {
	s, _, st, _ := setup(t)
	ctx := t.Context()
	if _, err := s.AcquireMaster(ctx, "j1", api.MasterRequest{Holder: "a", Addr: "n1:1", TTLS: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RegisterTasks(ctx, "j1", api.TaskQueueSpec{Tasks: []string{"c0", "c1", "c2"}, Passes: 1, TTLS: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, "j1", api.LeaseRequest{Holder: "t0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "edl/j10/master", []byte(`{}`)); err != nil { // another job's key, sharing the prefix's start
		t.Fatal(err)
	}
	before, _, err := st.List(ctx, "edl/j1/")
	if err != nil || len(before) < 5 {
		t.Fatalf("%d keys of j1 before the drop, %v; want its master, queue and tasks", len(before), err)
	}
	if err := s.Drop(ctx, []string{"j1"}); err != nil {
		t.Fatal(err)
	}
	if after, _, err := st.List(ctx, "edl/j1/"); err != nil || len(after) != 0 {
		t.Fatalf("%d keys of j1 after the drop, %v", len(after), err)
	}
	if _, ok, _ := st.Get(ctx, "edl/j10/master"); !ok {
		t.Error("the drop of j1 deleted j10's key")
	}
	s.mu.Lock()
	_, kept := s.states["j1"]
	s.mu.Unlock()
	if kept {
		t.Error("j1's state is still in memory")
	}
}
