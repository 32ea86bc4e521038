package calibrate

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// shape is a synthetic energy-per-work curve with known breakpoints, shaped
// as seed 002 describes it (claim 5, figure 3): high at low load, flat at
// level 1 between th1 and th2, rising towards full load.
type shape struct {
	th1, th2 float64
	// fall is how far above the flat level the curve starts; fallPow the
	// exponent of the falling part: 1 gives a kink at th1, 2 or more a
	// smooth junction ("first falling sharply, then slowly").
	fall, fallPow float64
	// hyper makes the falling part a base power spread over little work:
	// e = 1 + fall·(th1/load)·((th1−load)/th1)^fallPow, infinite at load 0.
	hyper bool
	// rise is how far above the flat level the curve ends at full load;
	// risePow the exponent of the rising part.
	rise, risePow float64
}

// energy returns the curve's energy per unit of work at load l, relative to
// the flat level.
func (c shape) energy(l float64) float64 {
	switch {
	case l < c.th1:
		f := c.fall * math.Pow((c.th1-l)/c.th1, c.fallPow)
		if c.hyper {
			f *= c.th1 / l
		}
		return 1 + f
	case l > c.th2:
		return 1 + c.rise*math.Pow((l-c.th2)/(1-c.th2), c.risePow)
	}
	return 1
}

// idlePower is the power reading at load 0: the base power of a hyper
// curve (the limit of e × throughput at load 0), idlePowerW otherwise.
func (c shape) idlePower() float64 {
	if c.hyper {
		return flatEnergy * peakThroughput * c.fall * c.th1
	}
	return idlePowerW
}

// ramp is how a synthetic ramp is sampled.
type ramp struct {
	n      int     // number of samples
	lo, hi float64 // load range
	noise  float64 // relative standard deviation of the power readings
	jitter float64 // random shift of each load, as a fraction of the spacing
}

// Physical scale of the synthetic device: throughput at full load and the
// energy per unit of work of the flat region.
const (
	peakThroughput = 1200.0 // samples/s
	flatEnergy     = 0.25   // J/sample: 300 W at full load on the flat level
	idlePowerW     = 60.0   // W, the reading at load 0, where no work is done
)

// synth samples the curve c along the ramp r, drawing noise and jitter
// from rng (which may be nil when the ramp has neither). Power
// is energy per unit of work times throughput, and throughput is
// proportional to load; a sample at load 0 is an idle reading.
func synth(c shape, r ramp, rng *rand.Rand) []Sample {
	out := make([]Sample, 0, r.n)
	step := (r.hi - r.lo) / float64(r.n-1)
	for k := range r.n {
		l := r.lo + step*float64(k)
		if r.jitter > 0 && k > 0 && k < r.n-1 {
			l += r.jitter * step * (rng.Float64() - 0.5)
		}
		if l <= 0 {
			out = append(out, Sample{Load: 0, PowerW: c.idlePower()})
			continue
		}
		tp := peakThroughput * l
		p := flatEnergy * c.energy(l) * tp
		if r.noise > 0 {
			p *= 1 + r.noise*rng.NormFloat64()
		}
		out = append(out, Sample{Load: l, PowerW: max(p, 0), Throughput: tp})
	}
	return out
}

// rampTypes are the algorithm types of testdata/calibrate/ramp.csv with
// their curves; rampFile writes the file.
func rampTypes() []struct {
	typ string
	c   shape
} {
	return []struct {
		typ string
		c   shape
	}{
		// Base power 90 W at load 0 (300 W × fall × th1).
		{"resnet", shape{th1: 0.3, th2: 0.8, fall: 1, fallPow: 2, hyper: true, rise: 1, risePow: 2}},
		{"bert", shape{th1: 0.25, th2: 0.7, fall: 1.2, fallPow: 2, hyper: true, rise: 1.5, risePow: 2}},
	}
}

// writeRampFile writes the synthetic ramp file: 101 samples per type with
// 1 % power noise from a fixed seed.
func writeRampFile(w io.Writer) {
	rng := rand.New(rand.NewPCG(2, 2))
	fmt.Fprintln(w, "# Synthetic calibration ramp, written by writeRampFile in calibrate/synth_test.go.")
	fmt.Fprintln(w, "# resnet: th1 0.30, th2 0.80; bert: th1 0.25, th2 0.70 (1 % power noise).")
	fmt.Fprintln(w, "type,load,power_w,throughput")
	for _, t := range rampTypes() {
		for _, s := range synth(t.c, ramp{n: 101, lo: 0, hi: 1, noise: 0.01}, rng) {
			fmt.Fprintf(w, "%s,%.2f,%.1f,%.1f\n", t.typ, s.Load, s.PowerW, s.Throughput)
		}
	}
}

// TestRampFile checks that testdata/calibrate/ramp.csv is the synthetic ramp
// and that it calibrates to its curves' breakpoints. Run with
// GPUSCHED_UPDATE_TESTDATA=1 to rewrite the file.
func TestRampFile(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "calibrate", "ramp.csv")
	var want bytes.Buffer
	writeRampFile(&want)
	if os.Getenv("GPUSCHED_UPDATE_TESTDATA") == "1" {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s differs from writeRampFile's output: rerun with GPUSCHED_UPDATE_TESTDATA=1", path)
	}
	byType, err := ParseCSV(path, bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	th, err := FitAll(byType, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range rampTypes() {
		checkNear(t, rt.typ, th[rt.typ], Thresholds{Th1: rt.c.th1, Th2: rt.c.th2}, 0.05)
	}
}

// checkNear fails the test unless got is within tol of want.
func checkNear(t *testing.T, what string, got, want Thresholds, tol float64) {
	t.Helper()
	if math.Abs(got.Th1-want.Th1) > tol || math.Abs(got.Th2-want.Th2) > tol {
		t.Errorf("%s: thresholds %.3f, %.3f; want %.2f, %.2f ± %.2f", what, got.Th1, got.Th2, want.Th1, want.Th2, tol)
	}
}
