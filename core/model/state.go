package model

import (
	"fmt"
	"math/bits"
	"sort"
)

// State is everything the engine looks at: the cluster, the job profile,
// which GPUs are free, and the active (waiting and running) jobs. Shells
// change it only through its methods, which keep it consistent.
//
// While a job is in a state, its Spec and Model, and what the Profile
// answers for it, do not change: the core derives a job's speeds and
// feasible types once per state (Holds, policy.Alloc, placer.Hetero). A
// shell that changes them puts the jobs into a new state, as kube does
// every round and the service when its nodes or its throughput matrix
// change.
type State struct {
	Cluster *Cluster
	Profile Profile

	free    []uint64 // per node: bit i set = GPU i free
	nfree   int      // free's set bits (FreeGPUs)
	used    []int64  // per node, per resource of the cluster: requests of the jobs there
	waiting []*Job   // by (Spec.Submit, Seq)
	running []*Job   // by Seq
	// changed logs the nodes whose free GPUs changed, for readers that
	// follow the state from round to round (ChangedSince).
	changed changeLog[int32]
	// moved logs the jobs whose allocation changed (started, restored,
	// resized, stopped, ended while running), for readers that follow the
	// running jobs from round to round (MovedSince).
	moved changeLog[*Job]
}

// NewState returns a state with every GPU free and no jobs.
func NewState(c *Cluster, p Profile) *State {
	s := &State{Cluster: c, Profile: p, free: make([]uint64, len(c.Nodes)), used: make([]int64, len(c.capacity))}
	for i, n := range c.Nodes {
		s.free[i] = fullMask(n.GPUs)
		s.nfree += bits.OnesCount64(s.free[i])
	}
	return s
}

// fullMask returns the free-GPU mask of a node with n GPUs: its n lowest
// bits set (all 64 from 64 on).
func fullMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// FreeMask returns the free GPUs of node n as a bit mask.
func (s *State) FreeMask(n int) uint64 { return s.free[n] }

// FreeGPUs returns the number of free GPUs in the cluster.
func (s *State) FreeGPUs() int { return s.nfree }

// Waiting returns the waiting jobs in arrival order. Do not modify the slice.
func (s *State) Waiting() []*Job { return s.waiting }

// Running returns the running jobs in arrival order. Do not modify the slice.
func (s *State) Running() []*Job { return s.running }

// Submit adds a new job to the waiting queue.
func (s *State) Submit(j *Job) {
	j.req, j.reqOf, j.holds = s.Cluster.Request(&j.Spec), s.Cluster, nil
	j.State = Waiting
	s.waiting = insertBy(s.waiting, j, waitLess)
}

// Start gives a waiting job the GPUs alloc and makes it running.
func (s *State) Start(j *Job, alloc []GPU) error {
	if j.State != Waiting {
		return fmt.Errorf("start %s: job is %s", j.Spec.ID, j.State)
	}
	if err := s.take(alloc); err != nil {
		return fmt.Errorf("start %s: %w", j.Spec.ID, err)
	}
	if err := s.charge(j, alloc, true); err != nil {
		s.give(alloc)
		return fmt.Errorf("start %s: %w", j.Spec.ID, err)
	}
	s.run(j, alloc)
	return nil
}

// run moves waiting job j, charged for alloc, to the running jobs.
func (s *State) run(j *Job, alloc []GPU) {
	s.waiting = removeBy(s.waiting, j, waitLess)
	j.State, j.Alloc = Running, alloc
	s.running = insertBy(s.running, j, seqLess)
	s.noteMoved(j)
	s.typed(j)
}

// typed records the GPU type of running job j's allocation (TypeOn).
func (s *State) typed(j *Job) {
	j.on, j.onOf, j.onAt = s.Cluster.TypeOf(j.Alloc[0]), s.Cluster, &j.Alloc[0]
}

// TypeOn returns the GPU type of running job j's GPUs (Cluster.TypeOf of
// its first), as recorded when a state of s's cluster gave j its
// allocation: without reading the allocation, which the per-round passes
// over every running job would otherwise each load. A job whose
// allocation no state gave it (one set by hand, in a test), or given on
// another cluster, has its type computed.
func (s *State) TypeOn(j *Job) int {
	if j.onOf == s.Cluster && len(j.Alloc) > 0 && j.onAt == &j.Alloc[0] {
		return j.on
	}
	return s.Cluster.TypeOf(j.Alloc[0])
}

// Restore makes a waiting job running on alloc as Start does, for a shell
// that rebuilds its state from jobs already running: the GPUs must be
// free, but the job's requests are counted even where they exceed what is
// left of a node (the world may hold more than the model would place), so
// that no further job is placed there.
func (s *State) Restore(j *Job, alloc []GPU) error {
	if j.State != Waiting {
		return fmt.Errorf("restore %s: job is %s", j.Spec.ID, j.State)
	}
	if err := s.take(alloc); err != nil {
		return fmt.Errorf("restore %s: %w", j.Spec.ID, err)
	}
	_ = s.charge(j, alloc, false)
	s.run(j, alloc)
	return nil
}

