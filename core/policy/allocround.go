package policy

import (
	"cmp"
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// account credits every tracked job, and its type, with the time it ran
// since the previous round (jobs that ended since included: their time
// still counts for their type), unless reset, which starts the credits
// again, follows and the deficit, which reads them, is not kept
// (keepsDeficit); it forgets the jobs that ended and tracks the new ones.
// Either marks X as out of date. On the way it notes the jobs that pinned
// will select at now (Alloc.pins), so that choose need not visit every
// job again.
func (a *Alloc) account(s *model.State, now model.Time, reset bool) {
	c := s.Cluster
	a.accrueOwed(s, now)
	if a.last >= 0 && !(reset && !a.keepsDeficit()) {
		for i, j := range a.tracked {
			st := a.states[i]
			limit := a.microTask(j)
			ranSince(j, a.last, now, c, func(t int, sec float64) {
				sec = min(sec, limit)
				a.credits(st)[t] += sec
				a.worker[t] += sec
			})
		}
	}
	clear(a.pins)
	a.pins = a.pins[:0]
	kept := 0 // the jobs still active are moved down in place, written only once one has ended (no write barrier for the others)
	for i, j := range a.tracked {
		st := a.states[i]
		if j.State == model.Running || j.State == model.Waiting {
			if kept != i {
				a.tracked[kept], a.states[kept] = j, st
			}
			if pinnedAt(j, now) {
				a.pins = append(a.pins, st)
			}
			kept++
			continue
		}
		if best := st.best; j.State == model.Finished && best > 0 {
			a.finished = append(a.finished, j.Work/best)
			if a.Objective == Gittins && (a.GangProbeEven > 0 || a.AdvantageEven > 0) {
				a.sizes.add(j.Work/best, st.gpus > 1)
			}
		}
		a.unask(st)
		delete(a.jobs, j)
		a.changed, a.fitted = true, nil
	}
	clear(a.tracked[kept:]) // the ended jobs' slots: not held any longer
	clear(a.states[kept:])
	a.tracked, a.states = a.tracked[:kept], a.states[:kept]
	a.pinsAt, a.pinsOK = now, !a.track(s)
	for _, st := range a.states[kept:] { // the new jobs, after the others unless track sorted them (then pinned looks again)
		if pinnedAt(st.job, now) {
			a.pins = append(a.pins, st)
		}
	}
}

// track starts tracking the running and waiting jobs of s that are not
// tracked yet. While s is trackedAll, the tracked jobs are among them, so
// there are as many new ones as they outnumber the tracked: the search
// stops when it has found them, from the ends of the queues (the waiting
// first), where arrivals are. The order it finds them in does not matter:
// the tracked jobs are sorted by Seq. It reports whether the sort moved
// any job (else the new ones follow the others).
func (a *Alloc) track(s *model.State) bool {
	n := len(s.Running()) + len(s.Waiting())
	missing := -1 // unknown
	if a.trackedAll == s {
		missing = n - len(a.tracked)
	}
	added, sorted := 0, false
	for _, list := range [][]*model.Job{s.Waiting(), s.Running()} {
		for k := len(list) - 1; k >= 0 && added != missing; k-- {
			j := list[k]
			if _, ok := a.jobs[j]; ok {
				continue
			}
			st := a.newJob(s, j)
			a.jobs[j] = st
			a.tracked, a.states = append(a.tracked, j), append(a.states, st)
			added++
		}
	}
	if added > 0 {
		a.changed, a.fitted = true, nil
		if a.speedsIn != s {
			a.speedsIn = nil // the new jobs' speeds are s's, the others' not
		}
		sorted = a.sortTracked(len(a.states) - added)
	}
	a.trackedAll = nil
	if n == len(a.tracked) {
		a.trackedAll = s
	}
	return sorted
}

// sortTracked sorts the tracked jobs, and their states alike, by Seq
// (new jobs, from old on, are appended at the end, and mostly arrived
// last: the sort is skipped when they are in order already; the jobs
// before old are). It reports whether it sorted them.
func (a *Alloc) sortTracked(old int) bool {
	bySeq := func(x, y *allocJob) int { return x.job.Seq - y.job.Seq }
	if slices.IsSortedFunc(a.states[max(old-1, 0):], bySeq) {
		return false
	}
	slices.SortFunc(a.states, bySeq)
	for i, st := range a.states {
		a.tracked[i] = st.job
	}
	return true
}

// microTask is the most time a job is credited with per round: with Gavel
// set, the length of Gavel's micro-task for a job given in steps — whole
// steps, int(steps/s × round) of them — which Gavel credits instead of the
// round's length; otherwise unlimited.
func (a *Alloc) microTask(j *model.Job) float64 {
	if !a.Gavel || j.Spec.Steps <= 0 || j.Rate <= 0 {
		return math.Inf(1)
	}
	return math.Floor(j.Rate*a.Round.Seconds()) / j.Rate
}

// newJob starts tracking j: its speeds and Gavel's initial credit of half a
// round on every type.
func (a *Alloc) newJob(s *model.State, j *model.Job) *allocJob {
	k := len(s.Cluster.Types)
	per := make([]float64, 3*k) // received, speed and deficit side by side
	st := &allocJob{job: j, received: per[:k:k], speed: per[k : 2*k : 2*k], deficit: per[2*k:],
		ftf: ftfState{prevRem: -1}}
	for t := range k {
		st.received[t] = a.credit()
	}
	st.epoch = a.epoch
	a.uniform = false // its credits are written, and may not be resetTo
	a.speeds(s, j, st)
	return st
}

// speeds sets st.gpus, j's requested GPU count or, when no type can run it
// at that count, its minimum (an elastic job that fits only smaller), and
// st.speed from the profile: j's speed on each type at st.gpus, 0 where it
// can never run; and st.best and st.bestT from them. They are computed
// once per state: what they read (the job's Spec and Model, the state's
// Profile and Cluster) does not change while the job is in s (see
// model.State), and a shell that changes them builds a new state.
func (a *Alloc) speeds(s *model.State, j *model.Job, st *allocJob) {
	if st.speedOf == s {
		return
	}
	st.speedOf = s
	st.fitX = false
	a.unask(st)
	st.gpus = j.Spec.GPUs
	if engine.FeasibleInto(s, j, st.gpus, st.speed) == 0 {
		st.gpus = j.Spec.MinGPUs
		engine.FeasibleInto(s, j, st.gpus, st.speed)
	}
	st.best = slices.Max(st.speed)
	st.bestT = a.bestType(st)
	if st.best > 0 {
		a.demand[st.bestT] += st.gpus
		if st.gpus < 0 {
			a.negative++
		}
		st.asks = true
		a.share(st)
	}
}

// unask takes st out of a.demand, where speeds counted it.
func (a *Alloc) unask(st *allocJob) {
	if !st.asks {
		return
	}
	a.unshare(st)
	a.demand[st.bestT] -= st.gpus
	if st.gpus < 0 {
		a.negative--
	}
	st.asks = false
}

// ranSince calls fn with each GPU type j ran on in (since, now] and the
// seconds it ran there: the tail of its closed periods and its current one.
func ranSince(j *model.Job, since, now model.Time, c *model.Cluster, fn func(t int, sec float64)) {
	for i := len(j.Periods) - 1; i >= 0; i-- {
		p := j.Periods[i]
		if p.End <= since {
			break
		}
		if d := p.End - max(p.Start, since); d > 0 {
			fn(p.Type, d.Seconds())
		}
	}
	if j.State != model.Running {
		return
	}
	if start := max(j.LastStart, j.ResetAt, since); now > start {
		fn(c.TypeOf(j.Alloc[0]), (now - start).Seconds())
	}
}

// reset starts a new accounting period at now, as Gavel does before it
// recomputes X (scheduler.py, _reset_time_run_so_far): each job's deficit
// grows by the time X gave it minus the time it received (where
// keepsDeficit), and every job and type starts again from the initial
// credit.
func (a *Alloc) reset(now model.Time) {
	elapsed := (now - max(a.lastReset, 0)).Seconds()
	credit := a.credit()
	clear(a.worker)
	if !a.keepsDeficit() {
		a.resetCredits(credit)
		a.lastReset = now
		return
	}
	a.uniform = false
	for _, st := range a.states {
		a.credits(st) // every reset keeps a deficit here: never out of date, kept exact if it were
		for t := range st.received {
			should := 0.0
			if st.x != nil {
				should = st.x[t] * elapsed
			}
			st.deficit[t] += should - (st.received[t] - credit)
			st.received[t] = credit
			a.worker[t] += credit
		}
	}
	a.lastReset = now
}

// resetCredits is reset without a deficit: every job starts again from
// credit on every type, and each type's time from as many credits as
// there are jobs, added one by one as reset adds them (the same sum, bit
// for bit, for every type: each job has one credit per type). The jobs'
// credits are not written: a new epoch marks every job's as credit until
// credits writes them (the jobs that run before the next reset).
func (a *Alloc) resetCredits(credit float64) {
	w := a.creditSum(len(a.states), credit)
	for t := range a.worker {
		a.worker[t] = w
	}
	a.epoch++
	a.resetTo = credit
	a.uniform = true
}

// creditSum returns n credits added one by one from 0, as the loop
// for range n { w += credit } would: sums of credit are kept from call to
// call (a.sums[i], i credits), extended as n grows, and started again
// when credit changes.
func (a *Alloc) creditSum(n int, credit float64) float64 {
	if len(a.sums) == 0 || math.Float64bits(a.sumsOf) != math.Float64bits(credit) {
		a.sums, a.sumsOf = append(a.sums[:0], 0), credit
	}
	for len(a.sums) <= n {
		a.sums = append(a.sums, a.sums[len(a.sums)-1]+credit)
	}
	return a.sums[n]
}

// credits returns st's credits per type (received), first writing them
// as the last reset left them if they are older than it (epoch).
// The caller may change them: they are no longer known to be uniform.
func (a *Alloc) credits(st *allocJob) []float64 {
	a.uniform = false
	if st.epoch != a.epoch {
		for t := range st.received {
			st.received[t] = a.resetTo
		}
		st.epoch = a.epoch
	}
	return st.received
}

// receivedOn is credits(st)[t] without writing them.
func (a *Alloc) receivedOn(st *allocJob, t int) float64 {
	if st.epoch != a.epoch {
		return a.resetTo
	}
	return st.received[t]
}

// keepsDeficit reports whether the objective reads Gavel's deficit: not
// EstSRPT and Gittins, whose pairs without a priority are ordered by
// weight instead (choose).
func (a *Alloc) keepsDeficit() bool { return a.Objective != EstSRPT && a.Objective != Gittins }

// priority is Gavel's priority of job st on type t: its share of X over
// the fraction of the type's time it received; 0 without a share.
func (a *Alloc) priority(st *allocJob, t int) float64 {
	if st.x == nil || st.x[t] == 0 || st.speed[t] <= 0 {
		return 0
	}
	received := a.receivedOn(st, t)
	if a.worker[t] == 0 || received <= 0 {
		return st.x[t] * 1e9
	}
	return st.x[t] / (received / a.worker[t])
}

// chosen reports whether st's job is chosen in choose's current round.
func (a *Alloc) chosen(st *allocJob) bool { return st.pick == a.round }

// pinned selects first, on the type they hold, the running jobs that have
// made no progress since their last start yet (still in their restart
// pause, now ≤ Job.Resume): stopping one would throw its restart away for
// nothing, and a round shorter than the restart pause would otherwise
// stop every job before it progressed, round after round, for ever. Under
// Gavel's semantics (no restart pause) no job is ever pinned.
//
// The selection is appended to sel (Order's buffer, or a.sel reused from
// choose to choose), and the types to a.types, also reused, with room for
// one per tracked job (as many as Order gives); nil without tracked jobs.
//
// When account found them at now (pinsOK), they are a.pins, and the
// tracked jobs are not visited again; the pins are read once.
func (a *Alloc) pinned(s *model.State, now model.Time, sel []*model.Job) ([]*model.Job, []engine.TypeSet) {
	var types []engine.TypeSet
	if len(a.tracked) > 0 {
		types = slices.Grow(a.types[:0], len(a.tracked))
	}
	pin := func(st *allocJob) {
		j := st.job
		t := s.Cluster.TypeOf(j.Alloc[0])
		a.remain[t] -= len(j.Alloc)
		st.pick = a.round
		sel = append(sel, j)
		types = append(types, 1<<uint(t))
	}
	if a.pinsOK && a.pinsAt == now {
		for _, st := range a.pins {
			pin(st)
		}
	} else {
		for i, j := range a.tracked {
			if pinnedAt(j, now) {
				pin(a.states[i])
			}
		}
	}
	a.pinsOK = false
	return sel, types
}

// pinnedAt reports whether j is running at now and still in its restart
// pause (pinned).
func pinnedAt(j *model.Job, now model.Time) bool {
	return j.State == model.Running && now <= j.Resume
}

// choose picks the jobs that run this round and their type (Gavel's
// _schedule_jobs_on_workers_helper): (job, type) pairs by type from the
// fastest, each type's pairs by priority, then deficit, then share,
// descending (ties in arrival order); a pair is taken when its job is not
// yet chosen, can run on the type and its GPU count fits in what is left of
// the type.
//
// A type's pairs are laid out when its turn comes (typeEntries), without
// those that cannot be taken any more (their job chosen already, or the
// type's room left too small): the order of the others is the same, and
// what is left only shrinks, so neither pass would take them.
//
// In a round where X is bestFits's and every job has the last reset's
// credits, the pairs' order is known without their keys: chooseFitted.
func (a *Alloc) choose(s *model.State, now model.Time) ([]*model.Job, []engine.TypeSet) {
	sel, types := a.chooseInto(s, now, a.sel[:0])
	a.sel = sel[:0]
	return sel, types
}

// chooseInto is choose appending the chosen jobs to sel (Order's buffer:
// no copy).
func (a *Alloc) chooseInto(s *model.State, now model.Time, sel []*model.Job) ([]*model.Job, []engine.TypeSet) {
	a.round++ // no job is chosen yet
	for t := range a.remain {
		a.remain[t] = s.Cluster.TypeGPUs(t)
	}
	sel, types := a.pinned(s, now, sel)
	if a.fittedRound(s) {
		return a.chooseFitted(sel, types)
	}
	return a.choosePairs(sel, types)
}

// choosePairs is choose by laying out and sorting each type's pairs,
// after pinned chose sel.
func (a *Alloc) choosePairs(sel []*model.Job, types []engine.TypeSet) ([]*model.Job, []engine.TypeSet) {
	a.entries = a.entries[:0]
	deferred := false
	for _, t := range a.order {
		if len(sel) == len(a.tracked) {
			break // every job chosen: no pair left to take, in either pass
		}
		if a.remain[t] <= 0 {
			continue // the type is full: none of its pairs can be taken
		}
		start := len(a.entries)
		all := a.typeEntries(t)
		for _, e := range a.entries[start:] {
			if a.remain[t] <= 0 {
				break // the type is full: no later pair fits (the deferred pass tests them again)
			}
			st := e.st
			if all && !a.fits(st, t) || !all && !a.fitsLaid(e) {
				continue
			}
			if a.Objective == FIFOAlloc && e.prio <= 0 {
				continue // Gavel's FIFO runs only jobs with a share
			}
			if a.Objective == Gittins && e.x < minShare && a.sharedFaster(st, t) {
				deferred = true
				continue
			}
			sel, types = a.take(st, t, sel, types)
		}
	}
	if deferred {
		for _, e := range a.entries {
			if st := e.st; e.x < minShare && a.fits(st, int(e.t)) {
				sel, types = a.take(st, int(e.t), sel, types)
			}
		}
	}
	return sel, types
}

// typeEntries appends type t's pairs to a.entries, sorted (sortEntries),
// leaving out those that do not fit now. Where a key is NaN, whose order
// is not a strict one, every pair is kept, as one sort of them all would
// have it: it reports whether it kept them all.
func (a *Alloc) typeEntries(t int) bool {
	start := len(a.entries)
	a.rest = a.rest[:0]
	all := false
	deficit := a.keepsDeficit()
	// With X bestFits's (fitted), no key is NaN: X is 0 or 1, every
	// weight 0, and the credits are finite sums of finite times. A job
	// chosen already is then left out without its keys: it cannot set
	// all, and does not fit.
	finite := a.fitted != nil
	yield, lead := a.gangYield(t), a.gangLead(t)
	for pass := 0; pass < 2; pass++ {
		for i, j := range a.tracked {
			st := a.states[i]
			if finite && a.chosen(st) {
				continue
			}
			x := 0.0
			if st.x != nil {
				x = st.x[t]
			}
			second := st.weight // X is new every round: the weight orders the jobs without a share
			if deficit {
				second = st.deficit[t]
			}
			e := allocEntry{prio: a.priority(st, t), deficit: second, x: x, job: j, st: st, t: int32(t), gpus: int32(st.gpus)}
			if (a.gangFirst(st, x, yield) || a.wholeGangFirst(st, t, x, yield, lead) || a.owedFirst(st, x, yield)) && e.prio > 0 {
				e.prio = math.Inf(1) // before every pair with a finite priority; among such gangs, by weight
			}
			if e.prio != e.prio || second != second || x != x {
				all = true
			}
			if !all && !a.fits(st, t) {
				continue
			}
			if e.prio > 0 {
				a.entries = append(a.entries, e)
			} else {
				a.rest = append(a.rest, e)
			}
		}
		if !all || pass == 1 {
			break
		}
		a.entries, a.rest = a.entries[:start], a.rest[:0] // a NaN: again, every pair
	}
	k := len(a.entries) - start
	a.entries = append(a.entries, a.rest...)
	a.sortEntries(a.entries[start:], k)
	return all
}

// sortEntries sorts one type's pairs by priority, then deficit (or
// weight), then share, descending, ties kept in arrival order, as one
// stable sort would. choose lays them out with the k pairs with a
// priority, which all come before the others, first, each part in arrival
// order; the parts are sorted apart, each only when it is not in order yet
// (with many jobs and few of them with a share on the type, most pairs
// have none, and the same weight, and are in order already; when every job
// has its fastest type to itself, bestFits, the pairs with a priority all
// have the same, and the gangs taken first +Inf: entrySorter sorts them
// by counting).
func (a *Alloc) sortEntries(es []allocEntry, k int) {
	a.sorter.sort(es[:k])
	a.sorter.sort(es[k:])
}

// entryOrder orders pairs by priority, then deficit (or weight), then
// share, descending.
func entryOrder(p, q allocEntry) int {
	if c := cmp.Compare(q.prio, p.prio); c != 0 {
		return c
	}
	if c := cmp.Compare(q.deficit, p.deficit); c != 0 {
		return c
	}
	return cmp.Compare(q.x, p.x)
}

// entriesSorted is slices.IsSortedFunc(es, entryOrder), with pairs of
// equal keys (the common case) told apart without entryOrder.
func entriesSorted(es []allocEntry) bool {
	for i := 1; i < len(es); i++ {
		p, q := &es[i-1], &es[i]
		if p.prio == q.prio && p.deficit == q.deficit && p.x == q.x {
			continue // equal for entryOrder too (a NaN is never ==)
		}
		if entryOrder(*q, *p) < 0 {
			return false
		}
	}
	return true
}

// fits reports whether the job of st, not yet chosen, can run on type t
// with what is left of it this round.
func (a *Alloc) fits(st *allocJob, t int) bool {
	return a.remain[t] > 0 && !a.chosen(st) && st.speed[t] > 0 && st.gpus <= a.remain[t]
}

// fitsLaid is fits for a pair that typeEntries laid out in this type's
// pass because it fitted then: its job, which has no other pair in the
// pass, is still not chosen and can still run on the type, so only the
// room left has to be tested again (from the pair, without reading the
// job's record).
func (a *Alloc) fitsLaid(e allocEntry) bool {
	return a.remain[e.t] > 0 && int(e.gpus) <= a.remain[e.t]
}

// take chooses st's job to run on type t this round.
func (a *Alloc) take(st *allocJob, t int, sel []*model.Job, types []engine.TypeSet) ([]*model.Job, []engine.TypeSet) {
	a.remain[t] -= st.gpus
	st.pick = a.round
	return append(sel, st.job), append(types, 1<<uint(t))
}

// gangFirst reports whether st, with share x of X on a type, is taken
// first on it (Alloc.GangShare): a gang share's gang (gangShare) with an
// index of at least the type's yield (gangYield).
func (a *Alloc) gangFirst(st *allocJob, x, yield float64) bool {
	return a.gangShare(st, x) && st.index >= yield
}

// gangShare reports whether st, with share x of X on a type, is a gang
// the gang share takes first there unless it yields: Gittins with a gang
// share, a multi-GPU job, a share of at least the gang share. In a round
// whose X is bestFits's the yield is 0 (gangYield), so there gangFirst is
// gangShare; the lists chooseFitted keeps across rounds (Alloc.shared) are
// sorted by it.
func (a *Alloc) gangShare(st *allocJob, x float64) bool {
	return a.Objective == Gittins && a.GangShare > 0 && st.gpus > 1 && x >= a.GangShare
}

// minShare is the least share of X that Gittins counts as one: the solver
// leaves shares of the order of 1e-10 where the optimum has none.
const minShare = 1e-6

// sharedFaster reports whether st has a share of X (at least minShare) on
// a type where it runs faster than on t. Gittins does not let such a job
// fill t, a type without a share for it, in the first pass of choose: t
// may come first in the order (the fastest-rated types first) though the
// job runs slower there, and a job filled there would stay there round
// after round, for the rest of a long life, while the type of its share
// has room (docs/EXPERIMENTS.md, issue 29). It fills t in a second pass
// if its share's type had no room left.
func (a *Alloc) sharedFaster(st *allocJob, t int) bool {
	for u, x := range st.x {
		if x >= minShare && st.speed[u] > st.speed[t] {
			return true
		}
	}
	return false
}
