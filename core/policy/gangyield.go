package policy

// gangYield returns the least index (allocJob.index) that a gang must
// have to be taken first on type t (gangFirst): the highest index among
// the jobs still in their gang probe (allocJob.probing) with a share of X
// on t (at least minShare); 0 where none has, and in a round whose X is
// bestFits's (every job has its fastest type; no index is computed).
//
// The gang share realises a gang's fractional share whole, and so keeps
// off the type, for as long as the gang runs, the jobs the program gave
// the rest of it. A job still in its probe has not yet had its chance to
// show that it is short: it is not kept off for a gang of a lower index
// (the weight before the priority backlog flattens it). Without it, on a
// lightly loaded Philly-shaped trace (the backlog's β near 0, every
// weight flat) a 1-GPU job of 130 s waited 94,000 s twice, behind 8-GPU
// gangs that each kept a whole type (docs/EXPERIMENTS.md, issue 29,
// fourth session).
func (a *Alloc) gangYield(t int) float64 {
	if a.Objective != Gittins || a.GangShare <= 0 || a.fitted != nil {
		return 0
	}
	y := 0.0
	for _, st := range a.states {
		if st.probing && st.x != nil && st.x[t] >= minShare {
			y = max(y, st.index)
		}
	}
	return y
}
