package policy

import "github.com/gpusched/gpusched/core/model"

// gangOwedBacklog is the least priority backlog power β (at the last
// computation of X) at which Gittins takes owed gangs first
// (Alloc.GangOwed): only under a deep backlog.
const gangOwedBacklog = 0.7

// accrueOwed adds to every tracked job's owed time the share of X it had
// since the previous round (its row's sum, shares below minShare and
// bestFits's rows not counted) times the time since, less the time it ran,
// kept between 0 and above; a gang owed at least Alloc.GangOwed becomes
// owing (allocJob.owing) until its owed time is back to 0. Nothing without
// GangOwed, before the first round, or for another objective than Gittins.
func (a *Alloc) accrueOwed(s *model.State, now model.Time) {
	if a.GangOwed <= 0 || a.Objective != Gittins || a.last < 0 || now <= a.last {
		return
	}
	dt := (now - a.last).Seconds()
	for i, j := range a.tracked {
		st := a.states[i]
		share := 0.0
		if st.x != nil && !st.fitX {
			for _, x := range st.x {
				if x >= minShare {
					share += x
				}
			}
		}
		ran := 0.0
		ranSince(j, a.last, now, s.Cluster, func(_ int, sec float64) { ran += sec })
		st.owed = max(st.owed+share*dt-ran, 0)
		switch {
		case st.owed >= a.GangOwed.Seconds():
			st.owing = true
		case st.owed <= 0:
			st.owing = false
		}
	}
}

// owedFirst reports whether st, with share x of X on a type, is taken first
// there because the rounds have not given it the time its shares promised
// (Alloc.GangOwed): a multi-GPU job that is owing, with a share of the type,
// an index of at least the type's yield (gangYield), under a backlog power
// of at least gangOwedBacklog, in a round whose X is the program's.
func (a *Alloc) owedFirst(st *allocJob, x, yield float64) bool {
	return a.GangOwed > 0 && a.Objective == Gittins && a.fitted == nil && a.beta >= gangOwedBacklog &&
		st.owing && st.gpus > 1 && x >= minShare && st.index >= yield
}
