package profile

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAdvance walks one job's progress reports through Advance, each
// expectation computed by hand: 100 steps in 10 s make 10 steps/s.
func TestAdvance(t *testing.T) {
	o, err := NewOnline(DefaultOnlineWeight)
	if err != nil {
		t.Fatal(err)
	}
	const s = int64(time.Second)
	at := func(sec int64, steps int64) Mark {
		return Mark{Attempt: 1, GPUs: 2, GPUType: "v100", Steps: steps, At: sec * s}
	}
	var m Mark
	for _, c := range []struct {
		name     string
		cur      Mark
		wantAt   int64
		wantRate float64
		wantErr  error
		samples  int64
	}{
		{"first report starts the mark", at(100, 10), 100 * s, 0, nil, 0},
		{"under MarkMinGap: the mark stays", at(105, 60), 100 * s, 0, nil, 0},
		{"10 s later: a sample of 100 steps in 10 s", at(110, 110), 110 * s, 10, nil, 1},
		{"a report not after the mark starts over", at(110, 120), 110 * s, 0, nil, 1},
		{"another GPU count starts over", Mark{Attempt: 1, GPUs: 4, GPUType: "v100", Steps: 500, At: 200 * s}, 200 * s, 0, nil, 1},
		{"a new generation starts over", Mark{Attempt: 1, Generation: 1, GPUs: 4, GPUType: "v100", Steps: 600, At: 300 * s}, 300 * s, 0, nil, 1},
		{"steps going back: ignored, no rate", Mark{Attempt: 1, Generation: 1, GPUs: 4, GPUType: "v100", Steps: 100, At: 320 * s}, 320 * s, 0, ErrSample, 1},
	} {
		next, err := o.Advance("CycleGAN", m, c.cur)
		if next.At != c.wantAt || next.Rate != c.wantRate || !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
			t.Errorf("%s: mark at %d rate %v err %v, want at %d rate %v err %v", c.name, next.At, next.Rate, err, c.wantAt, c.wantRate, c.wantErr)
		}
		if _, n := o.Rate("CycleGAN", "v100", 2); n != c.samples {
			t.Errorf("%s: %d samples, want %d", c.name, n, c.samples)
		}
		m = next
	}
}

// TestAdvanceKeepsRateOnIgnored: a sample Online ignores keeps the rate
// measured before in the same execution.
func TestAdvanceKeepsRateOnIgnored(t *testing.T) {
	o, _ := NewOnline(DefaultOnlineWeight)
	old := Mark{Attempt: 1, GPUs: 1, GPUType: "k80", Steps: 50, At: 1e9, Rate: 7}
	next, err := o.Advance("CycleGAN", old, Mark{Attempt: 1, GPUs: 1, GPUType: "k80", Steps: 40, At: 20e9})
	if !errors.Is(err, ErrSample) || next.Rate != 7 || next.Steps != 40 {
		t.Errorf("got %+v, %v; want the new mark with rate 7 and ErrSample", next, err)
	}
}

// TestSecondsMatchesDuration: seconds computes what time.Duration.Seconds
// does, bit for bit.
func TestSecondsMatchesDuration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 100000 {
		d := r.Int64N(1 << 50)
		if i%2 == 1 {
			d = r.Int64N(1e12)
		}
		if got, want := seconds(d), time.Duration(d).Seconds(); got != want {
			t.Fatalf("seconds(%d) = %v, time.Duration says %v", d, got, want)
		}
	}
}

// TestRebuildsDue: a new estimate rebuilds at once, a changed one after
// RebuildEvery, no change never.
func TestRebuildsDue(t *testing.T) {
	o, _ := NewOnline(DefaultOnlineWeight)
	var r Rebuilds
	const s = int64(time.Second)
	obs := func(steps float64) {
		if err := o.Observe(Sample{Model: "CycleGAN", GPUType: "v100", GPUs: 1, Steps: steps, Seconds: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if r.Due(o, 0) {
		t.Error("due with nothing learned")
	}
	obs(100)
	if !r.Due(o, 1*s) || r.Due(o, 2*s) {
		t.Error("a new estimate: due once, at once")
	}
	obs(120)
	for _, c := range []struct {
		now  int64
		want bool
	}{{10 * s, false}, {30 * s, false}, {31 * s, true}, {100 * s, false}} {
		if got := r.Due(o, c.now); got != c.want {
			t.Errorf("changed estimate at %d s: due %v, want %v", c.now/s, got, c.want)
		}
	}
}
