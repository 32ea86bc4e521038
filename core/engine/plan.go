package engine

import "github.com/gpusched/gpusched/core/model"

// Assignment gives a job a new allocation.
type Assignment struct {
	Job  *model.Job
	GPUs []model.GPU
}

// Rejection removes a job that can never run on the cluster.
type Rejection struct {
	Job    *model.Job
	Reason string
}

// Plan is the outcome of one scheduling round. Shells carry it out with
// Apply, which calls their Applier in the one order: Updates, Reject,
// Preempt, the Resize entries that shrink a job, Migrate, the Resize
// entries that grow a job, Start. (A resize either shrinks or grows;
// migrations may use GPUs that shrinks free, growth the GPUs that
// migrations and preemptions free.)
type Plan struct {
	Updates []Update
	Reject  []Rejection
	Preempt []*model.Job
	// Migrate moves running jobs to new GPUs: a stop and a restart that pays
	// the restart pause (seed 003's swaps).
	Migrate []Assignment
	Resize  []Assignment
	Start   []Assignment
	// Paused lists the waiting jobs that a placer held back this round
	// although GPUs were free for them (Placement.Pause).
	Paused []Pause
	// Wake, when not -1, is the time of the next round the engine needs even
	// if nothing else happens (a periodic scaler's next period).
	Wake model.Time
	// Trace explains the round: one entry per job that the round placed,
	// blocked, preempted, resized or rejected, in decision order.
	Trace []Decision
}

// Pause is a job held back by the placer, with the placer's reason.
type Pause struct {
	Job    *model.Job
	Reason string
}

// Status is the outcome of one decision.
type Status uint8

// Decision outcomes.
const (
	// Placed: a waiting job starts on the GPUs of the plan.
	Placed Status = iota
	// Preempted: a running job is stopped and queued again.
	Preempted
	// Blocked: the job could run on this cluster but not on the GPUs free now.
	Blocked
	// Unschedulable: the job can never run here and is rejected.
	Unschedulable
	// Resized: a running job's allocation changes.
	Resized
	// Migrated: a running job moves to other GPUs to make room.
	Migrated
	// Paused: the placer holds a waiting job back although it would fit
	// (Plan.Paused).
	Paused
)

// String returns the status name.
func (s Status) String() string {
	return [...]string{"placed", "preempted", "blocked", "unschedulable", "resized", "migrated", "paused"}[s]
}

// Decision is one entry of a round's trace.
type Decision struct {
	Job    string
	Status Status
	// Reason is a short constant explanation.
	Reason string
}
