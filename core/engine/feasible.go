package engine

import (
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// Feasible returns the GPU types on which job j can ever run with n GPUs:
// its type constraint, per-GPU memory at least its peak memory, a non-zero
// speed in the profile, and at least n GPUs of the type in the cluster on
// nodes with room for its replicas' other resources.
func Feasible(s *model.State, j *model.Job, n int) TypeSet {
	var ts TypeSet
	for t := range s.Cluster.Types {
		if usable(s, j, t, n) && s.Profile.Speed(j, t, n) > 0 {
			ts |= 1 << uint(t)
		}
	}
	return ts
}

// usable reports whether type t passes Feasible's rules but the speed: j's
// type constraint, its peak memory, and at least n GPUs of the type, on
// nodes that can hold its replicas' other resources.
func usable(s *model.State, j *model.Job, t, n int) bool {
	c := s.Cluster
	gt := &c.Types[t]
	if j.Spec.GPUType != "" && j.Spec.GPUType != gt.Name {
		return false
	}
	if j.Spec.PeakMemMiB > gt.MemMiB || c.TypeGPUs(t) < n {
		return false
	}
	return !c.Vectored() || s.Holds(j, t) >= n
}

// FeasibleSpeeds is Feasible for a job whose speed on n GPUs of each type
// is known: speed[t] is s.Profile.Speed(j, t, n).
func FeasibleSpeeds(s *model.State, j *model.Job, n int, speed []float64) TypeSet {
	var ts TypeSet
	for t := range s.Cluster.Types {
		if usable(s, j, t, n) && speed[t] > 0 {
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
		if !within.Has(t) || !usable(s, j, t, n) {
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
		case c.Vectored() && c.Holds(t, s.Request(j), j.Spec.ReplicaGPUs) < n:
			why = append(why, unfitResources(s, j, t, n))
		case s.Profile.Speed(j, t, n) <= 0:
			why = append(why, fmt.Sprintf("its throughput on %s is 0", gt.Name))
		}
	}
	return fmt.Sprintf("no GPU type can run it on %d GPUs: %s", n, strings.Join(why, "; "))
}

// unfitResources explains why the nodes of type t cannot hold j's
// replicas on n GPUs: no node has room for one replica of the scarcest
// resource, or the nodes hold too few of them.
func unfitResources(s *model.State, j *model.Job, t, n int) string {
	c, req := s.Cluster, s.Request(j)
	gt := c.Types[t].Name
	r := c.Scarcest(t, req, j.Spec.ReplicaGPUs)
	if r < 0 {
		return fmt.Sprintf("%s nodes cannot hold its replicas", gt)
	}
	name := c.Resources()[r]
	most, node := c.MostOf(t, r)
	if most < req[r] {
		return fmt.Sprintf("one replica asks %s of %s, the largest %s node %s has %s", model.FormatAmount(name, req[r]), name, gt, node, model.FormatAmount(name, most))
	}
	return fmt.Sprintf("%s nodes have room for only %d of its %d GPUs (%s: %s per replica)", gt, c.Holds(t, req, j.Spec.ReplicaGPUs), n, name, model.FormatAmount(name, req[r]))
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

// reasonShort is the reason of a job blocked by a resource besides GPUs:
// GPUs of a type it could use were free, on nodes without enough of it.
func reasonShort(resource string) string {
	return shortPrefix + resource + shortSuffix
}

// shortPrefix and shortSuffix frame reasonShort's resource.
const (
	shortPrefix = "not enough free "
	shortSuffix = " on the nodes with free GPUs of a feasible type"
)

// ShortResource returns the resource that a blocked decision's reason
// names as short (reasonShort), "" when it names none besides GPUs.
func ShortResource(reason string) string {
	if !strings.HasPrefix(reason, shortPrefix) || !strings.HasSuffix(reason, shortSuffix) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(reason, shortPrefix), shortSuffix)
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

// FeasibleInto is Feasible that also sets speed[t], for every type, to j's
// speed on n GPUs of it where Feasible admits it and to 0 elsewhere, with
// one speed lookup per type that passes Feasible's other rules.
func FeasibleInto(s *model.State, j *model.Job, n int, speed []float64) TypeSet {
	var ts TypeSet
	for t := range s.Cluster.Types {
		speed[t] = 0
		if !usable(s, j, t, n) {
			continue
		}
		if v := s.Profile.Speed(j, t, n); v > 0 {
			speed[t] = v
			ts |= 1 << uint(t)
		}
	}
	return ts
}
