package engine

import "github.com/gpusched/gpusched/core/model"

// Gate is implemented by a queue policy that bounds what each job may take
// in a round: the queue layer (package quota), which gives every team's
// queue a guaranteed quota and an optional limit per GPU type. The engine
// asks it before every placement, claim and elastic growth, tells it what
// the round gives out, and hands it the finished plan. Its Order call
// begins the round (it resets what the round has given out).
type Gate interface {
	// Limit returns the types of ts on which job j could ever hold n GPUs
	// (its queue's limit, whatever the queue uses now). When it returns
	// none, the engine rejects the job with the reason given.
	Limit(j *model.Job, n int, ts TypeSet) (TypeSet, string)
	// Admit returns the types of ts on which job j may take n more GPUs
	// now, given what its queue holds and what the round has given it so
	// far (Took): within its queue's limit; with claim, within its queue's
	// guaranteed quota, as a job must be to take the GPUs of stop
	// candidates (reclaim).
	Admit(j *model.Job, n int, ts TypeSet, claim bool) TypeSet
	// Class returns what decides which stop candidates job j may take:
	// two jobs of one class may take the same candidates (MayTake).
	Class(j *model.Job) Class
	// MayTake reports whether a job of class c may take the GPUs of stop
	// candidate v (the queue layer: a job within its guaranteed quota may
	// reclaim those of queues beyond theirs; any job may take those of
	// candidates of its own queue when the inner policy lets it claim).
	MayTake(c Class, v *model.Job) bool
	// Took records that job j took n more GPUs of type t in this round (n
	// negative: it gave them back).
	Took(j *model.Job, t, n int)
	// Done ends the round with its plan, before the shell applies it. It
	// may rewrite the reasons of the plan's trace.
	Done(s *model.State, plan *Plan, now model.Time)
}

// gate returns the policy's Gate, or nil.
func (e *Engine) gate() Gate {
	g, _ := e.policy.(Gate)
	return g
}

// admit narrows fit to the types on which j may take n GPUs now (Gate.Admit;
// claim while the engine places j on the GPUs of stop candidates).
func (e *Engine) admit(j *model.Job, n int, fit TypeSet) TypeSet {
	if e.gates == nil || fit == 0 {
		return fit
	}
	return e.gates.Admit(j, n, fit, e.claiming)
}

// took tells the gate that j took n GPUs of the type of gpus[0] (n < 0:
// gave them back).
func (e *Engine) took(j *model.Job, gpus []model.GPU, n int) {
	if e.gates != nil && len(gpus) > 0 {
		e.gates.Took(j, e.cluster.TypeOf(gpus[0]), n)
	}
}

// laneBlocked reports whether job i of ord is behind a blocked job of its
// lane in a strict order (Order.Lanes).
func (e *Engine) laneBlocked(ord Order, i int) bool {
	if ord.Lanes == nil {
		return false
	}
	l := int(ord.Lanes[i])
	return l < len(e.blockedLanes) && e.blockedLanes[l]
}

// blockLane marks the lane of job i of ord as blocked; it reports false
// when the order has no lanes (the whole order is blocked).
func (e *Engine) blockLane(ord Order, i int) bool {
	if ord.Lanes == nil {
		return false
	}
	l := int(ord.Lanes[i])
	for len(e.blockedLanes) <= l {
		e.blockedLanes = append(e.blockedLanes, false)
	}
	e.blockedLanes[l] = true
	return true
}

// Class is a Gate's key for the stop candidates a job may take (Gate.Class,
// Gate.MayTake): a type set and a number, whose meaning the gate chooses.
type Class struct {
	Types TypeSet
	N     int
}
