package model

import (
	"fmt"
	"math/bits"
	"sort"
)

// State is everything the engine looks at: the cluster, the job profile,
// which GPUs are free, and the active (waiting and running) jobs. Shells
// change it only through its methods, which keep it consistent.
type State struct {
	Cluster *Cluster
	Profile Profile

	free    []uint64 // per node: bit i set = GPU i free
	waiting []*Job   // by (Spec.Submit, Seq)
	running []*Job   // by Seq
}

// NewState returns a state with every GPU free and no jobs.
func NewState(c *Cluster, p Profile) *State {
	s := &State{Cluster: c, Profile: p, free: make([]uint64, len(c.Nodes))}
	for i, n := range c.Nodes {
		s.free[i] = fullMask(n.GPUs)
	}
	return s
}

func fullMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// FreeMask returns the free GPUs of node n as a bit mask.
func (s *State) FreeMask(n int) uint64 { return s.free[n] }

// FreeGPUs returns the number of free GPUs in the cluster.
func (s *State) FreeGPUs() int {
	f := 0
	for _, m := range s.free {
		f += bits.OnesCount64(m)
	}
	return f
}

// Waiting returns the waiting jobs in arrival order. Do not modify the slice.
func (s *State) Waiting() []*Job { return s.waiting }

// Running returns the running jobs in arrival order. Do not modify the slice.
func (s *State) Running() []*Job { return s.running }

// Submit adds a new job to the waiting queue.
func (s *State) Submit(j *Job) {
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
	s.waiting = removeBy(s.waiting, j, waitLess)
	j.State, j.Alloc = Running, alloc
	s.running = insertBy(s.running, j, seqLess)
	return nil
}

// Resize replaces a running job's allocation.
func (s *State) Resize(j *Job, alloc []GPU) error {
	if j.State != Running {
		return fmt.Errorf("resize %s: job is %s", j.Spec.ID, j.State)
	}
	s.give(j.Alloc)
	if err := s.take(alloc); err != nil {
		if err2 := s.take(j.Alloc); err2 != nil {
			panic("model: cannot restore allocation: " + err2.Error())
		}
		return fmt.Errorf("resize %s: %w", j.Spec.ID, err)
	}
	j.Alloc = alloc
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

func (s *State) release(j *Job) {
	s.give(j.Alloc)
	j.Alloc = nil
	s.running = removeBy(s.running, j, seqLess)
}

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
	}
	return nil
}

func (s *State) give(alloc []GPU) {
	for _, g := range alloc {
		s.free[g.Node] |= 1 << uint(g.Index)
	}
}

func waitLess(a, b *Job) bool {
	if a.Spec.Submit != b.Spec.Submit {
		return a.Spec.Submit < b.Spec.Submit
	}
	return a.Seq < b.Seq
}

func seqLess(a, b *Job) bool { return a.Seq < b.Seq }

func insertBy(list []*Job, j *Job, less func(a, b *Job) bool) []*Job {
	i := sort.Search(len(list), func(k int) bool { return less(j, list[k]) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = j
	return list
}

func removeBy(list []*Job, j *Job, less func(a, b *Job) bool) []*Job {
	i := sort.Search(len(list), func(k int) bool { return !less(list[k], j) })
	if i == len(list) || list[i] != j {
		panic("model: job " + j.Spec.ID + " missing from its queue")
	}
	copy(list[i:], list[i+1:])
	list[len(list)-1] = nil
	return list[:len(list)-1]
}
