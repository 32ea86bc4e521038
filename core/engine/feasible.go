package engine

import (
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// Feasible returns the GPU types on which job j can ever run with n GPUs:
// its type constraint, per-GPU memory at least its peak memory, a non-zero
// speed in the profile, and at least n GPUs of the type in the cluster.
func Feasible(s *model.State, j *model.Job, n int) TypeSet {
	var ts TypeSet
	for t := range s.Cluster.Types {
		if usable(s.Cluster, j, t, n) && s.Profile.Speed(j, t, n) > 0 {
			ts |= 1 << uint(t)
		}
	}
	return ts
}

// usable reports whether type t passes Feasible's rules but the speed: j's
// type constraint, its peak memory, and at least n GPUs of the type.
func usable(c *model.Cluster, j *model.Job, t, n int) bool {
	gt := &c.Types[t]
	if j.Spec.GPUType != "" && j.Spec.GPUType != gt.Name {
		return false
	}
	return j.Spec.PeakMemMiB <= gt.MemMiB && c.TypeGPUs(t) >= n
}

// FeasibleSpeeds is Feasible for a job whose speed on n GPUs of each type
// is known: speed[t] is s.Profile.Speed(j, t, n).
func FeasibleSpeeds(s *model.State, j *model.Job, n int, speed []float64) TypeSet {
	var ts TypeSet
	for t := range s.Cluster.Types {
		if usable(s.Cluster, j, t, n) && speed[t] > 0 {
			ts |= 1 << uint(t)
		}
	}
	return ts
}

// FeasibleBest returns Feasible(s, j, n) & within and, over those types,
// BestSpeed: the highest speed and its type (-1 when there is none), with
// one speed lookup per type of within.
func FeasibleBest(s *model.State, j *model.Job, n int, within TypeSet) (TypeSet, float64, int) {
	var ts TypeSet
	best, bt := 0.0, -1
	for t := range s.Cluster.Types {
		if !within.Has(t) || !usable(s.Cluster, j, t, n) {
			continue
		}
		v := s.Profile.Speed(j, t, n)
		if v <= 0 {
			continue
		}
		ts |= 1 << uint(t)
		if v > best {
			best, bt = v, t
		}
	}
	return ts, best, bt
}

// Unfit explains why job j cannot run with n GPUs on any GPU type of the
// cluster (Feasible is empty): a type constraint the cluster cannot meet,
// or, type by type, the first of Feasible's rules the type breaks.
func Unfit(s *model.State, j *model.Job, n int) string {
	c := s.Cluster
	if j.Spec.GPUType != "" && c.TypeIndex(j.Spec.GPUType) < 0 {
		return fmt.Sprintf("it requires GPU type %s, which the cluster does not have", j.Spec.GPUType)
	}
	var why []string
	for t, gt := range c.Types {
		if j.Spec.GPUType != "" && j.Spec.GPUType != gt.Name {
			continue
		}
		switch {
		case j.Spec.PeakMemMiB > gt.MemMiB:
			why = append(why, fmt.Sprintf("%s has %d MiB per GPU, less than its peak memory of %d MiB", gt.Name, gt.MemMiB, j.Spec.PeakMemMiB))
		case c.TypeGPUs(t) < n:
			why = append(why, fmt.Sprintf("%s has only %d GPUs", gt.Name, c.TypeGPUs(t)))
		case s.Profile.Speed(j, t, n) <= 0:
			why = append(why, fmt.Sprintf("its throughput on %s is 0", gt.Name))
		}
	}
	return fmt.Sprintf("no GPU type can run it on %d GPUs: %s", n, strings.Join(why, "; "))
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
	reasonResized    = "resized by the scaler"
	reasonMigrated   = "moved to other GPUs to make room (swap)"
	reasonMinOnly    = "placed with its minimum GPUs"
	reasonAssigned   = "moved to a GPU type its allocation gives it this round"
)
