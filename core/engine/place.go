package engine

import "github.com/gpusched/gpusched/core/model"

// placeWith asks the placer to place j on n GPUs of a type in fit and
// keeps the answer only when j and every job it moves fit what the nodes
// have free of every resource. Where j asks for resources besides GPUs, a
// shape known to be short is refused at once (knownShort); otherwise the
// placer first sees the pool as it is, refined by hiding the nodes its
// answers overfill (refine), and then, if that gives up, the pool with
// every free GPU that j cannot use hidden (focus). When other resources
// were what j lacked, e.short names the one that hid the most GPUs.
func (e *Engine) placeWith(s *model.State, j *model.Job, n int, fit TypeSet) Placement {
	p := e.pool
	req := p.request(j)
	if req == nil {
		return e.placer.Place(s, p, j, n, fit)
	}
	if p.knownShort(j, req, n, fit) {
		return e.shortOf(n, fit)
	}
	if pl, ok := e.refine(s, j, req, n, fit); ok {
		return pl
	}
	hid, hopeless := p.focus(j, n, fit)
	if hopeless {
		return e.shortOf(n, fit)
	}
	pl := e.quietPlace(s, j, n, fit)
	failed := pl.GPUs == nil && pl.Pause == ""
	if hid {
		if failed {
			e.short = p.scarce()
		}
		p.unfocus()
	}
	if failed && e.short == "" {
		e.short = p.starvedShort(n, fit)
	}
	if pl.GPUs != nil && !p.FitsPlacement(j, pl) {
		return Placement{}
	}
	return pl
}

// refine asks the placer to place j on the pool as it is and, while its
// answer takes more GPUs of some node than the node has room for, hides
// that node's excess and asks again, up to refineTries times. A placer's
// first choices are usually a few nodes away from one that fits, where
// focus checks every node with free GPUs. ok is false when it gives up
// (the caller focuses); the pool is left as it was. A placer that finds
// nothing on this view, which holds every GPU j could use, finds nothing
// with focus either.
func (e *Engine) refine(s *model.State, j *model.Job, req model.Vec, n int, fit TypeSet) (Placement, bool) {
	p := e.pool
	if r := &p.vec.refine; r.credit <= 0 {
		if r.skipped++; r.skipped%refineProbe != 0 {
			return Placement{}, false
		}
	}
	p.settle() // the placer sees the pool as it is
	clear(p.vec.why)
	defer p.unfocus()
	for range refineTries {
		pl := e.quietPlace(s, j, n, fit)
		switch {
		case pl.GPUs == nil:
			if pl.Pause == "" {
				e.shortOf(n, fit)
			}
			return pl, true
		case p.FitsPlacement(j, pl):
			p.vec.refine.credit = min(p.vec.refine.credit+1, refineCredit)
			return pl, true
		case !p.hideExcess(j, req, pl.GPUs):
			return Placement{}, false // a job it moves does not fit
		}
	}
	p.vec.refine.credit = max(p.vec.refine.credit-2, -refineCredit)
	return Placement{}, false
}

// refineTries bounds refine's placer calls. Refining costs more than
// focusing where most nodes lack room or the placer is dear (fit scores
// many nodes a call): a placement that needed more tries takes 2 from a
// credit that each refined placement adds 1 to (at most refineCredit);
// without credit, refine tries only every refineProbe-th placement. The
// credit depends only on the round's history, so rounds stay
// deterministic.
const (
	refineTries  = 4
	refineCredit = 8
	refineProbe  = 16
)

// shortReason is reasonShort(resource), built once per resource.
func (e *Engine) shortReason(resource string) string {
	r, ok := e.shortReasons[resource]
	if !ok {
		if e.shortReasons == nil {
			e.shortReasons = map[string]string{}
		}
		r = reasonShort(resource)
		e.shortReasons[resource] = r
	}
	return r
}

// shortOf sets e.short for a job found short of usable GPUs: the resource
// that hid the most of them from it, or else the one that starves the most
// nodes, and returns no placement.
func (e *Engine) shortOf(n int, fit TypeSet) Placement {
	if e.short = e.pool.scarce(); e.short == "" {
		e.short = e.pool.starvedShort(n, fit)
	}
	return Placement{}
}

// quietPlace is the placer's answer, its own takes and gives of GPUs not
// counted as freeing any.
func (e *Engine) quietPlace(s *model.State, j *model.Job, n int, fit TypeSet) Placement {
	e.pool.vec.quiet = true
	defer func() { e.pool.vec.quiet = false }()
	return e.placer.Place(s, e.pool, j, n, fit)
}
