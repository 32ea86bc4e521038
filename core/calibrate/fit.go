package calibrate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Sample is one reading of the calibration ramp (seed 002, claim 5): the
// device's compute load and, at that load, its power draw and the work it did
// per second.
type Sample struct {
	// Load is the compute load as a fraction of full load, in [0, 1].
	Load float64
	// PowerW is the power draw in watts (the BMC's reading), finite and ≥ 0.
	PowerW float64
	// Throughput is the work done per second in any unit (samples/s,
	// steps/s): finite, > 0 at a positive load and ≥ 0 at load 0.
	Throughput float64
}

// Thresholds are a device's two load thresholds for one algorithm type
// (seed 002, claim 3): load ≤ Th1 is load state 1, Th1 < load ≤ Th2 state 2,
// load > Th2 state 3.
type Thresholds struct {
	// Th1 is the load where the falling region ends and the stable region
	// begins.
	Th1 float64 `json:"th1"`
	// Th2 is the load where the stable region ends and the rising region
	// begins.
	Th2 float64 `json:"th2"`
}

// Options tune Fit. The zero value selects the defaults; see the package
// documentation for what each option does.
type Options struct {
	// Window is the full width, in load units, of the smoothing window, in
	// (0, 1]; 0 means DefaultWindow.
	Window float64
	// Tolerance is the slope below which the curve counts as stable, as a
	// fraction of the stable level of energy per unit of work per unit of
	// load; 0 means DefaultTolerance.
	Tolerance float64
	// NoiseZ is how many standard errors of the local slope a slope must
	// exceed to count as falling or rising; 0 means DefaultNoiseZ.
	NoiseZ float64
}

// Defaults of Options and the minimum size of a ramp.
const (
	// DefaultWindow is the default smoothing window: a tenth of the load range.
	DefaultWindow = 0.1
	// DefaultTolerance is the default relative slope of the stable region.
	DefaultTolerance = 0.1
	// DefaultNoiseZ is the default number of standard errors a slope must
	// exceed to be clearly non-zero.
	DefaultNoiseZ = 3.0
	// MinSamples is the fewest usable samples Fit accepts.
	MinSamples = 10
	// minWindowPoints is the fewest samples a local fit uses.
	minWindowPoints = 5
)

// Errors that Fit wraps; test for them with errors.Is.
var (
	// ErrTooFewSamples: fewer than MinSamples usable samples.
	ErrTooFewSamples = errors.New("too few samples")
	// ErrBadSample: a load, power or throughput out of range.
	ErrBadSample = errors.New("bad sample")
	// ErrDuplicateLoad: two samples with the same load.
	ErrDuplicateLoad = errors.New("loads not strictly increasing")
	// ErrNoStableRegion: the curve has no stable region between its falling
	// and rising regions.
	ErrNoStableRegion = errors.New("curve without a stable region")
)

// withDefaults validates o and fills in the defaults of its zero fields.
func (o Options) withDefaults() (Options, error) {
	fields := []struct {
		name string
		v    *float64
		def  float64
		max  float64
	}{
		{"window", &o.Window, DefaultWindow, 1},
		{"tolerance", &o.Tolerance, DefaultTolerance, math.MaxFloat64},
		{"noise z", &o.NoiseZ, DefaultNoiseZ, math.MaxFloat64},
	}
	for _, f := range fields {
		if *f.v == 0 {
			*f.v = f.def
		}
		if !(*f.v > 0 && *f.v <= f.max) {
			return o, fmt.Errorf("options: %s %v: want a number in (0, %v]", f.name, *f.v, f.max)
		}
	}
	return o, nil
}

// Fit returns the thresholds of one ramp of samples of one algorithm type
// (seed 002, claims 4–5). The samples may come in any order.
func Fit(samples []Sample, opts Options) (Thresholds, error) {
	r, err := FitResult(samples, opts)
	return r.Thresholds, err
}

// Result is a fit's thresholds with what tells how far to trust them.
type Result struct {
	Thresholds
	// Samples is the number of usable samples the fit used (idle readings
	// left out).
	Samples int `json:"samples"`
	// Noise is the estimated standard deviation of the energy per unit of
	// work around the smoothed curve, relative to the curve (0.01: the
	// readings scatter by about 1 %): the fit's quality, lower is better.
	Noise float64 `json:"noise"`
	// Level is the stable level of the curve: its lowest smoothed energy
	// per unit of work, in joules per unit of work (the unit of the
	// samples' throughput).
	Level float64 `json:"level"`
}

