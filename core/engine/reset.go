package engine

import "github.com/gpusched/gpusched/core/model"

// A round changes the free GPUs of few nodes: the jobs that started,
// ended or moved since the last round, and the pool's own tentative takes
// and gives of that round. Reloading every node at every reset was a sixth
// of a long replay, so the pool keeps its index between resets and, for
// the state it last reset from, reloads only the nodes that the state's
// change log (model.State.ChangedSince) or the pool itself (touched) has
// changed since. Any other state, a log that has forgotten the mark, a
// cluster that models other resources (whose floor, starved and rich
// nodes follow every job of the round), or more than half the nodes
// changed reloads every node.

// resetChanged reloads from s only the nodes changed since the last
// reset, and reports whether it could.
func (p *Pool) resetChanged(s *model.State) bool {
	if p.state != s || s.Cluster != p.c || p.tight != nil {
		return false
	}
	changed, ok := s.ChangedSince(p.mark)
	if !ok {
		return false
	}
	for _, n := range changed {
		p.touch(int(n))
	}
	if 2*len(p.touched) > len(p.c.Nodes) {
		return false // reloading every node costs no more
	}
	p.mark = s.Mark()
	for _, n := range p.touched {
		p.set(int(n), s.FreeMask(int(n)))
	}
	p.untouch()
	return true
}

// touch records that node n's free GPUs changed since the last reset.
func (p *Pool) touch(n int) {
	if !p.isTouched[n] {
		p.isTouched[n] = true
		p.touched = append(p.touched, int32(n))
	}
}

// untouch forgets the touched nodes.
func (p *Pool) untouch() {
	for _, n := range p.touched {
		p.isTouched[n] = false
	}
	p.touched = p.touched[:0]
}