// Holding is a job that a shell puts back into a state it has just built,
// with the GPUs it holds in the world (none: it waits).
type Holding struct {
	Job  *Job
	GPUs []GPU
}

// Load puts jobs back into a state just built, in their order: each is
// submitted, and one that holds GPUs is restored on them (Restore). It is
// how both shells rebuild their world's snapshot — the service when its
// nodes change, kube every round. A job whose GPUs cannot be restored stays
// waiting; its error, naming the job, is among those returned.
func (s *State) Load(jobs []Holding) []error {
	var errs []error
	for _, h := range jobs {
		s.Submit(h.Job)
		if len(h.GPUs) == 0 {
			continue
		}
		if err := s.Restore(h.Job, h.GPUs); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Resize replaces a running job's allocation.
func (s *State) Resize(j *Job, alloc []GPU) error {
	if j.State != Running {
		return fmt.Errorf("resize %s: job is %s", j.Spec.ID, j.State)
	}
	s.give(j.Alloc)
	s.uncharge(j, j.Alloc)
	err := s.take(alloc)
	if err == nil {
		if err = s.charge(j, alloc, true); err != nil {
			s.give(alloc)
		}
	}
	if err != nil {
		if err2 := s.take(j.Alloc); err2 != nil {
			panic("model: cannot restore allocation: " + err2.Error())
		}
		_ = s.charge(j, j.Alloc, false)
		return fmt.Errorf("resize %s: %w", j.Spec.ID, err)
	}
	j.Alloc = alloc
	s.noteMoved(j)
	s.typed(j)
	return nil
}

// Stop frees a running job's GPUs and returns it to the waiting queue
// (preemption).
func (s *State) Stop(j *Job) error {
	if j.State != Running {
		return fmt.Errorf("stop %s: job is %s", j.Spec.ID, j.State)
	}
	s.release(j)
	j.State = Waiting
	s.waiting = insertBy(s.waiting, j, waitLess)
	return nil
}

// End removes an active job for good with the final state st (Finished or
// Rejected), freeing its GPUs if it ran.
func (s *State) End(j *Job, st JobState) error {
	switch j.State {
	case Running:
		s.release(j)
	case Waiting:
		s.waiting = removeBy(s.waiting, j, waitLess)
	default:
		return fmt.Errorf("end %s: job is already %s", j.Spec.ID, j.State)
	}
	j.State = st
	return nil
}

// release frees running job j's GPUs and requests, forgets its recorded
// type, takes it off the running jobs and logs the change (MovedSince);
// the caller sets its new state.
func (s *State) release(j *Job) {
	s.give(j.Alloc)
	s.uncharge(j, j.Alloc)
	j.Alloc, j.onOf, j.onAt = nil, nil, nil
	s.running = removeBy(s.running, j, seqLess)
	s.noteMoved(j)
}

// take marks alloc's GPUs taken, keeping the free count (FreeGPUs) and
// logging each node's change (ChangedSince); on a GPU that does not exist
// or is not free it gives back those it took and returns an error.
func (s *State) take(alloc []GPU) error {
	for i, g := range alloc {
		if int(g.Node) >= len(s.free) || g.Index < 0 || int(g.Index) >= s.Cluster.Nodes[g.Node].GPUs {
			s.give(alloc[:i])
			return fmt.Errorf("GPU %v does not exist", g)
		}
		bit := uint64(1) << uint(g.Index)
		if s.free[g.Node]&bit == 0 {
			s.give(alloc[:i])
			return fmt.Errorf("GPU %s is not free", s.Cluster.GPUName(g))
		}
		s.free[g.Node] &^= bit
		s.nfree--
		if i == 0 || alloc[i-1].Node != g.Node {
			s.note(g.Node)
		}
	}
	return nil
}

// give marks alloc's GPUs free, keeping the free count (a GPU already
// free is not counted twice) and logging each node's change.
func (s *State) give(alloc []GPU) {
	for i, g := range alloc {
		bit := uint64(1) << uint(g.Index)
		if s.free[g.Node]&bit == 0 {
			s.nfree++
		}
		s.free[g.Node] |= bit
		if i == 0 || alloc[i-1].Node != g.Node {
			s.note(g.Node)
		}
	}
}

// note logs a change of node n's free GPUs (take and give log a run of
// one allocation's GPUs on a node once). A log grown to several entries
// per node is started afresh, and readers that had not read all of it
// reload every node.
func (s *State) note(n int32) { s.changed.add(n, 8*len(s.free)+64) }

// Mark returns the number of changes of free GPUs logged so far, for
// ChangedSince.
func (s *State) Mark() uint64 { return s.changed.mark() }

// ChangedSince returns the nodes whose free GPUs changed since mark (a
// node may appear more than once, or have changed and changed back), or
// false when the state no longer knows (the caller must reload every
// node). Do not modify the slice.
func (s *State) ChangedSince(mark uint64) ([]int32, bool) { return s.changed.since(mark) }

// noteMoved logs that job j's allocation changed. A log grown past twice
// the running jobs (and 64) is started afresh, and readers that had not
// read all of it reload every running job, which costs them no more than
// the entries they skipped.
func (s *State) noteMoved(j *Job) { s.moved.add(j, 2*len(s.running)+64) }

// MovedMark returns the number of allocation changes logged so far, for
// MovedSince.
func (s *State) MovedMark() uint64 { return s.moved.mark() }

// MovedSince returns the jobs whose allocation changed since mark: those
// that started (or were restored), were resized or moved, or stopped or
// ended while running; a job may appear more than once, or have changed
// and changed back. Every other job that was running at mark runs on the
// same GPUs. It returns false when the state no longer knows (the caller
// must reload every running job). Do not modify the slice.
func (s *State) MovedSince(mark uint64) ([]*Job, bool) { return s.moved.since(mark) }

func waitLess(a, b *Job) bool {
	if a.Spec.Submit != b.Spec.Submit {
		return a.Spec.Submit < b.Spec.Submit
	}
	return a.Seq < b.Seq
}

func seqLess(a, b *Job) bool { return a.Seq < b.Seq }

// insertBy inserts j into list, kept sorted by less, after every job that
// is not after it.
func insertBy(list []*Job, j *Job, less func(a, b *Job) bool) []*Job {
	i := sort.Search(len(list), func(k int) bool { return less(j, list[k]) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = j
	return list
}

// removeBy removes j from list, kept sorted by less, finding it by binary
// search; it panics when j is not there, which is a bug in the state.
func removeBy(list []*Job, j *Job, less func(a, b *Job) bool) []*Job {
	i := sort.Search(len(list), func(k int) bool { return !less(list[k], j) })
	if i == len(list) || list[i] != j {
		panic("model: job " + j.Spec.ID + " missing from its queue")
	}
	copy(list[i:], list[i+1:])
	list[len(list)-1] = nil
	return list[:len(list)-1]
}

// Request returns what one replica of j asks of the cluster's resources
// (Cluster.Request), nil when nothing. Do not modify the slice.
func (s *State) Request(j *Job) Vec {
	if j.reqOf == s.Cluster {
		return j.req
	}
	return s.Cluster.Request(&j.Spec)
}

// Holds returns how many GPUs of type t the cluster's nodes could give
// job j if it ran alone (Cluster.Holds for its request), remembered with
// the job for the cluster it was submitted to.
func (s *State) Holds(j *Job, t int) int {
	if j.reqOf != s.Cluster {
		return s.Cluster.Holds(t, s.Cluster.Request(&j.Spec), j.Spec.ReplicaGPUs)
	}
	if j.holds == nil {
		j.holds = make([]int32, len(s.Cluster.Types))
		for u := range j.holds {
			j.holds[u] = int32(s.Cluster.Holds(u, j.req, j.Spec.ReplicaGPUs))
		}
	}
	return int(j.holds[t])
}

// Used returns what the jobs on node n hold of the cluster's resources, in
// the order of Cluster.Resources. Do not modify the slice.
func (s *State) Used(n int) Vec {
	r := len(s.Cluster.resNames)
	return s.used[n*r : (n+1)*r : (n+1)*r]
}

// NodeCounts calls f once for every node of alloc with the number of its
// GPUs there, in order of first appearance. Allocations are short: it
// counts without allocating.
func NodeCounts(alloc []GPU, f func(node, gpus int)) {
	for i, g := range alloc {
		seen := false
		for _, h := range alloc[:i] {
			if h.Node == g.Node {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		k := 0
		for _, h := range alloc[i:] {
			if h.Node == g.Node {
				k++
			}
		}
		f(int(g.Node), k)
	}
}

// charge adds what j's replicas on alloc ask to the nodes' use. With check
// it fails, changing nothing, when a node would hold more of a resource
// than it has.
func (s *State) charge(j *Job, alloc []GPU, check bool) error {
	req := s.Request(j)
	if req == nil {
		return nil
	}
	var err error
	if check {
		NodeCounts(alloc, func(n, k int) {
			if err != nil {
				return
			}
			reps, used, capa := int64(Replicas(k, j.Spec.ReplicaGPUs)), s.Used(n), s.Cluster.Capacity(n)
			for r, q := range req {
				if q > 0 && used[r]+reps*q > capa[r] {
					name := s.Cluster.resNames[r]
					err = fmt.Errorf("node %s has %s of %s free, %d replica(s) ask %s", s.Cluster.Nodes[n].Name,
						FormatAmount(name, capa[r]-used[r]), name, reps, FormatAmount(name, reps*q))
					return
				}
			}
		})
		if err != nil {
			return err
		}
	}
	s.add(j, alloc, req, 1)
	return nil
}

// uncharge removes what j's replicas on alloc ask from the nodes' use.
func (s *State) uncharge(j *Job, alloc []GPU) {
	if req := s.Request(j); req != nil {
		s.add(j, alloc, req, -1)
	}
}

func (s *State) add(j *Job, alloc []GPU, req Vec, sign int64) {
	NodeCounts(alloc, func(n, k int) {
		reps, used := sign*int64(Replicas(k, j.Spec.ReplicaGPUs)), s.Used(n)
		for r, q := range req {
			used[r] += reps * q
		}
	})
}
