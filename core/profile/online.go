package profile

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// DefaultOnlineWeight is the weight of a new sample in an Online estimate
// when the shell configures none: the estimate follows a change of speed
// within about ten samples and smooths out the noise of single intervals.
const DefaultOnlineWeight = 0.2

// ErrSample is wrapped by the errors of Online.Observe: the sample tells
// nothing about the job's speed and was ignored.
var ErrSample = errors.New("sample ignored")

// Sample is one measurement of a running job's throughput: a job of type
// Model made Steps training steps in Seconds seconds on GPUs GPUs of type
// GPUType (between two progress reports of one execution, on GPUs of one
// type).
type Sample struct {
	Model   string
	GPUType string
	GPUs    int
	Steps   float64
	Seconds float64
}

// OnlineEntry is one learned throughput: the estimated steps/s of job type
// Model on GPUs GPUs of type GPUType (lower case), from Samples samples.
type OnlineEntry struct {
	Model   string  `json:"model"`
	GPUType string  `json:"gpu_type"`
	GPUs    int     `json:"gpus"`
	Rate    float64 `json:"steps_per_s"`
	Samples int64   `json:"samples"`
}

// OnlineState is what an Online has learned, as plain data that a shell may
// store (as JSON) and give back to Online.Restore. Entries are sorted by
// job type, GPU type and GPU count.
type OnlineState struct {
	Entries []OnlineEntry `json:"entries"`
}

// Online learns a throughput matrix while jobs run (seed 003's profiler,
// learned instead of pre-run): it keeps, per (job type, GPU type, GPU count),
// an exponentially weighted mean of the measured steps/s, and Merge lays
// these estimates over a pre-run matrix for profile.Table. It does no I/O;
// one Online must not be used by two goroutines at once. Build it with
// NewOnline.
type Online struct {
	weight  float64
	est     map[onlineKey]estimate
	version uint64
}

type onlineKey struct {
	model, gpuType string
	gpus           int
}

type estimate struct {
	rate    float64
	samples int64
}

// NewOnline returns an Online that has learned nothing, in which a new
// sample has weight w (0 < w <= 1; 1 keeps only the latest sample): the
// estimate r becomes r + w·(x − r) for a sample of x steps/s, and the first
// sample sets it.
func NewOnline(w float64) (*Online, error) {
	if !(w > 0 && w <= 1) {
		return nil, fmt.Errorf("online profile weight %g: want 0 < weight <= 1", w)
	}
	return &Online{weight: w, est: map[onlineKey]estimate{}}, nil
}

// Weight returns the weight of a new sample.
func (o *Online) Weight() float64 { return o.weight }

// Version changes whenever the estimates change (an accepted sample, a
// restore), so that a shell rebuilds its merged matrix only then.
func (o *Online) Version() uint64 { return o.version }

// Len returns the number of (job type, GPU type, GPU count) estimates.
func (o *Online) Len() int { return len(o.est) }

// Observe adds a sample to its estimate. It rejects, with an error wrapping
// ErrSample and saying why, a sample without a job type or GPU type, with
// fewer than 1 GPU, a duration or step count that is not a positive finite
// number (a job that made no progress in an interval, or whose step counter
// went back after a restore, says nothing about its speed, and a zero would
// mark the GPU type as one the job cannot run on), or a rate that overflows.
func (o *Online) Observe(s Sample) error {
	k, rate, err := s.check()
	if err != nil {
		return err
	}
	e, ok := o.est[k]
	if ok {
		e.rate += o.weight * (rate - e.rate)
	} else {
		e.rate = rate
	}
	e.samples++
	o.est[k] = e
	o.version++
	return nil
}

