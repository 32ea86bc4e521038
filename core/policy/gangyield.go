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

// wholeGangShare is the least share of X on a type with which a gang that
// needs every GPU of the type is taken first there when it leads the type
// (wholeGangFirst): half of the type's time.
const wholeGangShare = 0.5

// gangLead returns the highest index per GPU (allocJob.index over its GPU
// count) among the jobs with a share of X on type t (at least minShare);
// 0 where wholeGangFirst is not applied: not Gittins, no gang share, or a
// round whose X is bestFits's (no index is computed).
func (a *Alloc) gangLead(t int) float64 {
	if a.Objective != Gittins || a.GangShare <= 0 || a.fitted != nil {
		return 0
	}
	l := 0.0
	for _, st := range a.states {
		if st.x != nil && st.x[t] >= minShare {
			l = max(l, st.index/float64(max(st.gpus, 1)))
		}
	}
	return l
}

// wholeGangFirst reports whether st, with share x of X on type t, is taken
// first there though x is below the gang share: st is a gang that needs
// every GPU of t, x is at least wholeGangShare, and st leads the type — its
// index per GPU is at least that of every job with a share there (lead,
// gangLead) — and does not yield (its index at least yield, gangYield). A
// gang without an index (0: none computed for it) leads no type.
//
// Such a gang runs only on a type that every other job has left; the
// round's priorities (share over time received) rotate the type between it
// and the jobs with the rest of the type's time, and it waits for the whole
// type again after each turn. Where the program values it most per GPU on
// the type and gives it most of the type's time, it is taken first as the
// gang share takes a gang with a share of at least GangShare. On
// philly-light-s114 (docs/EXPERIMENTS.md, issue 29, fifth session) the
// 8-GPU gangs 164 and 106 finished 74,000 and 71,000 s sooner and the
// trace went from 1.024× Gavel's best to 0.990×.
func (a *Alloc) wholeGangFirst(st *allocJob, t int, x, yield, lead float64) bool {
	return a.Objective == Gittins && a.fitted == nil && x >= wholeGangShare && x < a.GangShare &&
		st.gpus > 1 && st.gpus >= a.cluster.TypeGPUs(t) && st.index > 0 && st.index >= yield && st.index/float64(st.gpus) >= lead
}
