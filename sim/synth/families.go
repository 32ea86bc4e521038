package synth

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
)

// Shape is what a workload family fixes of a job: when it arrives, how
// many GPUs it asks, and how long it runs on that many V100s. FromShapes
// gives it a job type and steps the way Gavel's generator does.
type Shape struct {
	ArrivalS float64
	GPUs     int
	RunS     float64
}

// Run times of windowed jobs are clamped to [MinRunS, MaxRunS]: Gavel's
// generator draws 60·10^1.5 s to 60·10^4 s, and a trace's month-long jobs
// would outlast any comparison.
const (
	MinRunS = 60
	MaxRunS = 1e6
)

// gavelScale rounds a GPU count up to one of Gavel's scale factors (1, 2,
// 4, 8); more than 8 GPUs become 8.
func gavelScale(n int) int {
	for _, s := range []int{1, 2, 4} {
		if n <= s {
			return s
		}
	}
	return 8
}

// Window returns n consecutive jobs of specs, in submit order, from a
// start drawn with seed: their arrivals relative to the first, GPU counts
// as Gavel's scale factors (gavelScale), run times (the specs' durations)
// clamped to [MinRunS, MaxRunS]. Jobs without a duration are left out.
func Window(specs []model.JobSpec, n int, seed uint64) ([]Shape, error) {
	var jobs []model.JobSpec
	for _, s := range specs {
		if s.Duration > 0 && s.GPUs > 0 {
			jobs = append(jobs, s)
		}
	}
	if n < 1 || len(jobs) < n {
		return nil, fmt.Errorf("synth: a window of %d jobs from %d with a duration: want 1 to %d", n, len(jobs), len(jobs))
	}
	slices.SortStableFunc(jobs, func(a, b model.JobSpec) int { return cmp.Compare(a.Submit, b.Submit) })
	rng := rand.New(rand.NewPCG(seed, 3))
	start := rng.IntN(len(jobs) - n + 1)
	out := make([]Shape, n)
	for i, s := range jobs[start : start+n] {
		run := math.Min(math.Max(s.Duration.Seconds(), MinRunS), MaxRunS)
		out[i] = Shape{ArrivalS: (s.Submit - jobs[start].Submit).Seconds(), GPUs: gavelScale(s.GPUs), RunS: run}
	}
	return out, nil
}

// Resample draws n jobs with replacement from workloads, each a small
// trace (Tiresias' 60 jobs, Pollux's workloads of 160), for traces longer
// than any one of them: a drawn job keeps its GPU count (as a Gavel scale
// factor), its run time (clamped as Window's) and the gap from the job
// before it in its own workload (the first job's: from 0), so that the
// drawn arrivals, the sums of the drawn gaps from 0, keep the workload's
// bursts (runs of zero or short gaps) in proportion. Jobs without a
// duration are left out.
func Resample(workloads [][]model.JobSpec, n int, seed uint64) ([]Shape, error) {
	type item struct {
		gap float64
		s   model.JobSpec
	}
	var pool []item
	for _, w := range workloads {
		w = slices.Clone(w)
		slices.SortStableFunc(w, func(a, b model.JobSpec) int { return cmp.Compare(a.Submit, b.Submit) })
		prev := model.Time(0)
		for _, s := range w {
			if s.Duration > 0 && s.GPUs > 0 {
				pool = append(pool, item{(s.Submit - prev).Seconds(), s})
			}
			prev = s.Submit
		}
	}
	if n < 1 || len(pool) == 0 {
		return nil, fmt.Errorf("synth: %d jobs drawn from %d with a duration: want n ≥ 1 and some jobs", n, len(pool))
	}
	rng := rand.New(rand.NewPCG(seed, 6))
	out := make([]Shape, n)
	t := 0.0
	for i := range out {
		it := pool[rng.IntN(len(pool))]
		if i > 0 {
			t += it.gap
		}
		run := math.Min(math.Max(it.s.Duration.Seconds(), MinRunS), MaxRunS)
		out[i] = Shape{ArrivalS: t, GPUs: gavelScale(it.s.GPUs), RunS: run}
	}
	return out, nil
}

