package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/sim"
)

// DefaultRuns is the number of perturbed simulations behind a range.
const DefaultRuns = 20

// Snapshot is the live state a forecast starts from.
type Snapshot struct {
	// Now is the time of the snapshot (model time: Unix milliseconds in
	// the service).
	Now     model.Time
	Cluster *model.Cluster
	Table   *profile.Table
	// Names and Options build the engine the service runs.
	Names   recipe.Names
	Options recipe.Options
	// Jobs are the active jobs; Jobs[i].Job.Seq must be i.
	Jobs []Job
}

// Job is one active job of a snapshot.
type Job struct {
	// Job is the job as the engine sees it (a copy the forecast owns):
	// Waiting, or Running on its Alloc. Its Work and Done are set by Run
	// from Length.
	Job    *model.Job
	Length Length
	// Started is when a running job's current attempt started (its ETA's
	// start).
	Started model.Time
}

// Options tune Run.
type Options struct {
	// Runs is the number of perturbed simulations (0: DefaultRuns).
	Runs int
	// Seed seeds the perturbations.
	Seed uint64
	// Spreads are the uncertainties by class (missing classes: Prior).
	Spreads map[Class]Spread
	// Workers bounds the simulations run at once (0: GOMAXPROCS).
	Workers int
}

// Result is a forecast: per job of the snapshot (same index), its ETA.
type Result struct {
	Now  model.Time
	Runs int
	ETAs []ETA
}

// Never marks a time that no simulation reached: the job did not start
// (or finish) in the run, because it cannot run on the cluster as it is or
// waits behind a job that cannot.
const Never model.Time = -1

// ETA is one job's forecast. Start is the point forecast of its start
// (its actual start when it runs), Finish of its finish; the quantiles are
// P10, P50 and P90 over the perturbed runs. Times are Never when the runs
// did not reach them.
type ETA struct {
	Start, Finish   model.Time
	StartQ, FinishQ [3]model.Time
	// Reason says why Start or Finish is Never (the simulator's reason).
	Reason string
}

// Run forecasts the snapshot: one simulation with every length corrected
// by its class's bias, then o.Runs perturbed ones.
func Run(s *Snapshot, o Options) (*Result, error) {
	if s.Cluster == nil || s.Table == nil {
		return nil, errors.New("forecast: the snapshot has no cluster")
	}
	for i := range s.Jobs {
		if s.Jobs[i].Job.Seq != i {
			return nil, fmt.Errorf("forecast: job %s has Seq %d at index %d", s.Jobs[i].Job.Spec.ID, s.Jobs[i].Job.Seq, i)
		}
	}
	if o.Runs <= 0 {
		o.Runs = DefaultRuns
	}
	factors := drawFactors(s, o)
	runs := make([][]outcome, len(factors))
	errs := make([]error, len(factors))
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(factors)) {
		wg.Go(func() {
			for r := range next {
				runs[r], errs[r] = simulate(s, factors[r])
			}
		})
	}
	for r := range factors {
		next <- r
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return summarize(s, runs), nil
}

// drawFactors returns the length factors of every run: run 0 has each
// class's bias exp(Mu), the others a log-normal draw per job.
func drawFactors(s *Snapshot, o Options) [][]float64 {
	spread := func(c Class) Spread {
		if sp, ok := o.Spreads[c]; ok {
			return sp
		}
		return Prior(c)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	out := make([][]float64, o.Runs+1)
	for r := range out {
		f := make([]float64, len(s.Jobs))
		for i := range s.Jobs {
			sp := spread(s.Jobs[i].Length.Class())
			z := 0.0
			if r > 0 {
				z = rng.NormFloat64()
			}
			f[i] = math.Exp(sp.Mu + sp.Sigma*z)
		}
		out[r] = f
	}
	return out
}

// outcome is one job's start and finish in one run, and why they are
// missing.
type outcome struct {
	start, finish model.Time
	reason        string
}

// simulate runs the snapshot once with job i's length times factors[i].
func simulate(s *Snapshot, factors []float64) ([]outcome, error) {
	eng, err := recipe.New(s.Names, s.Options)
	if err != nil {
		return nil, fmt.Errorf("forecast: %w", err)
	}
	jobs := make([]*model.Job, len(s.Jobs))
	slab := make([]model.Job, len(s.Jobs)) // one allocation for the run's copies
	w := &workload{Table: s.Table, fixed: make([]fixedSpeed, len(s.Jobs))}
	for i := range s.Jobs {
		jobs[i] = &slab[i]
		prepare(s, i, factors[i], w, jobs[i])
	}
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: s.Cluster, Workload: w, From: &sim.Start{Now: s.Now, Jobs: jobs}})
	if err != nil {
		return nil, fmt.Errorf("forecast: %w", err)
	}
	out := make([]outcome, len(jobs))
	for i, r := range res.Records {
		o := outcome{start: Never, finish: Never, reason: r.Reason}
		if r.Start >= 0 {
			o.start = r.Start
		}
		if r.Completed() {
			o.finish = r.Finish
		}
		out[i] = o
	}
	return out, nil
}

