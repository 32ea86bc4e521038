package model

import "strconv"

// Time is a point on the scheduler's clock in milliseconds. In the
// simulator it counts from the trace's first submission; in the service it is
// Unix time. Durations use the same type.
type Time int64

// Second is one second as a Time.
const Second Time = 1000

// Minute is one minute as a Time.
const Minute = 60 * Second

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1000 }

// SecondsString formats t in seconds with at most millisecond precision and
// no trailing zeros ("12", "12.5", "0.001"), the form used in the event log.
func (t Time) SecondsString() string {
	neg := t < 0
	if neg {
		t = -t
	}
	s := strconv.FormatInt(int64(t/Second), 10)
	if ms := int64(t % Second); ms != 0 {
		frac := strconv.FormatInt(ms+1000, 10)[1:] // zero-padded to three digits
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		s += "." + frac
	}
	if neg {
		s = "-" + s
	}
	return s
}

// FromSeconds converts seconds to a Time, rounding to the nearest millisecond.
func FromSeconds(s float64) Time {
	if s < 0 {
		return -Time(-s*1000 + 0.5)
	}
	return Time(s*1000 + 0.5)
}
