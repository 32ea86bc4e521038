package engine

import "github.com/gpusched/gpusched/core/model"

// Upgrader is implemented by placers that move a running job to GPUs of a
// much faster type once such GPUs are free and no job waits for them
// (issue 28): a job that found only a slow type free when it started does
// not stay there for its whole run. Upgrade returns the job's new GPUs
// (as many as it holds, of a type it may use: Feasible), or nil to leave
// it; it must not change the pool.
type Upgrader interface {
	Upgrade(s *model.State, p *Pool, j *model.Job) []model.GPU
}

// upgrade offers every settled running job to an Upgrader placer when no
// job is left waiting after the round's placements, and records the moves
// in plan.Migrate. Schedule calls it after the walk of a non-preemptive
// order only: preemptive and allocation orders place running jobs again
// themselves.
func (e *Engine) upgrade(s *model.State, plan *Plan) {
	u, ok := e.placer.(Upgrader)
	if !ok || len(s.Waiting()) > len(plan.Start)+len(plan.Reject) {
		return
	}
	for _, j := range s.Running() {
		if !e.pool.Settled(j) {
			continue
		}
		gpus := u.Upgrade(s, e.pool, j)
		if gpus == nil {
			continue
		}
		e.pool.Release(j)
		e.took(j, j.Alloc, -len(j.Alloc))
		e.consume(gpus)
		e.pool.TakeJob(j, gpus)
		e.took(j, gpus, len(gpus))
		plan.Migrate = append(plan.Migrate, Assignment{Job: j, GPUs: gpus})
		plan.Trace = append(plan.Trace, Decision{j.Spec.ID, Migrated, reasonUpgraded})
	}
}

// reasonUpgraded is the trace's reason for an upgrade.
const reasonUpgraded = "moved to a much faster GPU type that is free"
