package policy

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/lp"
	"github.com/gpusched/gpusched/core/model"
)

// Objective names the program an allocation policy solves for its matrix X.
type Objective uint8

// Objectives of the allocation policies.
const (
	// MaxMin is heterogeneity-aware max-min fairness (Gavel's
	// max_min_fairness_perf, "LAS" made heterogeneity-aware): the largest
	// level that every job's normalised effective throughput reaches.
	MaxMin Objective = iota
	// MaxThroughput maximises the sum of the jobs' effective throughputs
	// (Gavel's max_sum_throughput_perf).
	MaxThroughput
	// FinishTime is finish-time fairness (Gavel's
	// finish_time_fairness_perf): the smallest largest ratio of a job's
	// expected finish time under X to its finish time on an equal share of
	// the cluster. It needs remaining work: estimated (Alloc.Oracle unset)
	// or true (set).
	FinishTime
	// FIFOAlloc is Gavel's FIFO expressed as an allocation: every job, in
	// arrival order, gets share 1 on one GPU type while the type has room
	// (Gavel's fifo, or fifo_perf with Alloc.Perf).
	FIFOAlloc
	// EstSRPT is gpusched's own: shortest expected remaining time first,
	// heterogeneity-aware. It maximises Σ_j Σ_k x_jk·(T_jk / T_j*) /
	// E[rem_j]^Exponent, T_j* being j's best speed and E[rem_j] its
	// expected remaining time at that speed: estimated from what it has
	// done and the sizes the jobs seen so far turned out to have (a
	// Kaplan–Meier estimate, see survival), or its true remaining time
	// with Oracle. X is recomputed at every round.
	EstSRPT
	// Gittins is EstSRPT with the Gittins index of the learned size
	// distribution in place of E[rem_j]^−Exponent: it maximises Σ_j Σ_k
	// x_jk·(T_jk / T_j*)·G_j, G_j being the largest, over horizons Δ, of
	// the chance that j finishes within Δ more service over the service it
	// is expected to use until then — the index that minimises the mean
	// response time of one server when sizes are unknown (Gittins; Aalto,
	// Ayesta and Righter 2009). The distribution is the Kaplan–Meier
	// estimate, smoothed (gittinsCurve). It reads no job length: there is
	// no oracle variant (the oracle is EstSRPT's). Two rules differ from
	// EstSRPT's (issue 29): a job does not fill a type without its share
	// while it has a share on a type where it runs faster (sharedFaster),
	// and when every job fits on its fastest type X is that, without the
	// program (bestFits). It is the recommended policy, with the hetero
	// placer (docs/FIDELITY.md).
	Gittins
)

