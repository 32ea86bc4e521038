package agent

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// proc is one replica the agent knows: running, or exited and not yet
// forgotten. Its fields other than spec and dir are guarded by table.mu.
type proc struct {
	spec api.Replica
	// dir is the replica's directory; empty when its ID cannot name one.
	dir      string
	status   api.ReplicaStatus
	stopping bool
	stopWhy  string        // why it is being stopped
	byAgent  bool          // the agent stops it on its own (it is exiting)
	stop     chan struct{} // closed when the replica must stop
	exited   chan struct{} // closed when the whole group is gone
	acked    bool          // the server stored the result
	logSent  int64         // the server's length of the replica's log
	logEpoch int64         // the registration logSent was heard in
	logDone  bool          // all output shipped (or given up on)
	// notFoundSince is when log uploads began to be answered 404.
	notFoundSince time.Time
	// progress is where the agent is in the replica's progress file.
	progress shim.ProgressWatch
	// shim: the replica runs under a shim (record.Shim).
	shim   bool
	saveMu sync.Mutex // orders writes of the replica's record
}

// newProc returns a proc for spec, not started.
func newProc(spec api.Replica, dir string) *proc {
	return &proc{
		spec:   spec,
		dir:    dir,
		status: api.ReplicaStatus{ID: spec.ID, Job: spec.Job, Phase: api.ReplicaRunning},
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
}

// table holds the agent's replicas.
type table struct {
	mu    sync.Mutex
	procs map[string]*proc
	// seen holds every replica ID this agent (or an earlier one on the same
	// data directory) has started: none is started twice.
	seen map[string]bool
}

// newTable returns an empty table.
func newTable() *table {
	return &table{procs: map[string]*proc{}, seen: map[string]bool{}}
}

// plan is what reconciling with one Work means.
type plan struct {
	start   []*proc  // new replicas, already in the table
	stop    []*proc  // running replicas no longer listed
	acked   []*proc  // exited replicas the server acknowledged just now
	changed []change // running replicas whose work entry changed
}

// reconcile compares the table with w and returns what to do. New replicas
// are entered (and marked seen) here, so that no later Work starts them
// again.
func (t *table) reconcile(w api.Work, dirOf func(id string) string) plan {
	t.mu.Lock()
	defer t.mu.Unlock()
	pl := plan{acked: t.ackLocked(w.Acked)}
	listed := make(map[string]bool, len(w.Replicas))
	for _, r := range w.Replicas {
		listed[r.ID] = true
		p := t.procs[r.ID]
		switch {
		case p != nil:
			if p.status.Phase == api.ReplicaRunning && !p.stopping && changed(p.spec, r) {
				gen := p.spec.Env["GPUSCHED_GENERATION"]
				p.spec.HostFile, p.spec.Env, p.spec.GPUs = r.HostFile, r.Env, r.GPUs
				pl.changed = append(pl.changed, change{p: p,
					notify: r.Env["GPUSCHED_GENERATION"] != gen && r.Env["NODE_RANK"] == "0"})
			}
		case !t.seen[r.ID]:
			t.seen[r.ID] = true
			p = newProc(r, dirOf(r.ID))
			t.procs[r.ID] = p
			pl.start = append(pl.start, p)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(t.procs)) {
		p := t.procs[id]
		if !listed[id] && p.status.Phase == api.ReplicaRunning && !p.stopping {
			p.stopping, p.stopWhy = true, "no longer assigned to this node"
			close(p.stop)
			pl.stop = append(pl.stop, p)
		}
	}
	return pl
}

// changed reports whether the work entry r of a running replica differs
// from its spec in what a live resize changes: host list, environment or
// GPUs (the membership generation is in the environment).
func changed(spec, r api.Replica) bool {
	return r.HostFile != spec.HostFile || !maps.Equal(r.Env, spec.Env) || !slices.Equal(r.GPUs, spec.GPUs)
}

// ack marks the exited replicas among ids acknowledged and returns the
// ones that were not already.
func (t *table) ack(ids []string) []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ackLocked(ids)
}

// ackLocked is ack with t.mu held.
func (t *table) ackLocked(ids []string) []*proc {
	var out []*proc
	for _, id := range ids {
		if p := t.procs[id]; p != nil && p.status.Phase == api.ReplicaExited && !p.acked {
			p.acked = true
			out = append(out, p)
		}
	}
	return out
}

// statuses returns the status of every replica not yet acknowledged,
// sorted by ID.
func (t *table) statuses() []api.ReplicaStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []api.ReplicaStatus{}
	for _, id := range slices.Sorted(maps.Keys(t.procs)) {
		if p := t.procs[id]; !p.acked {
			out = append(out, p.status)
		}
	}
	return out
}

// running returns the replicas whose processes may still be alive.
func (t *table) running() []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*proc
	for _, id := range slices.Sorted(maps.Keys(t.procs)) {
		if p := t.procs[id]; p.status.Phase == api.ReplicaRunning {
			out = append(out, p)
		}
	}
	return out
}

// update runs f on p under the table's lock.
func (t *table) update(p *proc, f func(p *proc)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(p)
}

// read returns f(p), computed under the table's lock.
func read[T any](t *table, p *proc, f func(p *proc) T) T {
	t.mu.Lock()
	defer t.mu.Unlock()
	return f(p)
}

// stopForExit asks p's supervisor to stop it (once) because the agent is
// exiting.
func (t *table) stopForExit(p *proc) {
	t.update(p, func(p *proc) {
		if !p.stopping {
			p.stopping, p.stopWhy, p.byAgent = true, "the agent is exiting", true
			close(p.stop)
		}
	})
}

// logPending returns the replicas whose output is not all shipped.
func (t *table) logPending() []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*proc
	for _, id := range slices.Sorted(maps.Keys(t.procs)) {
		if p := t.procs[id]; !p.logDone {
			out = append(out, p)
		}
	}
	return out
}

// logState returns the server's length of p's log, whether p has exited
// and whether the length was heard from the server in registration epoch.
func (t *table) logState(p *proc, epoch int64) (sent int64, exited, synced bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return p.logSent, p.status.Phase == api.ReplicaExited, p.logEpoch == epoch
}

// resyncLogs makes every replica's output pending again after a new
// registration, so that a restarted server that lost output gets it again.
func (t *table) resyncLogs() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.procs {
		p.logDone = false
	}
}

// forgettable removes and returns the replicas that are done: exited,
// acknowledged and with all their output shipped.
func (t *table) forgettable() []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*proc
	for id, p := range t.procs {
		if p.acked && p.logDone {
			delete(t.procs, id)
			out = append(out, p)
		}
	}
	return out
}

// add enters p, already started or exited (a record loaded from disk).
func (t *table) add(p *proc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen[p.spec.ID] = true
	t.procs[p.spec.ID] = p
}

// markSeen records that replica id must never be started.
func (t *table) markSeen(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen[id] = true
}
