package policy

import (
	"github.com/gpusched/gpusched/core/model"
)

// moveFactor returns, for Gittins with a MoveCost, what j's value in the
// program is scaled by on every GPU type but the one it runs on, and that
// type; (1, -1) when nothing is scaled (another objective, no MoveCost, or
// j not running).
//
// A move restarts j on the other type, a pause of MoveCost without
// progress. Over what j is expected to have left, E[rem] (seconds at its
// best speed, by the learned size distribution, done of it done), that is
// a share MoveCost / E[rem] of its remaining time lost, so the other types
// are worth 1 − MoveCost / E[rem] of their speed (not below 0): a move
// must gain more than it loses. A job expected to finish soon is not moved
// for a small gain; a long one still goes where the program wants it. The
// cost is counted on running jobs only: a waiting job restarts wherever
// it goes (docs/EXPERIMENTS.md, issue 29, ninth session).
func (a *Alloc) moveFactor(s *model.State, j *model.Job, done float64) (float64, int) {
	if a.Objective != Gittins || a.MoveCost <= 0 || j.State != model.Running || len(j.Alloc) == 0 {
		return 1, -1
	}
	f := 1 - a.MoveCost.Seconds()/a.surv.remaining(done)
	return max(f, 0), s.Cluster.TypeOf(j.Alloc[0])
}