// Alloc is an allocation-matrix policy (Gavel: Narayanan et al., OSDI 2020):
// it computes X, the share of time x_jk each active job j should get on
// each GPU type k, by solving a linear program over all active jobs
// (package lp), and realises X round by round. At each round every (job,
// type) pair has the priority x_jk / f_jk, f_jk being the job's share of the
// time type k has run jobs since X was last computed (plus an initial
// credit of half a round, as Gavel has); pairs are taken in descending
// priority, type by type from the fastest type (by rated TFLOPS) to the
// slowest, and a job runs on the type of its first pair whose type still has
// its GPU count free (engine.Order.Types). Jobs with priority 0 — no share
// on the type, or active since after X was computed — fill the GPUs that
// are left (except with FIFOAlloc, whose jobs wait for their share).
//
// X is recomputed when the set of active jobs changed, but not before
// Realloc has passed since the last time (Gavel's
// minimum_time_between_allocation_resets). Alloc asks for a round every
// Round (engine.Waker). Its state lives between rounds, so one Alloc
// serves one run.
type Alloc struct {
	Objective Objective
	// Oracle makes FinishTime and EstSRPT read each job's true remaining
	// work.
	Oracle bool
	// Perf makes FIFOAlloc heterogeneity-aware: each job gets the fastest
	// type with room, re-chosen at every recomputation (Gavel's fifo_perf).
	// Without it the type is Gavel's fifo's (see fifoAllocate).
	Perf bool
	// Round is the round length: the interval of the rounds it asks for
	// and twice the initial time credit of the priorities.
	Round model.Time
	// Realloc is the least time between two computations of X; 0
	// recomputes at every round where the active jobs changed.
	Realloc model.Time
	// Gavel follows Gavel's formulation where it differs from gpusched's:
	// max-sum of raw steps per second instead of throughput normalised by
	// the job's best (with Gavel's choice among equal jobs), a job credited
	// with its micro-task of whole steps rather than the round, and a first
	// recomputation at time 0 that does not count, as in Gavel's simulator
	// (docs/FIDELITY.md).
	Gavel bool
	// Exponent is EstSRPT's exponent of the expected remaining time (0
	// means DefaultExponent).
	Exponent float64
	// GangProbe is the gang probe of EstSRPT and Gittins (0: none): while
	// a multi-GPU job's service is below this quantile of the learned job
	// sizes, its weight is multiplied by its GPU count, so that per GPU it
	// counts as much as a single-GPU job of the same service and gets an
	// early chance to show that it is short. Without it the program, which
	// weighs a job per job and charges it per GPU, keeps a new gang of
	// unknown size behind the single-GPU jobs until the backlog is gone
	// (docs/EXPERIMENTS.md, issue 21). The oracle reads true sizes and has
	// no probe.
	GangProbe float64
	// GangProbeLight is the gang probe's quantile while the active jobs
	// ask for no more GPUs than the cluster has (the priority backlog's β
	// = 0); as β rises to 1 the quantile moves linearly to GangProbe (0:
	// GangProbe at every load; no effect without a priority backlog, where
	// β is 1, or without a probe). A longer probe costs little while few
	// jobs wait, and gangs left for later run one whole type at a time
	// when the busy period drains (docs/EXPERIMENTS.md, issue 21).
	GangProbeLight float64
	// GangProbeEven is Gittins's gang probe's quantile while every job
	// fits, in place of GangProbeLight, once the gangs finished so far are
	// no longer than the single-GPU jobs at the median, at least
	// GangEvenJobs of each (probeLight; 0: GangProbeLight always). Off by
	// default: on the development traces it gains on the gavel-multi
	// families but puts one more trace above Gavel's best
	// (docs/EXPERIMENTS.md, issue 29, eighth session).
	GangProbeEven float64
	// AdvantageEven is the exponent α of Gittins's advantage weight: while
	// every job fits (the priority backlog's β = 0) and the gangs finished
	// so far are no longer than the single-GPU jobs (sizeClasses.even), a
	// job's flattened weight is multiplied by its comparative advantage to
	// the power α (advantage). 0: off; the shells set DefaultAdvantageEven. On the development
	// traces it gains a few gavel-multi traces at α 0.25–1 and loses no
	// bar (docs/EXPERIMENTS.md, issue 29, ninth session, light load and
	// max-sum throughput).
	AdvantageEven float64
	// PriorityBacklog is the backlog, in multiples of the cluster's GPUs,
	// from which EstSRPT's and Gittins's weights are fully their own (at
	// most 1: always). Below it each job's value per GPU (its weight,
	// after the gang probe, over its GPU count) is raised to the power β =
	// (D/C − 1)/(PriorityBacklog − 1), D being the GPUs the active jobs
	// ask for and C the cluster's: while every job fits (β = 0) all are
	// worth the same per GPU and the program maximises the cluster's
	// normalised throughput; the larger the backlog, the more the
	// priorities weigh against the types' relative speeds. The order of
	// the jobs per GPU is unchanged; what changes is how much of its best
	// speed a job of higher priority is worth (docs/EXPERIMENTS.md, issue
	// 21). The oracle keeps its weights.
	PriorityBacklog float64
	// SpeedExponent is the power to which EstSRPT and Gittins raise a job's
	// relative speed on a type (its speed there over its best) in the
	// program's values: w·(T_jk/T_j*)^SpeedExponent. 0 means 1 (the
	// normalised throughput); below 1 a slower type is worth more than its
	// speed, so that the program weighs which jobs run more and on which
	// type less (docs/EXPERIMENTS.md, issue 21).
	SpeedExponent float64
	// MoveCost is what a move to another GPU type costs a running job
	// under Gittins: the pause without progress of its restart there (the
	// simulator's restart overhead). In the program the job's value on
	// every type but its own is scaled by 1 − MoveCost / E[rem], E[rem]
	// its expected remaining time by the learned size distribution
	// (moveFactor; 0: moves cost nothing in the program). Without it a
	// fractional X is realised by moving jobs between types at nearly
	// every event (docs/EXPERIMENTS.md, issue 29, ninth session).
	MoveCost model.Time
	// GangShare is Gittins's gang share (0: none): a multi-GPU job whose
	// share of X on a type is at least GangShare is taken first in that
	// type's pass of a round, before the pairs of higher priority. The
	// program's shares are fractions of time, but a round realises them
	// whole or not at all: a gang given most of a type (say 7 of 8 GPUs'
	// worth) by the program would otherwise wait behind the single-GPU
	// jobs with whole shares there and run nowhere, or on a slower type,
	// round after round (docs/EXPERIMENTS.md, issue 29, third session).
	// It yields to a job still in its gang probe with a higher index that
	// has a share of the type (gangYield; fourth session). A gang that needs
	// every GPU of a type is also taken first there with a share of at
	// least 1/2 when it leads the type per GPU (wholeGangFirst; fifth
	// session).
	GangShare float64
	// GangOwed is Gittins's owed-gang threshold (0: none). A round realises
	// X by priority, whole shares first, so a gang given a fraction of a
	// type runs there only once the jobs with whole shares have left it: on
	// the gavel-multi-heavy traces 8-GPU gangs ran 0.318 of the cluster's
	// GPU time where X gave them 0.400 (docs/EXPERIMENTS.md, issue 29,
	// ninth session, realisation). Every job keeps the time its shares
	// promised less the time it ran, across computations of X; a gang owed
	// GangOwed or more is taken first on a type where it has a share (as the
	// gang share takes one) until it has caught up, while the priority
	// backlog's β is at least gangOwedBacklog and unless it yields
	// (gangYield). Off by default: on the development traces it meets the
	// adoption rule at one setting and not at its neighbours.
	GangOwed model.Time
	// Seed seeds FIFOAlloc's random choice of type (Gavel's fifo draws it
	// with Python's random.Random(seed); the same seed gives the same
	// draws).
	Seed uint64

	jobs      map[*model.Job]*allocJob
	tracked   []*model.Job // the jobs of jobs, by Seq
	last      model.Time   // the previous round, -1 before the first
	lastReset model.Time   // when X was last computed, -1 never
	changed   bool         // the active jobs changed since then
	worker    []float64    // per type: seconds of jobs run since the last reset (+ credits)
	epoch     uint64       // resets without a deficit so far (resetCredits): a job's credits older than this are all resetTo
	resetTo   float64      // the credit of the last reset without a deficit
	uniform   bool         // every tracked job's credits are resetTo, on every type: no job's written since resetCredits
	sums      []float64    // creditSum's: sums[i] is i credits of sumsOf added one by one
	sumsOf    float64      // the credit sums adds
	order     []int        // GPU types, fastest first
	solver    lp.Solver
	program   lp.Problem // estSRPT's, its buffers reused from round to round (sizedProgram)
	rng       *pyRand
	fifoType  map[*model.Job]int  // FIFOAlloc: each allocated job's type
	finished  []float64           // finished jobs' work in seconds at their best speed
	sizes     sizeClasses         // Gittins with GangProbeEven or AdvantageEven: finished's sizes, gangs and single-GPU jobs apart
	surv      survival            // the size distribution learned from them
	curve     gittinsCurve        // Gittins: surv smoothed
	indexes   map[float64]float64 // Gittins: the indexes computed on curve, by service (gittinsOnce)
	entries   []allocEntry
	rest      []allocEntry     // choose's scratch: one type's pairs without a priority
	sorter    entrySorter      // choose's: sorts a type's pairs
	states    []*allocJob      // a.jobs of tracked, in its order
	sel       []*model.Job     // choose's selection, copied out by Order when its buffer is not empty (else chosen there)
	types     []engine.TypeSet // the last Order's Types, reused by the next
	remain    []int
	done      []float64 // estSRPT's scratch: per tracked job, its service at its best speed
	best      []float64 // estSRPT's scratch: per tracked job, its best speed
	cluster   *model.Cluster
	// trackedAll is the state whose running and waiting jobs were exactly
	// the tracked jobs after the last account (nil: not so). The state
	// keeps its jobs' State in step with its queues, so while it is the
	// same state, every tracked job still running or waiting is in them,
	// and as many running and waiting jobs as tracked ones means no job
	// arrived.
	trackedAll *model.State
	// fitted is the state in which estSRPT last set X by bestFits, while
	// the tracked jobs are those it set it for (nil: not so). bestFits
	// reads nothing else (the jobs' speeds, GPU counts and best types,
	// fixed in a state), so in that state, with those jobs, it would set
	// the same X again.
	fitted *model.State
	// speedsIn is the state in which compute last set every tracked job's
	// speeds (nil: none). A job tracked since has its speeds set in the
	// state it arrived in (newJob): while that is speedsIn, every tracked
	// job's speeds are speedsIn's.
	speedsIn *model.State
	// demand is, per type, the GPUs that the tracked jobs that can run
	// (best > 0) ask for on their best type, as speeds last set them
	// (allocJob.asks); negative counts the tracked jobs among them with a
	// negative GPU count. bestFits reads it instead of summing every round.
	demand   []int
	negative int
	// shared is Gittins's, per type, the tracked jobs that ask for it
	// (allocJob.asks, at bestT), each list by Seq: [0] those that
	// gangFirst takes first, [1] the others; chooseFitted reads them.
	// speeds and unask keep them, except in compute's pass over every job
	// (sharedStale), after which they are rebuilt. Jobs of the same Seq
	// (kube's stand-ins for shrinking jobs all have -1) are in tracked's
	// order only as rebuilt: while a list may hold two (sharedDup),
	// chooseFitted rebuilds them first.
	shared      [][2][]*allocJob
	sharedStale bool
	sharedDup   bool
	open        []*allocJob // chooseFitted's scratch: the jobs not chosen yet, by Seq
	// round counts choose's calls: a job is chosen in the current one
	// when its allocJob.pick is round (chosen), so no pass clears the
	// marks of the last.
	round uint64
	// pins is what account found for pinned: the tracked jobs, in order,
	// running at pinsAt and still in their restart pause then; pinsOK
	// while they are all the tracked jobs that are (account tracked no
	// new job after), until choose reads them.
	pins   []*allocJob
	pinsAt model.Time
	pinsOK bool
	beta   float64 // estSRPT's priority backlog power at the last computation of X by the program
}