// check validates a sample and returns its key and rate.
func (s Sample) check() (onlineKey, float64, error) {
	k := onlineKey{model: s.Model, gpuType: strings.ToLower(s.GPUType), gpus: s.GPUs}
	var why string
	switch {
	case s.Model == "":
		why = "no job type"
	case k.gpuType == "":
		why = "no GPU type"
	case s.GPUs < 1:
		why = fmt.Sprintf("%d GPUs", s.GPUs)
	case !positive(s.Seconds):
		why = fmt.Sprintf("duration %g s is not positive and finite", s.Seconds)
	case !positive(s.Steps):
		why = fmt.Sprintf("%g steps is not positive and finite", s.Steps)
	case !positive(s.Steps / s.Seconds):
		why = fmt.Sprintf("%g steps in %g s overflows", s.Steps, s.Seconds)
	default:
		return k, s.Steps / s.Seconds, nil
	}
	return k, 0, fmt.Errorf("%w: %s on %d %s: %s", ErrSample, s.Model, s.GPUs, s.GPUType, why)
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// Rate returns the estimated steps/s of a job type on n GPUs of a GPU type
// (compared without regard to case) and the number of samples behind it;
// 0, 0 when there is none.
func (o *Online) Rate(model, gpuType string, n int) (float64, int64) {
	e := o.est[onlineKey{model: model, gpuType: strings.ToLower(gpuType), gpus: n}]
	return e.rate, e.samples
}

// State returns every estimate, sorted by job type, GPU type and GPU count.
func (o *Online) State() OnlineState {
	st := OnlineState{Entries: make([]OnlineEntry, 0, len(o.est))}
	for k, e := range o.est {
		st.Entries = append(st.Entries, OnlineEntry{Model: k.model, GPUType: k.gpuType, GPUs: k.gpus,
			Rate: e.rate, Samples: e.samples})
	}
	slices.SortFunc(st.Entries, func(a, b OnlineEntry) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.GPUType, b.GPUType), cmp.Compare(a.GPUs, b.GPUs))
	})
	return st
}

// Restore replaces every estimate with those of st (typically a stored
// State). The weight stays o's own. It checks every entry first and changes
// nothing on error: an entry without a job type or GPU type, with fewer
// than 1 GPU or sample, a rate that is not a positive finite number, or
// one given twice (GPU types compared without regard to case).
func (o *Online) Restore(st OnlineState) error {
	est := make(map[onlineKey]estimate, len(st.Entries))
	for i, e := range st.Entries {
		k := onlineKey{model: e.Model, gpuType: strings.ToLower(e.GPUType), gpus: e.GPUs}
		var why string
		switch _, dup := est[k]; {
		case e.Model == "" || k.gpuType == "":
			why = "no job type or GPU type"
		case e.GPUs < 1 || e.Samples < 1:
			why = fmt.Sprintf("%d GPUs, %d samples: want at least 1 of each", e.GPUs, e.Samples)
		case !positive(e.Rate):
			why = fmt.Sprintf("rate %g is not positive and finite", e.Rate)
		case dup:
			why = "given twice"
		}
		if why != "" {
			return fmt.Errorf("online profiles: entries[%d] (%s on %d %s): %s", i, e.Model, e.GPUs, e.GPUType, why)
		}
		est[k] = estimate{rate: e.Rate, samples: e.Samples}
	}
	o.est = est
	o.version++
	return nil
}

// Merge returns a copy of base with the estimates laid over it: each
// estimate replaces base's point for its (job type, GPU type, GPU count) or
// is added to the points of that pair (kept sorted by GPU count); job types
// and GPU types base lacks are added. The other points and the peak
// memories stay base's. base is not changed; nil or the zero Matrix gives
// the estimates alone.
func (o *Online) Merge(base *Matrix) *Matrix {
	if base == nil {
		base = &Matrix{}
	}
	out := base.Merge() // a copy whose maps Merge owns; inner maps still shared
	cloned := map[string]bool{}
	for _, e := range o.State().Entries {
		byType := out.points[e.Model]
		if !cloned[e.Model] {
			byType, cloned[e.Model] = maps.Clone(byType), true // never write to base's maps
			if byType == nil {
				byType = map[string][]Point{}
				out.Models = append(out.Models, e.Model)
			}
			out.points[e.Model] = byType
		}
		pts := byType[e.GPUType]
		if pts == nil && !slices.Contains(out.Types, e.GPUType) {
			out.Types = append(out.Types, e.GPUType)
		}
		byType[e.GPUType] = setPoint(pts, Point{GPUs: e.GPUs, Rate: e.Rate})
	}
	slices.Sort(out.Types)
	slices.Sort(out.Models)
	return out
}

// setPoint returns a copy of sorted points pts with p replacing the point
// of its GPU count, or inserted in order.
func setPoint(pts []Point, p Point) []Point {
	i, found := slices.BinarySearchFunc(pts, p.GPUs, func(q Point, n int) int { return cmp.Compare(q.GPUs, n) })
	out := slices.Clone(pts)
	if found {
		out[i] = p
		return out
	}
	return slices.Insert(out, i, p)
}
