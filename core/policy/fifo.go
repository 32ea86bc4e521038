package policy

import (
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// FIFO orders waiting jobs by arrival.
type FIFO struct {
	// Backfill lets jobs behind a blocked job start when they fit.
	Backfill bool
}

// Name returns "fifo".
func (FIFO) Name() string { return "fifo" }

// Order implements engine.QueuePolicy. The state's waiting queue is already
// in arrival order, so this costs nothing.
func (f FIFO) Order(s *model.State, _ model.Time, _ []*model.Job) engine.Order {
	return engine.Order{Jobs: s.Waiting(), Backfill: f.Backfill}
}