// allocJob is what Alloc keeps per active job.
type allocJob struct {
	// The fields that every round reads come first (fewer cache lines).
	job      *model.Job
	gpus     int          // the GPU count it is scheduled at (size)
	weight   float64      // EstSRPT's and Gittins's weight at the last computation
	index    float64      // Gittins: the weight before the priority backlog flattens it, at the last computation (gangYield)
	probing  bool         // Gittins: its service was below the gang probe's at the last computation (gangYield)
	x        []float64    // its row of X (nil until X is computed with it)
	received []float64    // seconds run per type since the last reset, plus the credit; read through Alloc.credits or Alloc.receivedOn
	epoch    uint64       // Alloc.epoch when received was last written: before, every entry is Alloc.resetTo
	speed    []float64    // speed per type at gpus; 0 where it cannot run
	pick     uint64       // Alloc.round when it was last chosen to run (chosen)
	asks     bool         // counted in Alloc.demand, at bestT and gpus
	fitX     bool         // x and weight are bestFits's for speed, gpus and bestT as they are (x 1 on bestT where it can run, else 0; weight 0)
	deficit  []float64    // Gavel's deficit: share owed minus time received, per type (not kept by EstSRPT and Gittins: keepsDeficit)
	best     float64      // the highest of speed
	bestT    int          // bestType: the first type of Alloc.order with speed best
	speedOf  *model.State // the state speed, gpus, best and bestT were computed in (speeds)
	ftf      ftfState     // FinishTime's history
	owed     float64      // Gittins with GangOwed: seconds its shares promised less those it ran (accrueOwed)
	owing    bool         // Gittins with GangOwed: taken first until owed is 0 again (owedFirst)
}

