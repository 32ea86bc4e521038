package model

import "strconv"

// CheckpointNote is how every shell describes a job's latest checkpoint in
// the reason of a stop (a preemption, a lost node): the step it was
// written at, and how long before now, in nanoseconds, rounded to 100 ms
// and written as time.Duration writes it ("last checkpoint at step 120,
// 1m2.3s ago").
func CheckpointNote(steps, agoNs int64) string {
	return "last checkpoint at step " + strconv.FormatInt(steps, 10) + ", " + Tenths(agoNs) + " ago"
}

// Tenths writes d nanoseconds rounded to 100 ms (halves away from zero)
// as time.Duration's Round and String do: "0s", "300ms", "4.5s", "1m0s",
// "2h3m4.5s". A duration within 50 ms of the int64 limits (292 years)
// is out of its domain.
func Tenths(d int64) string {
	const tenth = 100_000_000 // ns
	r := d % tenth
	if r < 0 {
		r = -r
	}
	switch {
	case r+r < tenth && d < 0:
		d += r
	case r+r < tenth:
		d -= r
	case d < 0:
		d -= tenth - r
	default:
		d += tenth - r
	}
	neg := d < 0
	ms := d / 1_000_000
	if neg {
		ms = -ms
	}
	var s string
	if ms < 1000 {
		s = strconv.FormatInt(ms, 10) + "ms"
		if ms == 0 {
			return "0s"
		}
	} else {
		s = strconv.FormatInt(ms/1000%60, 10)
		if t := ms % 1000 / 100; t != 0 {
			s += "." + strconv.FormatInt(t, 10)
		}
		s += "s"
		if m := ms / 60_000; m > 0 {
			s = strconv.FormatInt(m%60, 10) + "m" + s
			if h := m / 60; h > 0 {
				s = strconv.FormatInt(h, 10) + "h" + s
			}
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}
