package quota

import (
	"fmt"

	"github.com/gpusched/gpusched/core/model"
)

// A queue's resource limits cap what its running jobs ask of the
// resources besides GPUs (Queue.ResourceLimit). A job's charge is its
// request per replica times its GPUs over its replica's GPUs — exact for
// whole replicas, and additive as the engine reports GPUs taken and given
// (Took) without their nodes.

// setResourceLimits resolves the queues' resource limits by the cluster's
// resource index.
func (p *Policy) setResourceLimits(c *model.Cluster) {
	names := c.Resources()
	p.resLimit, p.res, p.anyRes = make([][]int64, len(p.queues)), make([][]float64, len(p.queues)), false
	for qi, q := range p.queues {
		p.resLimit[qi], p.res[qi] = make([]int64, len(names)), make([]float64, len(names))
		for r, name := range names {
			p.resLimit[qi][r] = -1
			if l, ok := q.ResourceLimit[name]; ok {
				p.resLimit[qi][r], p.anyRes = l, true
			}
		}
	}
}

// resourceBaseline sets what every queue's running jobs ask now.
func (p *Policy) resourceBaseline(s *model.State) {
	p.state = s
	if !p.anyRes {
		return
	}
	for q := range p.res {
		clear(p.res[q])
	}
	for _, j := range s.Running() {
		p.tookResources(j, p.queueOf(j), len(j.Alloc))
	}
}

// charge returns what n GPUs of j ask of resource r: its request per
// replica times n over its replica's GPUs.
func charge(req model.Vec, r int, j *model.Job, n int) float64 {
	return float64(req[r]) * float64(n) / float64(j.Spec.Replica())
}

// tookResources adds to queue q what n more GPUs of j ask (n < 0: gives
// it back).
func (p *Policy) tookResources(j *model.Job, q, n int) {
	if !p.anyRes || p.state == nil {
		return
	}
	req := p.state.Request(j)
	for r := range req {
		p.res[q][r] += charge(req, r, j, n)
	}
}

// resourceRoom reports whether queue q's resource limits leave room for n
// more GPUs of j.
func (p *Policy) resourceRoom(j *model.Job, q, n int) bool {
	if !p.anyRes || p.state == nil {
		return true
	}
	req := p.state.Request(j)
	for r, l := range p.resLimit[q] {
		if l >= 0 && req != nil && p.res[q][r]+charge(req, r, j, n) > float64(l)+0.5 {
			return false
		}
	}
	return true
}

// resourceNever returns why j's queue q could never hold n GPUs of j
// within its resource limits, or "".
func (p *Policy) resourceNever(j *model.Job, q, n int) string {
	if !p.anyRes || p.state == nil {
		return ""
	}
	req := p.state.Request(j)
	for r, l := range p.resLimit[q] {
		if l < 0 || req == nil {
			continue
		}
		if need := charge(req, r, j, n); need > float64(l)+0.5 {
			name := p.cluster.Resources()[r]
			return fmt.Sprintf("its queue %s's %s limit of %s is below the %s its minimum of %d GPUs asks", p.queues[q].Name,
				name, model.FormatAmount(name, l), model.FormatAmount(name, int64(need+0.5)), n)
		}
	}
	return ""
}
