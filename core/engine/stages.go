package engine

import "github.com/gpusched/gpusched/core/model"

// Order is a queue policy's answer: the jobs to consider, most important
// first.
type Order struct {
	// Jobs are the candidates. A non-preemptive order holds waiting jobs
	// only; a preemptive one holds running jobs too.
	Jobs []*model.Job
	// Preemptive lets the engine stop running jobs that lose their place.
	Preemptive bool
	// Backfill lets later jobs start when an earlier one does not fit
	// (non-preemptive orders; preemptive orders always backfill).
	Backfill bool
	// Stop lists running jobs the policy wants stopped (hlas demotions), in
	// the order it would rather stop them. Their GPUs are free for this
	// round's placements by the Claim jobs; a stop whose GPUs nobody took is
	// cancelled, so the job keeps running. When some of them have
	// checkpoints, those that lose the least work are freed first (package
	// doc, stop candidates).
	Stop []*model.Job
	// Claim is how many of the leading Jobs may take the GPUs of the Stop
	// jobs; the jobs after them use free GPUs only (hlas: the Q1 jobs, so
	// that a demoted job makes room only for a job of the higher queue). A
	// preemptive order lets every job it selects claim the GPUs of the
	// running jobs it left out. With a policy that is a Gate, every job may
	// claim, and the gate says whose GPUs (Gate.MayTake).
	Claim int
	// Updates are queue changes the shell must record (demotions,
	// promotions, history resets). They hold even when a stop is cancelled.
	Updates []Update
	// Types, when not nil, has one entry per job of Jobs: the GPU types the
	// job may use this round (an allocation-matrix policy's choice, e.g.
	// maxmin). Jobs then book GPU counts in order as if the cluster were
	// empty; a running job outside its types moves to one of them or stops;
	// a job with no types does not run (assign.go). Preemptive, Backfill,
	// Stop and Claim are ignored.
	Types []TypeSet
	// Lanes, when not nil, gives each of Jobs a lane (the queue layer: one
	// lane per team queue). Without Backfill a job that does not fit then
	// blocks only the later jobs of its own lane, not the whole order.
	Lanes []int32
	// Stepwise releases the stop candidates one at a time, in order (by
	// lost work first when some have checkpoints), for each job that
	// claims their GPUs, even when none has a checkpoint: a job stops only
	// as many candidates as it needs (the queue layer's reclaim). A
	// candidate released for one of the leading Claim jobs stays free for
	// the next of them; once they have been placed, the released
	// candidates no placement used are taken back, and from then on those
	// a later job's claim releases and does not use are taken back at once,
	// so that no other job takes their GPUs.
	Stepwise bool
}

// Update changes a job's queue and may reset its attained-service history.
type Update struct {
	Job   *model.Job
	Queue int
	Reset bool
}

// QueuePolicy orders jobs (stage 1). buf may be used as the backing array of
// the returned Order.Jobs.
type QueuePolicy interface {
	Name() string
	Order(s *model.State, now model.Time, buf []*model.Job) Order
}

// Placer chooses GPUs for a job (stage 3): n GPUs of one type whose bit is
// set in types. A placement uses free GPUs of the pool, and may move running
// jobs that are settled in the pool (Pool.Settled) to other free GPUs to make
// room (seed 003's swaps). Place returns a zero Placement when it cannot; it
// must not change the pool. It may assume, and the engine relies on it when
// it tries which stop candidates to release, that no placement is possible
// unless some type in types has n free GPUs.
type Placer interface {
	Name() string
	Place(s *model.State, p *Pool, j *model.Job, n int, types TypeSet) Placement
}

// Placement is a placer's answer: the job's GPUs and the running jobs it
// moves (each to its new GPUs; their old GPUs may be among the job's).
type Placement struct {
	GPUs  []model.GPU
	Moves []Assignment
	// Pause, set only when GPUs is nil, says that the job could be placed
	// but the placer holds it back on purpose, and why (seed 002, claim 8:
	// the best node is in load state 3). The engine reports it in
	// Plan.Paused.
	Pause string
}

// Scaler resizes elastic jobs (stage 4), after placement, through the
// round's Resizer: running jobs that keep their GPUs and the jobs the round
// starts.
type Scaler interface {
	Name() string
	Scale(s *model.State, now model.Time, r *Resizer)
}

// Donor is implemented by scalers that shrink running elastic jobs to make
// room for a waiting job that does not fit (seed 001). Donate takes one
// replica from a job of its choice through r, preferring jobs on a GPU type
// in types (those w can use); it returns false when no job can give. The
// engine tries to place w after each donation and undoes them all when w
// still does not fit.
type Donor interface {
	Donate(s *model.State, now model.Time, r *Resizer, w *model.Job, types TypeSet) bool
}

// Waker is implemented by scalers that act periodically (seed 000) and by
// queue policies that schedule in rounds (the allocation policies): Next
// returns the time of the next round they need after a round at now, or -1.
// The engine reports the earliest as Plan.Wake.
type Waker interface {
	Next(now model.Time) model.Time
}

// TypeSet is a set of GPU type indices (bit i = type i).
type TypeSet uint64

// Has reports whether type t is in the set.
func (ts TypeSet) Has(t int) bool { return ts&(1<<uint(t)) != 0 }