// FitResult is Fit with the fit's quality: the number of samples used,
// their scatter around the curve and the curve's stable level. On error
// the Result is zero.
func FitResult(samples []Sample, opts Options) (Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	x, e, err := energyPerWork(samples)
	if err != nil {
		return Result{}, err
	}
	c, err := smooth(x, e, opts.Window)
	if err != nil {
		return Result{}, err
	}
	th, err := c.thresholds(opts)
	if err != nil {
		return Result{}, err
	}
	return Result{Thresholds: th, Samples: len(x), Noise: c.noise, Level: c.s[argmin(c.s)]}, nil
}

// FitAll fits the ramp of every algorithm type; errors name the type. It
// fits every type and reports all the failures together.
func FitAll(byType map[string][]Sample, opts Options) (map[string]Thresholds, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(byType) == 0 {
		return nil, fmt.Errorf("%w: no algorithm type has samples", ErrTooFewSamples)
	}
	out := make(map[string]Thresholds, len(byType))
	var errs []error
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		th, err := Fit(byType[typ], opts)
		if err != nil {
			errs = append(errs, fmt.Errorf("type %q: %w", typ, err))
			continue
		}
		out[typ] = th
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// indexed is a usable sample with its position in the caller's slice.
type indexed struct {
	Sample
	i int
}

// energyPerWork validates the samples, drops idle readings (load 0 and
// throughput 0) and returns the loads, sorted, and the energy per unit of
// work at each (seed 002, claim 5).
func energyPerWork(samples []Sample) (x, e []float64, err error) {
	use := make([]indexed, 0, len(samples))
	for i, s := range samples {
		if col, problem := checkSample(s); problem != "" {
			return nil, nil, fmt.Errorf("%w: samples[%d]: %s %s", ErrBadSample, i, col, problem)
		}
		if s.Throughput > 0 {
			use = append(use, indexed{s, i})
		}
	}
	if len(use) < MinSamples {
		note := ""
		if idle := len(samples) - len(use); idle > 0 {
			note = fmt.Sprintf(" (%d idle readings with throughput 0 carry no energy per unit of work)", idle)
		}
		return nil, nil, fmt.Errorf("%w: %d usable samples, need at least %d%s", ErrTooFewSamples, len(use), MinSamples, note)
	}
	slices.SortStableFunc(use, func(a, b indexed) int { return cmp.Compare(a.Load, b.Load) })
	x = make([]float64, len(use))
	e = make([]float64, len(use))
	for k, s := range use {
		if k > 0 && s.Load == use[k-1].Load {
			return nil, nil, fmt.Errorf("%w: samples[%d] and samples[%d] both have load %v", ErrDuplicateLoad, use[k-1].i, s.i, s.Load)
		}
		x[k], e[k] = s.Load, s.PowerW/s.Throughput
		if math.IsInf(e[k], 0) {
			return nil, nil, fmt.Errorf("%w: samples[%d]: power %v W over throughput %v overflows", ErrBadSample, s.i, s.PowerW, s.Throughput)
		}
	}
	return x, e, nil
}

// checkSample returns the column at fault in s and what is wrong with its
// value, or "" and "" when s is a valid sample.
func checkSample(s Sample) (column, problem string) {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(s.Load):
		return "load", fmt.Sprintf("%v is not a finite number", s.Load)
	case s.Load < 0 || s.Load > 1:
		return "load", fmt.Sprintf("%v is outside [0,1] (loads are fractions of full load)", s.Load)
	case !finite(s.PowerW):
		return "power_w", fmt.Sprintf("%v is not a finite number", s.PowerW)
	case s.PowerW < 0:
		return "power_w", fmt.Sprintf("%v is negative", s.PowerW)
	case !finite(s.Throughput):
		return "throughput", fmt.Sprintf("%v is not a finite number", s.Throughput)
	case s.Throughput < 0:
		return "throughput", fmt.Sprintf("%v is negative", s.Throughput)
	case s.Throughput == 0 && s.Load > 0:
		return "throughput", fmt.Sprintf("0 at load %v: a positive load must do work", s.Load)
	}
	return "", ""
}
