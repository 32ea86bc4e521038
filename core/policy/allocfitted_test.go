package policy

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
)

// TestChooseFittedIsPairs drives gittins (no gang share, the default one,
// and one above 1, which takes no gang first) through 60 seeded worlds of
// 120 rounds (three types of 8 GPUs; jobs of 1, 2 or 4 GPUs, some with
// equal speeds on two types, some that can run nowhere) with arrivals,
// ends, starts on a random type with room, some of them still in their
// restart pause (pinned: they hold GPUs off their best type), stops, and
// new states. In every round, after the round's reset and computation as
// Order does them, choose, which takes chooseFitted in a fittedRound, must
// choose the same jobs on the same types in the same order as
// choosePairs, which lays out and sorts the pairs, and the jobs with a
// share per type that Alloc keeps from round to round (shared) must be
// those rebuilt afresh (checkShared). Rounds that take the
// fitted path must occur, with pinned jobs, with a job taken off its best
// type, with a gang taken first, and with two jobs of the same Seq (one
// arrival in eight takes a live job's and waits for ever: model.State
// allows that); so must rounds without it. In every
// round where X is bestFits's, each job's row must be bestFits's
// (checkFittedX), though bestFits writes only the rows not already so.
func TestChooseFittedIsPairs(t *testing.T) {
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	ns := []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}, {Name: "c", Type: 2, GPUs: 8}}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	var n fittedCounts
	for world := range 60 {
		r := rand.New(rand.NewPCG(29, uint64(700+world)))
		a := &Alloc{Objective: Gittins, Round: 360 * model.Second, GangShare: []float64{0, DefaultGangShare, 1.5}[world%3]}
		w := &fittedWorld{r: r, c: c, prof: speedTable{}, dup: map[*model.Job]bool{}}
		w.s = model.NewState(c, w.prof)
		for round := range 120 {
			now := model.Time(round) * a.Round
			w.step(t, now)
			a.forCluster(w.s.Cluster)
			a.account(w.s, now, true)
			a.reset(now)
			a.compute(w.s, now)
			checkPins(t, a, now, fmt.Sprintf("world %d round %d", world, round))
			fast := a.fittedRound(w.s)
			if a.fitted != nil {
				checkFittedX(t, a, world, round)
			}
			gotSel, gotTypes := a.choose(w.s, now)
			gotSel, gotTypes = slices.Clone(gotSel), slices.Clone(gotTypes)
			a.clearPicked()
			for k := range a.remain {
				a.remain[k] = w.s.Cluster.TypeGPUs(k)
			}
			wantSel, wantTypes := a.pinned(w.s, now, a.sel[:0])
			if fast && a.allFit() {
				n.allFit++
			}
			wantSel, wantTypes = a.choosePairs(wantSel, wantTypes)
			if !slices.Equal(gotSel, wantSel) || !slices.Equal(gotTypes, wantTypes) {
				t.Fatalf("world %d round %d (fitted %v): choose took %v on %v, choosePairs %v on %v", world, round, fast, ids(gotSel), gotTypes, ids(wantSel), wantTypes)
			}
			n.count(a, w.s, now, fast, gotSel, gotTypes)
			checkShared(t, a, fmt.Sprintf("world %d round %d", world, round))
			a.clearPicked()
			a.last = now
		}
	}
	t.Logf("%+v", n)
	if n.fast < 300 || n.slow < 300 || n.pinned < 100 || n.offBest < 50 || n.gangFirst < 50 || n.dup < 50 || n.allFit < 100 || n.fast-n.allFit < 100 {
		t.Fatalf("rounds: %d fitted, %d not, %d fitted with pinned jobs, %d fitted with a job off its best type, %d fitted with a gang taken first, %d fitted with two jobs of one Seq, %d fitted with room for all (allFit); want many of each, and many fitted without room for all", n.fast, n.slow, n.pinned, n.offBest, n.gangFirst, n.dup, n.allFit)
	}
}

// checkFittedX requires every tracked job's row of X and weight to be
// bestFits's, written afresh: 1 on its best type where it can run, 0
// elsewhere (+0), weight 0 (bestFits skips the rows it wrote before,
// allocJob.fitX).
func checkFittedX(t *testing.T, a *Alloc, world, round int) {
	t.Helper()
	for _, st := range a.states {
		for k, x := range st.x {
			want := 0.0
			if st.best > 0 && k == st.bestT {
				want = 1
			}
			if math.Float64bits(x) != math.Float64bits(want) || st.weight != 0 || len(st.x) != len(a.order) {
				t.Fatalf("world %d round %d: job %s: x %v weight %v, bestFits's x[%d] %v weight 0", world, round, st.job.Spec.ID, st.x, st.weight, k, want)
			}
		}
	}
}

