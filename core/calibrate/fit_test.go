package calibrate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFitRecoversBreakpoints fits synthetic ramps of curves with known
// breakpoints (seed 002, claims 4–5), five noise draws each.
func TestFitRecoversBreakpoints(t *testing.T) {
	quad := shape{th1: 0.3, th2: 0.8, fall: 2, fallPow: 2, rise: 1, risePow: 2}
	tests := []struct {
		name string
		c    shape
		r    ramp
		want Thresholds // zero: the curve's th1 and th2
	}{
		{"smooth, exact", quad, ramp{n: 200, lo: 0, hi: 1}, Thresholds{}},
		{"smooth, 1% noise", quad, ramp{n: 200, lo: 0, hi: 1, noise: 0.01}, Thresholds{}},
		{"smooth, 3% noise, 100 samples", quad, ramp{n: 100, lo: 0, hi: 1, noise: 0.03}, Thresholds{}},
		{"smooth, 5% noise, 1000 samples", quad, ramp{n: 1000, lo: 0, hi: 1, noise: 0.05}, Thresholds{}},
		{"sparse, 30 samples", quad, ramp{n: 30, lo: 0, hi: 1}, Thresholds{}},
		{"sparse, 40 samples, 1% noise", quad, ramp{n: 40, lo: 0, hi: 1, noise: 0.01}, Thresholds{}},
		{"base power over little work, 2% noise",
			shape{th1: 0.25, th2: 0.75, fall: 0.5, fallPow: 2, hyper: true, rise: 1, risePow: 2},
			ramp{n: 200, lo: 0, hi: 1, noise: 0.02}, Thresholds{}},
		{"narrow stable region",
			shape{th1: 0.4, th2: 0.6, fall: 1, fallPow: 2, rise: 1, risePow: 2},
			ramp{n: 300, lo: 0, hi: 1, noise: 0.01}, Thresholds{}},
		{"kinks", shape{th1: 0.3, th2: 0.8, fall: 1, fallPow: 1, rise: 1, risePow: 1},
			ramp{n: 200, lo: 0, hi: 1, noise: 0.005}, Thresholds{}},
		{"shallow kinks", shape{th1: 0.3, th2: 0.8, fall: 0.2, fallPow: 1, rise: 0.2, risePow: 1},
			ramp{n: 200, lo: 0, hi: 1, noise: 0.005}, Thresholds{}},
		{"cubic, wide stable region", shape{th1: 0.2, th2: 0.9, fall: 3, fallPow: 3, rise: 2, risePow: 3},
			ramp{n: 200, lo: 0, hi: 1, noise: 0.01}, Thresholds{}},
		{"uneven load spacing, 2% noise", shape{th1: 0.35, th2: 0.7, fall: 1.5, fallPow: 2, rise: 1, risePow: 2},
			ramp{n: 150, lo: 0.02, hi: 1, noise: 0.02, jitter: 0.8}, Thresholds{}},
		{"no falling region: th1 is the lowest load", shape{th1: 0, th2: 0.8, rise: 1, risePow: 2},
			ramp{n: 200, lo: 0.05, hi: 1, noise: 0.01}, Thresholds{Th1: 0.05, Th2: 0.8}},
		{"no rising region: th2 is the highest load", shape{th1: 0.3, th2: 1, fall: 2, fallPow: 2},
			ramp{n: 200, lo: 0, hi: 1, noise: 0.01}, Thresholds{Th1: 0.3, Th2: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == (Thresholds{}) {
				want = Thresholds{Th1: tc.c.th1, Th2: tc.c.th2}
			}
			for seed := range uint64(5) {
				rng := rand.New(rand.NewPCG(seed, 2))
				th, err := Fit(synth(tc.c, tc.r, rng), Options{})
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				checkNear(t, fmt.Sprintf("seed %d", seed), th, want, 0.05)
			}
		})
	}
}

