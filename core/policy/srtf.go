package policy

import (
	"math"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// SRTF is the preemptive shortest-remaining-time-first oracle. Its zero
// value is ready to use; it caches each job's best speed (which depends only
// on the job and the cluster), so one SRTF must serve one cluster.
type SRTF struct {
	keys []srtfKey
	sort *radixScratch
	best map[*model.Job]float64
}

type srtfKey struct {
	left float64 // seconds of work left at the job's best speed
	seq  int     // the job's Seq, here so that ties need not load the job
	job  *model.Job
}

// Name returns "srtf".
func (*SRTF) Name() string { return "srtf" }

// Order implements engine.QueuePolicy.
func (p *SRTF) Order(s *model.State, now model.Time, buf []*model.Job) engine.Order {
	p.keys = p.keys[:0]
	active := len(s.Running()) + len(s.Waiting())
	if p.best == nil || len(p.best) > 2*active+1024 {
		p.best = make(map[*model.Job]float64, active) // drop jobs that ended
	}
	for _, list := range [][]*model.Job{s.Running(), s.Waiting()} {
		for _, j := range list {
			v, ok := p.best[j]
			if !ok {
				v = bestSpeed(s, j)
				p.best[j] = v
			}
			p.keys = append(p.keys, srtfKey{left: remaining(j, now, v), seq: j.Seq, job: j})
		}
	}
	if p.sort == nil {
		p.sort = &radixScratch{}
	}
	p.keys = p.sort.sortSRTF(p.keys)
	for _, k := range p.keys {
		buf = append(buf, k.job)
	}
	return engine.Order{Jobs: buf, Preemptive: true}
}

// RemainingTime returns the seconds job j needs to finish at its best speed
// on its requested GPU count, +Inf when it cannot run anywhere.
func RemainingTime(s *model.State, j *model.Job, now model.Time) float64 {
	return remaining(j, now, bestSpeed(s, j))
}

func bestSpeed(s *model.State, j *model.Job) float64 {
	n := j.Spec.GPUs
	v, _ := engine.BestSpeed(s, j, n, engine.Feasible(s, j, n))
	return v
}

func remaining(j *model.Job, now model.Time, speed float64) float64 {
	if speed <= 0 {
		return math.Inf(1)
	}
	return j.Remaining(now) / speed
}