// checkShared requires Alloc.shared, kept as jobs come, go and change
// speeds, to be what it is rebuilt from the tracked jobs: per type, the
// jobs asking for it, by Seq, the gangs of the gang share apart.
func checkShared(t *testing.T, a *Alloc, where string) {
	t.Helper()
	want := make([][2][]*allocJob, len(a.order))
	for _, st := range a.states {
		if st.asks {
			k := 1
			if a.gangShare(st, 1) {
				k = 0
			}
			want[st.bestT][k] = append(want[st.bestT][k], st)
		}
	}
	for k := range want {
		for g := range 2 {
			got, w := a.shared[k][g], want[k][g]
			if dupSeq(w) {
				if !a.sharedDup {
					t.Fatalf("%s: type %d list %d: two jobs of the same Seq, not marked", where, k, g)
				}
				got, w = bySeqID(got), bySeqID(w) // kept in tracked's order only as rebuilt
			}
			if !slices.Equal(got, w) {
				t.Fatalf("%s: type %d list %d: kept %v, rebuilt %v", where, k, g, stIDs(got), stIDs(w))
			}
		}
	}
}

// dupSeq reports whether two of sts, by Seq, have the same Seq.
func dupSeq(sts []*allocJob) bool {
	for i := 1; i < len(sts); i++ {
		if sts[i].job.Seq == sts[i-1].job.Seq {
			return true
		}
	}
	return false
}

// bySeqID returns sts sorted by Seq, then ID.
func bySeqID(sts []*allocJob) []*allocJob {
	out := slices.Clone(sts)
	slices.SortFunc(out, func(x, y *allocJob) int {
		if x.job.Seq != y.job.Seq {
			return x.job.Seq - y.job.Seq
		}
		return strings.Compare(x.job.Spec.ID, y.job.Spec.ID)
	})
	return out
}

func stIDs(sts []*allocJob) []string {
	out := make([]string, len(sts))
	for i, st := range sts {
		out[i] = st.job.Spec.ID
	}
	return out
}

// checkPins checks that the pins account noted, where pinned will read
// them, are the tracked jobs that pinned's pass over them all selects, in
// its order.
func checkPins(t *testing.T, a *Alloc, now model.Time, where string) {
	t.Helper()
	if !a.pinsOK || a.pinsAt != now {
		return
	}
	var want []*allocJob
	for i, j := range a.tracked {
		if j.State == model.Running && now <= j.Resume {
			want = append(want, a.states[i])
		}
	}
	if !slices.Equal(a.pins, want) {
		t.Fatalf("%s: account pinned %v, the tracked jobs %v", where, stIDs(a.pins), stIDs(want))
	}
}

// clearPicked forgets choose's selection, as Order does after copying it,
// and starts a new round (Alloc.round), as choose does, for a call of
// pinned and choosePairs without choose.
func (a *Alloc) clearPicked() {
	a.round++
	a.sel = a.sel[:0]
}

// fittedCounts counts the kinds of rounds TestChooseFittedIsPairs saw.
type fittedCounts struct{ fast, slow, pinned, offBest, gangFirst, dup, allFit int }