// prepare makes j a copy of job i for one run, its work set from its
// length times factor: a running job's remaining seconds at speed 1 on
// its current GPUs (w.fixed), a waiting steps job's steps at its matrix
// speed, any other waiting job's seconds as a duration on the reference
// type at its requested GPUs.
func prepare(s *Snapshot, i int, factor float64, w *workload, j *model.Job) {
	src := s.Jobs[i]
	copyJob(j, src.Job)
	l := src.Length
	switch {
	case j.State == model.Running:
		j.Spec.Steps, j.Spec.Duration = 0, 0
		j.Work, j.Done = max(l.Remaining.Seconds()*factor, 0.001), 0
		w.fixed[i] = fixedSpeed{typ: s.Cluster.TypeOf(j.Alloc[0]), n: len(j.Alloc), rate: 1, set: true}
	case l.Kind == KindSteps && l.Speed == SpeedMatrix && l.Steps > 0 && j.Model >= 0:
		j.Spec.Steps, j.Spec.Duration = max(int64(l.Steps*factor), 1), 0
		j.Work, j.Done = float64(j.Spec.Steps), 0
	default:
		j.Spec.Steps = 0
		j.Work, j.Done = max(l.Remaining.Seconds()*factor, 0.001), 0
		j.Spec.Duration = model.FromSeconds(j.Work)
	}
	if j.State != model.Running {
		j.FirstStart = -1 // the run reports its next start
	}
}

// copyJob makes dst a copy of src deep enough for one run to change it.
func copyJob(dst, src *model.Job) {
	*dst = *src
	dst.Alloc = slices.Clone(src.Alloc)
	dst.Periods = slices.Clone(src.Periods)
	dst.Spec.Scaling = slices.Clone(src.Spec.Scaling)
}

// fixedSpeed is a running job's speed on its current GPUs (type, count).
type fixedSpeed struct {
	typ, n int
	rate   float64
	set    bool
}

// workload is the snapshot's profile table, except that running jobs run
// at their fixed speed on the GPUs they hold (their remaining work is
// measured there).
type workload struct {
	*profile.Table
	fixed []fixedSpeed
}

// Speed implements model.Profile.
func (w *workload) Speed(j *model.Job, t, n int) float64 {
	if j.Seq < len(w.fixed) {
		if f := w.fixed[j.Seq]; f.set && f.typ == t && f.n == n {
			return f.rate
		}
	}
	return w.Table.Speed(j, t, n)
}

// summarize turns the runs into ETAs: run 0 gives the point forecast, the
// others the quantiles.
func summarize(s *Snapshot, runs [][]outcome) *Result {
	res := &Result{Now: s.Now, Runs: len(runs) - 1, ETAs: make([]ETA, len(s.Jobs))}
	starts := make([]model.Time, len(runs)-1)
	finishes := make([]model.Time, len(runs)-1)
	for i := range s.Jobs {
		for r := 1; r < len(runs); r++ {
			starts[r-1], finishes[r-1] = runs[r][i].start, runs[r][i].finish
		}
		e := ETA{Start: runs[0][i].start, Finish: runs[0][i].finish, StartQ: quantiles(starts), FinishQ: quantiles(finishes)}
		if e.Start == Never || e.Finish == Never {
			e.Reason = runs[0][i].reason
		}
		if s.Jobs[i].Job.State == model.Running {
			e.Start = s.Jobs[i].Started
			e.StartQ = [3]model.Time{e.Start, e.Start, e.Start}
		}
		res.ETAs[i] = e
	}
	return res
}

// quantiles returns the nearest-rank P10, P50 and P90 of ts, Never
// counting as later than any time.
func quantiles(ts []model.Time) [3]model.Time {
	s := slices.Clone(ts)
	slices.SortFunc(s, func(a, b model.Time) int {
		switch {
		case a == b:
			return 0
		case a == Never:
			return 1
		case b == Never:
			return -1
		case a < b:
			return -1
		}
		return 1
	})
	var q [3]model.Time
	for k, p := range [3]float64{0.1, 0.5, 0.9} {
		q[k] = s[max(0, min(int(math.Ceil(p*float64(len(s))))-1, len(s)-1))]
	}
	return q
}
