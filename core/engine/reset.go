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
	if p.reloadAll || p.state != s || s.Cluster != p.c {
		return false
	}
	changed, ok := s.ChangedSince(p.mark)
	if !ok {
		return false
	}
	for _, n := range changed {
		p.touch(int(n))
	}
	if p.reloadAll {
		return false
	}
	p.mark = s.Mark()
	for _, n := range p.touched {
		p.set(int(n), s.FreeMask(int(n)))
	}
	p.untouch()
	return true
}

// touch records that node n's free GPUs changed since the last reset.
// Once more than half the nodes have, the next reset reloads every node
// (it costs no more) and touch stops counting; a pool whose cluster
// models other resources always reloads every node.
func (p *Pool) touch(n int) {
	if p.reloadAll || p.isTouched[n] {
		return
	}
	p.isTouched[n] = true
	p.touched = append(p.touched, int32(n))
	p.reloadAll = 2*len(p.touched) > len(p.isTouched)
}

// untouch forgets the touched nodes, before a reset that reloads them.
func (p *Pool) untouch() {
	for _, n := range p.touched {
		p.isTouched[n] = false
	}
	p.touched = p.touched[:0]
	p.reloadAll = p.tight != nil
}
