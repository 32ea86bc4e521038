package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFitResult: on a noise-free ramp the fit reports every usable sample,
// a scatter below 1 % (the residuals of the local lines at the curve's bends) and the flat level of energy per unit of work; with 5 %
// noise the scatter estimate is near 5 %.
func TestFitResult(t *testing.T) {
	c := shape{th1: 0.3, th2: 0.8, fall: 1, fallPow: 2, rise: 1, risePow: 2}
	r, err := FitResult(synth(c, ramp{n: 101, lo: 0, hi: 1}, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != 100 {
		t.Errorf("samples %d, want 100 (the idle reading has no energy per unit of work)", r.Samples)
	}
	if r.Noise > 0.01 { // only the curve's bends leave residuals
		t.Errorf("noise %v on a noise-free ramp", r.Noise)
	}
	if math.Abs(r.Level-flatEnergy) > 1e-6 {
		t.Errorf("level %v, want the flat level %v", r.Level, flatEnergy)
	}
	th, err := Fit(synth(c, ramp{n: 101, lo: 0, hi: 1}, nil), Options{})
	if err != nil || th != r.Thresholds {
		t.Errorf("Fit = %v, %v; FitResult's thresholds %v", th, err, r.Thresholds)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	r, err = FitResult(synth(c, ramp{n: 400, lo: 0, hi: 1, noise: 0.05}, rng), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Noise < 0.03 || r.Noise > 0.07 {
		t.Errorf("noise %v with 5 %% power noise", r.Noise)
	}
	if _, err := FitResult(nil, Options{}); err == nil {
		t.Error("no samples: no error")
	}
}
