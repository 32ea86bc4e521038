package policy

import (
	"cmp"
	"math"
	"slices"

	"github.com/gpusched/gpusched/engine"
	"github.com/gpusched/gpusched/model"
)

// SRTF is the preemptive shortest-remaining-time-first oracle.
type SRTF struct {
	keys []srtfKey
}

type srtfKey struct {
	left float64 // seconds of work left at the job's best speed
	job  *model.Job
}

// Name returns "srtf".
func (*SRTF) Name() string { return "srtf" }

// Order implements engine.QueuePolicy.
func (p *SRTF) Order(s *model.State, now model.Time, buf []*model.Job) engine.Order {
	p.keys = p.keys[:0]
	for _, list := range [][]*model.Job{s.Running(), s.Waiting()} {
		for _, j := range list {
			p.keys = append(p.keys, srtfKey{left: RemainingTime(s, j, now), job: j})
		}
	}
	slices.SortFunc(p.keys, func(a, b srtfKey) int {
		if c := cmp.Compare(a.left, b.left); c != 0 {
			return c
		}
		return a.job.Seq - b.job.Seq
	})
	for _, k := range p.keys {
		buf = append(buf, k.job)
	}
	return engine.Order{Jobs: buf, Preemptive: true}
}

// RemainingTime returns the seconds job j needs to finish at its best speed
// on its requested GPU count, +Inf when it cannot run anywhere.
func RemainingTime(s *model.State, j *model.Job, now model.Time) float64 {
	n := j.Spec.GPUs
	v, _ := engine.BestSpeed(s, j, n, engine.Feasible(s, j, n))
	if v <= 0 {
		return math.Inf(1)
	}
	return j.Remaining(now) / v
}
