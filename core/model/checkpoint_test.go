package model

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTenthsMatchesDuration: Tenths writes what
// time.Duration.Round(100ms).String does, on hand-picked edges and on
// random durations of every magnitude, both signs.
func TestTenthsMatchesDuration(t *testing.T) {
	check := func(d int64) {
		t.Helper()
		if got, want := Tenths(d), time.Duration(d).Round(100*time.Millisecond).String(); got != want {
			t.Fatalf("Tenths(%d) = %q, time.Duration says %q", d, got, want)
		}
	}
	for _, d := range []int64{0, 1, 49_999_999, 50_000_000, 99_999_999, 100_000_000, 949_999_999, 950_000_000,
		999_999_999, 1e9, 59_950_000_000, 60e9, 3600e9, 3600e9 + 50e6, 86400e9 * 400} {
		check(d)
		check(-d)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		d := r.Int64N(int64(1) << (1 + i%62))
		if i%3 == 0 {
			d = -d
		}
		check(d)
	}
}

// TestCheckpointNote: the words of the note.
func TestCheckpointNote(t *testing.T) {
	for _, c := range []struct {
		steps, ago int64
		want       string
	}{
		{120, 62_340_000_000, "last checkpoint at step 120, 1m2.3s ago"},
		{0, 0, "last checkpoint at step 0, 0s ago"},
		{7, 250_000_000, "last checkpoint at step 7, 300ms ago"},
	} {
		if got := CheckpointNote(c.steps, c.ago); got != c.want {
			t.Errorf("CheckpointNote(%d, %d) = %q, want %q", c.steps, c.ago, got, c.want)
		}
	}
}
