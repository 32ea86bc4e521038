package engine

import "github.com/gpusched/gpusched/model"

// Feasible returns the GPU types on which job j can ever run with n GPUs:
// its type constraint, per-GPU memory at least its peak memory, a non-zero
// speed in the profile, and at least n GPUs of the type in the cluster.
func Feasible(s *model.State, j *model.Job, n int) TypeSet {
	var ts TypeSet
	c := s.Cluster
	for t, gt := range c.Types {
		if j.Spec.GPUType != "" && j.Spec.GPUType != gt.Name {
			continue
		}
		if j.Spec.PeakMemMiB > gt.MemMiB || c.TypeGPUs(t) < n {
			continue
		}
		if s.Profile.Speed(j, t, n) <= 0 {
			continue
		}
		ts |= 1 << uint(t)
	}
	return ts
}

// BestSpeed returns the highest speed of j on n GPUs over the types in ts,
// and that type (the lowest index among equals); -1 when ts is empty.
func BestSpeed(s *model.State, j *model.Job, n int, ts TypeSet) (float64, int) {
	best, bt := 0.0, -1
	for t := range s.Cluster.Types {
		if !ts.Has(t) {
			continue
		}
		if v := s.Profile.Speed(j, t, n); v > best {
			best, bt = v, t
		}
	}
	return best, bt
}

// Reasons used in decision traces.
const (
	reasonPlaced     = "placed on free GPUs"
	reasonPreempted  = "lost its place to higher-priority jobs"
	reasonNoFit      = "not enough free GPUs of a feasible type"
	reasonNoCapacity = "outranked: no capacity left in this round"
	reasonInfeasible = "no GPU type in the cluster can run it (type constraint, memory, zero throughput or too few GPUs)"
	reasonResized    = "resized by the scaler"
	reasonMigrated   = "moved to other GPUs to make room (swap)"
	reasonMinOnly    = "placed with its minimum GPUs"
	reasonAssigned   = "moved to a GPU type its allocation gives it this round"
)
