package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// refChoose is choose as its doc states it, from scratch: per type from
// the fastest, every tracked job's pair, one stable sort, a pair taken
// when its job is not chosen yet and fits (the full test, at every pair);
// Gittins defers a pair without a share while its job has a share on a
// faster type, and takes the deferred pairs that fit after every type's
// pass. It reads a's X, weights and credits (written out first, the same
// values), and changes nothing else. The state must have no running job
// (no job is pinned).
func refChoose(a *Alloc, s *model.State) ([]*model.Job, []engine.TypeSet) {
	remain := make([]int, len(s.Cluster.Types))
	for t := range remain {
		remain[t] = s.Cluster.TypeGPUs(t)
	}
	picked := map[*allocJob]bool{}
	fits := func(st *allocJob, t int) bool {
		return remain[t] > 0 && !picked[st] && st.speed[t] > 0 && st.gpus <= remain[t]
	}
	var sel []*model.Job
	var types []engine.TypeSet
	take := func(e allocEntry) {
		remain[e.t] -= e.st.gpus
		picked[e.st] = true
		sel, types = append(sel, e.job), append(types, 1<<uint(e.t))
	}
	var all []allocEntry
	deferred := false
	for _, st := range a.states {
		a.credits(st) // every job's credits written out (the values do not change)
	}
	for _, t := range a.order {
		var es []allocEntry
		yield := a.gangYield(t)
		for i, j := range a.tracked {
			st := a.states[i]
			x := 0.0
			if st.x != nil {
				x = st.x[t]
			}
			second := st.deficit[t]
			if !a.keepsDeficit() {
				second = st.weight
			}
			prio := a.priority(st, t)
			if a.gangFirst(st, x, yield) && prio > 0 {
				prio = math.Inf(1)
			}
			es = append(es, allocEntry{prio: prio, deficit: second, x: x, job: j, st: st, t: int32(t)})
		}
		slices.SortStableFunc(es, entryOrder)
		for _, e := range es {
			if !fits(e.st, t) {
				continue
			}
			if a.Objective == Gittins && e.x < minShare && a.sharedFaster(e.st, t) {
				deferred = true
				continue
			}
			take(e)
		}
		all = append(all, es...)
	}
	if deferred {
		for _, e := range all {
			if e.x < minShare && fits(e.st, int(e.t)) {
				take(e)
			}
		}
	}
	return sel, types
}

// TestChooseIsReference compares Alloc.choose, which lays out a type's
// pairs only when its turn comes, without those that cannot be taken,
// re-tests only the room for a pair it laid out, stops a type's pass when
// the type is full, and skips chosen jobs' keys when X is bestFits's, with
// refChoose on random instances (three types of 8 GPUs, up to eight
// waiting jobs), under Gittins with and without the gang share and
// EstSRPT, after the first round's computation and after rounds with
// uneven credits, some after a further reset that leaves some jobs'
// credits unwritten (resetCredits's epoch). Both X by bestFits and by the
// program must occur, and jobs with unwritten credits.
func TestChooseIsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 4))
	fitted, solved, stale := 0, 0, 0
	for trial := range 600 {
		s, _ := randomInstance(t, r)
		a := &Alloc{Objective: Gittins, Round: 360 * model.Second}
		switch trial % 3 {
		case 1:
			a.GangShare = DefaultGangShare
		case 2:
			a.Objective = EstSRPT
		}
		a.forCluster(s.Cluster)
		a.account(s, 0, false)
		a.reset(0)
		a.compute(s, 0)
		if a.fitted != nil {
			fitted++
		} else {
			solved++
		}
		for round := range 4 {
			if round > 0 {
				stale += unevenCredits(a, r)
			}
			gotSel, gotTypes := a.choose(s, 0) // first: the reference writes every job's credits out
			gotSel, gotTypes = slices.Clone(gotSel), slices.Clone(gotTypes)
			wantSel, wantTypes := refChoose(a, s)
			if !slices.Equal(gotSel, wantSel) || !slices.Equal(gotTypes, wantTypes) {
				t.Fatalf("trial %d round %d: choose took %v on %v, the reference %v on %v", trial, round, ids(gotSel), gotTypes, ids(wantSel), wantTypes)
			}
			a.sel = a.sel[:0] // the next choose forgets the selection (Alloc.round)
		}
	}
	if stale < 100 {
		t.Fatalf("%d jobs chosen among with credits older than a reset; want many", stale)
	}
	if fitted < 100 || solved < 100 {
		t.Fatalf("instances: %d with X by bestFits, %d by the program; want many of both", fitted, solved)
	}
}

// unevenCredits is a round without a reset as account leaves it (uneven
// credits for some of the jobs), after, one time in three, a reset of the
// credits: it returns how many jobs were left with credits older than the
// last reset.
func unevenCredits(a *Alloc, r *rand.Rand) int {
	if r.IntN(3) == 0 {
		a.reset(0)
	}
	stale := 0
	for _, st := range a.states {
		if r.IntN(3) == 0 {
			if st.epoch != a.epoch {
				stale++
			}
			continue
		}
		for k := range a.credits(st) {
			sec := float64(r.IntN(720))
			st.received[k] += sec
			a.worker[k] += sec
		}
	}
	return stale
}

func ids(js []*model.Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.Spec.ID
	}
	return out
}

// TestResetCreditsIsTheLoop compares reset without a deficit, which sums
// the credits once for every type, from sums kept from reset to reset
// (creditSum), with the loop that adds each job's credit to each type's
// time, bit for bit, on credits that round. One policy resets 200 times,
// with one of three round lengths (the sums started again at each change)
// and up to 300 jobs (the sums extended, or read where they reach).
func TestResetCreditsIsTheLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 5))
	var rounds [3]model.Time
	for i := range rounds {
		rounds[i] = model.Time(1 + r.Int64N(int64(3600*model.Second)))
	}
	a := &Alloc{Objective: Gittins}
	for trial := range 200 {
		a.Round = rounds[r.IntN(3)]
		if trial%2 == 1 {
			a.Round = rounds[0]
		}
		k := 1 + r.IntN(4)
		a.worker = make([]float64, k)
		a.states = nil
		for range r.IntN(300) {
			st := &allocJob{received: make([]float64, k)}
			for t := range st.received {
				st.received[t] = r.Float64() * 1e4
			}
			a.states = append(a.states, st)
		}
		credit := a.credit()
		want := make([]float64, k)
		for range a.states {
			for t := range want {
				want[t] += credit
			}
		}
		a.reset(model.Time(r.Int64N(int64(1e6 * model.Second))))
		for tt := range k {
			if math.Float64bits(a.worker[tt]) != math.Float64bits(want[tt]) {
				t.Fatalf("trial %d type %d: worker %v, the loop %v", trial, tt, a.worker[tt], want[tt])
			}
		}
		for _, st := range a.states {
			for _, v := range a.credits(st) {
				if v != credit {
					t.Fatalf("trial %d: a job's credit %v after reset, want %v", trial, v, credit)
				}
			}
		}
	}
}