type allocEntry struct {
	prio, deficit, x float64
	job              *model.Job
	st               *allocJob // a.jobs[job]
	t                int32
	gpus             int32 // st.gpus
}

// DefaultExponent is EstSRPT's exponent unless set, chosen by experiment
// (docs/EXPERIMENTS.md, issue 21).
const DefaultExponent = 2

// DefaultAdvantageEven is Gittins's advantage exponent the shells set
// (recipe.DefaultOptions; Alloc.AdvantageEven): on the 396 development
// traces of the workload families it met the adoption rule at 0.25, 0.5,
// 0.75 and 1, and 0.5 had the most traces at ≤ 0.9× of Gavel's best
// (docs/EXPERIMENTS.md, issue 29, ninth session).
const DefaultAdvantageEven = 0.5

// DefaultGangProbe is the gang probe the shells set (recipe.DefaultOptions):
// a gang is probed until it has received the size that 30 % of jobs do not
// exceed, chosen by experiment (docs/EXPERIMENTS.md, issue 21).
const DefaultGangProbe = 0.3

// DefaultGangProbeLight is the gang probe's quantile the shells set for a
// cluster whose jobs all fit (recipe.DefaultOptions; Alloc.GangProbeLight),
// chosen by experiment (docs/EXPERIMENTS.md, issue 21).
const DefaultGangProbeLight = 0.6

// DefaultGangShare is Gittins's gang share the shells set
// (recipe.DefaultOptions; Alloc.GangShare): a gang given at least 80 % of
// its time on a type by X is taken first there, chosen on the development
// sets of issue 29's families (docs/EXPERIMENTS.md, issue 29, third
// session).
const DefaultGangShare = 0.8

