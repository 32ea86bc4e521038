package engine

import (
	"fmt"

	"github.com/gpusched/gpusched/core/model"
)

// Applier carries a Plan out in a shell: the simulator on its virtual
// clock, the service on its agents, Kubernetes through its API server.
// Apply calls its methods in the one canonical order; each returns an error
// that stops the plan there (a shell that can skip a step it cannot carry
// out, as the service defers a start whose GPUs are still held, returns
// nil and deals with it itself).
type Applier interface {
	// Update records a queue change (Update.Apply does the model's part).
	Update(u Update) error
	// Reject ends a waiting job that can never run here.
	Reject(r Rejection) error
	// Preempt stops a running job and queues it again.
	Preempt(j *model.Job) error
	// Resize gives a running job a new, smaller or larger, allocation; it
	// keeps running.
	Resize(a Assignment) error
	// Migrate moves a running job to other GPUs (a stop and a restart).
	Migrate(a Assignment) error
	// Start starts a waiting job on its GPUs.
	Start(a Assignment) error
}

// Apply carries out plan through a in the canonical order (DESIGN.md):
// queue updates and rejections; preemptions; the resizes that shrink a
// job; migrations; the resizes that grow a job; starts. Shrinks come before
// migrations and growth after them because a migration may use GPUs a
// shrink frees and growth GPUs that migrations and preemptions free; a
// resize is classed as shrinking or growing by the job's allocation before
// any step runs. Apply stops at the first error and returns it with the
// step it came from.
func Apply(plan Plan, a Applier) error {
	for _, u := range plan.Updates {
		if err := a.Update(u); err != nil {
			return fmt.Errorf("update of %s: %w", u.Job.Spec.ID, err)
		}
	}
	for _, r := range plan.Reject {
		if err := a.Reject(r); err != nil {
			return fmt.Errorf("reject of %s: %w", r.Job.Spec.ID, err)
		}
	}
	for _, j := range plan.Preempt {
		if err := a.Preempt(j); err != nil {
			return fmt.Errorf("preempt of %s: %w", j.Spec.ID, err)
		}
	}
	grows := make([]bool, len(plan.Resize))
	for i, r := range plan.Resize {
		grows[i] = len(r.GPUs) > len(r.Job.Alloc)
	}
	if err := resizes(plan.Resize, grows, false, a); err != nil {
		return err
	}
	for _, m := range plan.Migrate {
		if err := a.Migrate(m); err != nil {
			return fmt.Errorf("migrate of %s: %w", m.Job.Spec.ID, err)
		}
	}
	if err := resizes(plan.Resize, grows, true, a); err != nil {
		return err
	}
	for _, s := range plan.Start {
		if err := a.Start(s); err != nil {
			return fmt.Errorf("start of %s: %w", s.Job.Spec.ID, err)
		}
	}
	return nil
}

// resizes applies the resizes whose growth matches grow.
func resizes(rs []Assignment, grows []bool, grow bool, a Applier) error {
	for i, r := range rs {
		if grows[i] != grow {
			continue
		}
		if err := a.Resize(r); err != nil {
			return fmt.Errorf("resize of %s: %w", r.Job.Spec.ID, err)
		}
	}
	return nil
}

// Apply records the update on its job, at now: the job's queue, and a
// reset of its attained-service history when the update says so. Every
// shell's Applier.Update does this, and whatever else it keeps.
func (u Update) Apply(now model.Time) {
	u.Job.Queue = u.Queue
	if u.Reset {
		u.Job.ResetHistory(now)
	}
}