// TestFitInvariance: the thresholds do not depend on the samples' order or
// on the units of power and work.
func TestFitInvariance(t *testing.T) {
	c := shape{th1: 0.3, th2: 0.8, fall: 2, fallPow: 2, rise: 1, risePow: 2}
	samples := synth(c, ramp{n: 200, lo: 0, hi: 1, noise: 0.02}, rand.New(rand.NewPCG(1, 1)))
	want, err := Fit(samples, Options{})
	if err != nil {
		t.Fatal(err)
	}
	shuffled := append([]Sample(nil), samples...)
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	scaled := append([]Sample(nil), samples...)
	for i := range scaled {
		scaled[i].PowerW *= 1e-3     // kW
		scaled[i].Throughput *= 3600 // per hour
	}
	for name, s := range map[string][]Sample{"shuffled": shuffled, "other units": scaled} {
		got, err := Fit(s, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(got.Th1-want.Th1) > 1e-9 || math.Abs(got.Th2-want.Th2) > 1e-9 {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}

// curveSamples samples the energy-per-work curve f at n loads from lo to hi.
func curveSamples(n int, lo, hi float64, f func(float64) float64) []Sample {
	out := make([]Sample, n)
	for k := range out {
		l := lo + (hi-lo)*float64(k)/float64(n-1)
		out[k] = Sample{Load: l, PowerW: f(l) * 100 * l, Throughput: 100 * l}
	}
	return out
}

func TestFitErrors(t *testing.T) {
	good := func() []Sample {
		return synth(shape{th1: 0.3, th2: 0.8, fall: 2, fallPow: 2, rise: 1, risePow: 2}, ramp{n: 50, lo: 0.02, hi: 1}, nil)
	}
	with := func(i int, edit func(*Sample)) []Sample {
		s := good()
		edit(&s[i])
		return s
	}
	tests := []struct {
		name    string
		samples []Sample
		opts    Options
		is      error
		want    string
	}{
		{"nil", nil, Options{}, ErrTooFewSamples, "0 usable samples, need at least 10"},
		{"nine samples", good()[:9], Options{}, ErrTooFewSamples, "9 usable samples, need at least 10"},
		{"idle readings do not count", append(good()[:9], Sample{Load: 0, PowerW: 60}), Options{}, ErrTooFewSamples, "1 idle readings"},
		{"duplicate load", with(7, func(s *Sample) { s.Load = good()[3].Load }), Options{}, ErrDuplicateLoad, "samples[3] and samples[7] both have load"},
		{"load above 1", with(4, func(s *Sample) { s.Load = 1.5 }), Options{}, ErrBadSample, "samples[4]: load 1.5 is outside [0,1]"},
		{"negative load", with(4, func(s *Sample) { s.Load = -0.1 }), Options{}, ErrBadSample, "outside [0,1]"},
		{"NaN load", with(4, func(s *Sample) { s.Load = math.NaN() }), Options{}, ErrBadSample, "load NaN is not a finite number"},
		{"negative power", with(5, func(s *Sample) { s.PowerW = -3 }), Options{}, ErrBadSample, "samples[5]: power_w -3 is negative"},
		{"infinite power", with(5, func(s *Sample) { s.PowerW = math.Inf(1) }), Options{}, ErrBadSample, "power_w +Inf is not a finite number"},
		{"zero throughput at positive load", with(6, func(s *Sample) { s.Throughput = 0 }), Options{}, ErrBadSample, "throughput 0 at load"},
		{"negative throughput", with(6, func(s *Sample) { s.Throughput = -1 }), Options{}, ErrBadSample, "throughput -1 is negative"},
		{"V shape", curveSamples(100, 0.01, 1, func(l float64) float64 { return 1 + 2*math.Abs(l-0.5) }), Options{}, ErrNoStableRegion, "narrower than the smoothing window"},
		{"parabola", curveSamples(100, 0.01, 1, func(l float64) float64 { return 1 + 4*(l-0.5)*(l-0.5) }), Options{}, ErrNoStableRegion, "narrower than the smoothing window"},
		{"falling everywhere", curveSamples(100, 0.01, 1, func(l float64) float64 { return 1 + 0.3/l }), Options{}, ErrNoStableRegion, "falls over the whole ramp"},
		{"rising everywhere", curveSamples(100, 0.01, 1, func(l float64) float64 { return 1 + 3*l }), Options{}, ErrNoStableRegion, "rises over the whole ramp"},
		{"zero power", curveSamples(100, 0.01, 1, func(float64) float64 { return 0 }), Options{}, ErrNoStableRegion, "not positive"},
		{"window too large", good(), Options{Window: 2}, nil, "options: window 2: want a number in (0, 1]"},
		{"negative tolerance", good(), Options{Tolerance: -1}, nil, "options: tolerance -1"},
		{"NaN noise z", good(), Options{NoiseZ: math.NaN()}, nil, "options: noise z NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th, err := Fit(tc.samples, tc.opts)
			if err == nil {
				t.Fatalf("no error, thresholds %+v", th)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %q", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestFitAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	a := shape{th1: 0.3, th2: 0.8, fall: 2, fallPow: 2, rise: 1, risePow: 2}
	b := shape{th1: 0.2, th2: 0.6, fall: 1, fallPow: 2, rise: 2, risePow: 2}
	r := ramp{n: 100, lo: 0, hi: 1, noise: 0.01}
	got, err := FitAll(map[string][]Sample{"a": synth(a, r, rng), "b": synth(b, r, rng)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d types, want 2: %v", len(got), got)
	}
	checkNear(t, "a", got["a"], Thresholds{Th1: a.th1, Th2: a.th2}, 0.05)
	checkNear(t, "b", got["b"], Thresholds{Th1: b.th1, Th2: b.th2}, 0.05)

	bad := map[string][]Sample{"a": synth(a, r, rng), "tiny": synth(a, ramp{n: 4, lo: 0, hi: 1}, rng)}
	if _, err := FitAll(bad, Options{}); err == nil || !strings.Contains(err.Error(), `type "tiny": too few samples`) {
		t.Errorf("error %v does not name type tiny", err)
	}
	if _, err := FitAll(nil, Options{}); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("empty map: error %v", err)
	}
	if _, err := FitAll(bad, Options{Window: -1}); err == nil || !strings.HasPrefix(err.Error(), "options:") {
		t.Errorf("bad options: error %v", err)
	}
}

func BenchmarkFit(b *testing.B) {
	c := shape{th1: 0.3, th2: 0.8, fall: 2, fallPow: 2, rise: 1, risePow: 2}
	samples := synth(c, ramp{n: 1000, lo: 0, hi: 1, noise: 0.02}, rand.New(rand.NewPCG(1, 2)))
	for b.Loop() {
		if _, err := Fit(samples, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