// Poisson draws n shapes as Gavel's generator does (run times from its
// Philly-like distribution, Poisson arrivals at rate per hour), but with
// the scale factors 1, 2, 4 and 8 in the proportions of weights.
func Poisson(n int, rate float64, weights [4]float64, seed uint64) ([]Shape, error) {
	total := weights[0] + weights[1] + weights[2] + weights[3]
	if n < 1 || !(rate > 0) || !(total > 0) || slices.ContainsFunc(weights[:], func(w float64) bool { return w < 0 }) {
		return nil, fmt.Errorf("synth: %d jobs at %g per hour with scale weights %v: want n ≥ 1, a positive rate and weights", n, rate, weights)
	}
	rng := rand.New(rand.NewPCG(seed, 4))
	out := make([]Shape, n)
	t := 0.0
	for i := range out {
		if i > 0 {
			t += rng.ExpFloat64() * 3600 / rate
		}
		x, scale := rng.Float64()*total, 8
		for k, s := range []int{1, 2, 4} {
			if x -= weights[k]; x < 0 {
				scale = s
				break
			}
		}
		out[i] = Shape{ArrivalS: t, GPUs: scale, RunS: duration(rng)}
	}
	return out, nil
}

// OfferedLoad is the GPU time that shapes ask, at V100 speed, over what
// gpus GPUs give between the first and the last arrival; 0 when they all
// arrive at once.
func OfferedLoad(shapes []Shape, gpus int) float64 {
	span := shapes[len(shapes)-1].ArrivalS - shapes[0].ArrivalS
	if span <= 0 || gpus <= 0 {
		return 0
	}
	work := 0.0
	for _, s := range shapes {
		work += float64(s.GPUs) * s.RunS
	}
	return work / (span * float64(gpus))
}

// ScaleLoad stretches or compresses the arrivals of shapes (their bursts
// kept) so that their offered load on gpus GPUs is load. Shapes that all
// arrive at once are left as they are.
func ScaleLoad(shapes []Shape, gpus int, load float64) {
	now := OfferedLoad(shapes, gpus)
	if now <= 0 || !(load > 0) {
		return
	}
	f := now / load
	for i := range shapes {
		shapes[i].ArrivalS *= f
	}
}

// FromShapes gives every shape a job type and steps as Gavel's generator
// does: a type drawn uniformly among those of m measured on a V100 at the
// shape's GPU count, and the steps it makes there in the shape's run time.
func FromShapes(m *profile.Matrix, shapes []Shape, seed uint64) ([]Job, error) {
	if len(m.Models) == 0 || !m.HasType("v100") {
		return nil, errors.New("synth: the throughput matrix needs job types measured on v100")
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	jobs := make([]Job, len(shapes))
	for i, s := range shapes {
		var types []string
		for _, typ := range m.Models {
			if _, ok := gavelTemplates[typ]; ok && v100Rate(m, typ, s.GPUs) > 0 {
				types = append(types, typ)
			}
		}
		if len(types) == 0 {
			return nil, fmt.Errorf("synth: no job type of the matrix runs on %d V100s", s.GPUs)
		}
		typ := types[rng.IntN(len(types))]
		steps := int64(math.Max(1, math.Round(s.RunS*v100Rate(m, typ, s.GPUs))))
		jobs[i] = Job{ID: "f" + strconv.Itoa(i), SubmitS: s.ArrivalS, GPUs: s.GPUs, MinGPUs: s.GPUs, MaxGPUs: s.GPUs, Model: typ, Steps: steps}
	}
	return jobs, nil
}

// WriteGavel writes jobs in Gavel's trace format (job type, command,
// working directory, steps flag, needs data, steps, scale factor, priority
// weight 1, no SLO, arrival in whole seconds), which both Gavel's
// simulator and gpusched read. Every job's type must be one of Gavel's.
func WriteGavel(w io.Writer, jobs []Job) error {
	for _, j := range jobs {
		t, ok := gavelTemplates[j.Model]
		if !ok {
			return fmt.Errorf("synth: job %s: %q is not one of Gavel's job types", j.ID, j.Model)
		}
		data := 0
		if t.needsData {
			data = 1
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%d\t1\t-1.000000\t%d\n",
			j.Model, t.command, t.workDir, t.stepsArg, data, j.Steps, j.GPUs, int64(j.SubmitS))
		if _, err := io.WriteString(w, line); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	return nil
}