func (n *fittedCounts) count(a *Alloc, s *model.State, now model.Time, fast bool, sel []*model.Job, types []engine.TypeSet) {
	if !fast {
		n.slow++
		return
	}
	n.fast++
	for i := 1; i < len(a.tracked); i++ {
		if a.tracked[i].Seq == a.tracked[i-1].Seq {
			n.dup++
			break
		}
	}
	pinned, off, gang := false, false, false
	for i, j := range sel {
		st := a.jobs[j]
		t := bits.TrailingZeros64(uint64(types[i]))
		if j.State == model.Running && now <= j.Resume {
			pinned = true
			continue
		}
		off = off || t != st.bestT
		gang = gang || a.gangShare(st, 1)
	}
	n.pinned += b2i(pinned)
	n.offBest += b2i(off)
	n.gangFirst += b2i(gang)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fittedWorld is TestChooseFittedIsPairs's world: its jobs change between
// rounds as a simulator's would, at random.
type fittedWorld struct {
	r    *rand.Rand
	c    *model.Cluster
	s    *model.State
	prof speedTable
	live []*model.Job
	seq  int
	dup  map[*model.Job]bool // the jobs that took another's Seq: never started
}

// step changes the world before the round at now: arrivals, ends,
// stops, starts (half of them still in their restart pause at now), and
// now and then a new state with the same jobs.
func (w *fittedWorld) step(t *testing.T, now model.Time) {
	r := w.r
	for range r.IntN(3) {
		id := fmt.Sprint("j", w.seq)
		w.prof[id] = w.speeds()
		g := []int{1, 1, 2, 4}[r.IntN(4)]
		spec := model.JobSpec{ID: id, GPUs: g, MinGPUs: g, MaxGPUs: g}
		seq, dup := w.seq, len(w.live) > 0 && r.IntN(8) == 0
		if dup {
			// Another job's Seq: model.State tells two waiting jobs apart by
			// (Submit, Seq), two running ones by Seq alone, so this one
			// waits, with its own submit time.
			seq, spec.Submit = w.live[r.IntN(len(w.live))].Seq, model.Time(1+w.seq)
		}
		j := model.NewJob(spec, seq, -1, 1e6)
		if dup {
			w.dup[j] = true
		}
		w.seq++
		w.s.Submit(j)
		w.live = append(w.live, j)
	}
	for range r.IntN(3) {
		if len(w.live) == 0 {
			break
		}
		i := r.IntN(len(w.live))
		if err := w.s.End(w.live[i], model.Finished); err != nil {
			t.Fatal(err)
		}
		w.live = slices.Delete(w.live, i, i+1)
	}
	for _, j := range slices.Clone(w.s.Running()) {
		if r.IntN(3) == 0 {
			if err := w.s.Stop(j); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, j := range slices.Clone(w.s.Waiting()) {
		if r.IntN(2) == 0 {
			w.start(t, j, now)
		}
	}
	if r.IntN(6) == 0 {
		w.renew(t)
	}
}

// speeds draws a job's speeds: some types unusable, now and then two
// types equally fast, now and then none usable.
func (w *fittedWorld) speeds() []float64 {
	r := w.r
	sp := make([]float64, 3)
	for k := range sp {
		if r.IntN(4) > 0 {
			sp[k] = 0.05 + r.Float64()
		}
	}
	if r.IntN(4) == 0 {
		sp[r.IntN(3)] = slices.Max(sp)
	}
	if r.IntN(20) == 0 {
		clear(sp)
	}
	return sp
}

// start starts waiting job j on a random type where it can run and has
// room, if any, with its restart pause over at now or not.
func (w *fittedWorld) start(t *testing.T, j *model.Job, now model.Time) {
	if w.dup[j] {
		return
	}
	var can []int
	for k, v := range w.prof[j.Spec.ID] {
		if v > 0 {
			can = append(can, k)
		}
	}
	if len(can) == 0 {
		return
	}
	k := can[w.r.IntN(len(can))]
	free := w.s.FreeMask(k) // node k is type k's only node
	if bits.OnesCount64(free) < j.Spec.GPUs {
		return
	}
	var alloc []model.GPU
	for i := 0; len(alloc) < j.Spec.GPUs; i++ {
		if free&(1<<uint(i)) != 0 {
			alloc = append(alloc, model.GPU{Node: int32(k), Index: int32(i)})
		}
	}
	if err := w.s.Start(j, alloc); err != nil {
		t.Fatal(err)
	}
	j.LastStart = now
	j.Resume = now - 1
	if w.r.IntN(2) == 0 {
		j.Resume = now + 30*model.Second // pinned at now
	}
}

// renew moves the jobs into a new state, with their allocations, half
// the time with new speeds for a third of them.
func (w *fittedWorld) renew(t *testing.T) {
	if w.r.IntN(2) == 0 {
		next := speedTable{}
		for id, sp := range w.prof {
			next[id] = sp
		}
		for _, j := range w.live {
			if w.r.IntN(3) == 0 {
				next[j.Spec.ID] = w.speeds()
			}
		}
		w.prof = next
	}
	s := model.NewState(w.c, w.prof)
	for _, j := range w.live {
		alloc, running := j.Alloc, j.State == model.Running
		s.Submit(j)
		if running {
			if err := s.Restore(j, alloc); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.s = s
}