// Name returns the policy name: maxmin, maxthroughput, ftf, ftf-oracle,
// esrpt, esrpt-oracle, gittins, or fifo for FIFOAlloc.
func (a *Alloc) Name() string {
	switch a.Objective {
	case MaxThroughput:
		return "maxthroughput"
	case FinishTime:
		if a.Oracle {
			return "ftf-oracle"
		}
		return "ftf"
	case FIFOAlloc:
		return "fifo"
	case EstSRPT:
		if a.Oracle {
			return "esrpt-oracle"
		}
		return "esrpt"
	case Gittins:
		return "gittins"
	}
	return "maxmin"
}

// Next implements engine.Waker: a round every Round while jobs are active.
func (a *Alloc) Next(now model.Time) model.Time {
	if a.Round <= 0 || len(a.tracked) == 0 {
		return -1
	}
	return now + a.Round
}

// Order implements engine.QueuePolicy. The order's Types are valid until
// the next call, which reuses them.
func (a *Alloc) Order(s *model.State, now model.Time, buf []*model.Job) engine.Order {
	a.forCluster(s.Cluster)
	// EstSRPT's and Gittins's weights change as jobs progress: X is new at
	// every reset, and the time credited before one is not read.
	perRound := a.Objective == EstSRPT || a.Objective == Gittins
	a.account(s, now, perRound && a.mayReset(now))
	if perRound {
		a.changed = true
	}
	if a.changed && a.mayReset(now) {
		a.reset(now)
		a.compute(s, now)
		a.changed = false
	}
	var sel []*model.Job
	var types []engine.TypeSet
	if len(buf) == 0 && cap(buf) >= len(a.tracked) {
		sel, types = a.chooseInto(s, now, buf) // chosen in place (choose counts the chosen by len(sel)), room for every tracked job
		buf = sel
	} else {
		sel, types = a.choose(s, now)
		buf = append(buf, sel...)
	}
	ord := engine.Order{Preemptive: true, Types: types}
	if len(sel) < len(a.tracked) { // else every job is chosen (choose takes each once)
		for i, j := range a.tracked {
			if a.chosen(a.states[i]) {
				continue
			}
			buf = append(buf, j)
			ord.Types = append(ord.Types, 0)
		}
	}
	ord.Jobs = buf
	if ord.Types != nil {
		a.types = ord.Types
	}
	a.last = now
	return ord
}

// forCluster starts a's state afresh when c is not the cluster it keeps
// state for (the first Order, or a shell that changed its cluster):
// every tracked job, cache and per-type list is dropped and the random
// stream restarts from Seed; with the same cluster it does nothing.
func (a *Alloc) forCluster(c *model.Cluster) {
	if a.cluster == c {
		return
	}
	a.cluster = c
	a.jobs = map[*model.Job]*allocJob{}
	a.tracked, a.states, a.trackedAll, a.fitted, a.speedsIn = nil, nil, nil, nil, nil
	a.uniform = false
	a.last, a.lastReset = -1, -1
	a.worker = make([]float64, len(c.Types))
	a.remain = make([]int, len(c.Types))
	a.demand, a.negative = make([]int, len(c.Types)), 0
	a.shared, a.sharedStale, a.sharedDup = make([][2][]*allocJob, len(c.Types)), false, false
	a.order = make([]int, len(c.Types))
	for t := range a.order {
		a.order[t] = t
	}
	slices.SortStableFunc(a.order, func(x, y int) int { return cmp.Compare(c.Types[y].TFLOPS, c.Types[x].TFLOPS) })
	a.rng = newPyRand(a.Seed)
	a.fifoType = map[*model.Job]int{}
	a.finished = nil
	a.sizes = sizeClasses{}
	a.surv.forget()
}

// size returns the GPU count job j is scheduled at: its request or, when
// no GPU type holds its request, its minimum (an elastic job).
func (a *Alloc) size(j *model.Job) int {
	if st, ok := a.jobs[j]; ok {
		return st.gpus
	}
	return j.Spec.GPUs
}

// mayReset reports whether X may be recomputed at now.
func (a *Alloc) mayReset(now model.Time) bool {
	if a.lastReset < 0 || now-a.lastReset >= a.Realloc {
		return true
	}
	// Gavel's simulator tests "last reset at time 0" as "never reset", so
	// that a first computation at time 0 is followed by another at the
	// next change.
	return a.Gavel && a.lastReset == 0
}

// credit is the time every job is credited with per type at a reset.
func (a *Alloc) credit() float64 { return a.Round.Seconds() / 2 }
