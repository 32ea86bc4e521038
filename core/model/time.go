package model

import (
	"math"
	"strconv"
)

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

// Horizon bounds the scheduler's clock and every duration it computes:
// 10^15 ms, about 31,700 years. Trace readers reject later times and longer
// durations, the simulator schedules nothing after it, and the sum of any
// two times or durations within it fits in a Time, so no arithmetic on
// them can overflow.
const Horizon Time = 1_000_000_000_000_000

// WorkTime returns how long work units take at rate units per second,
// rounded up to the millisecond: the one conversion from work and speed to
// time. It reports false when the work cannot be done within Horizon: a
// rate that is zero, negative or not a number, work that is not a number
// or infinite, or a duration beyond Horizon. Work of 0 or less takes no
// time at any rate.
func WorkTime(work, rate float64) (Time, bool) {
	switch {
	case math.IsNaN(work) || math.IsInf(work, 0):
		return 0, false
	case work <= 0:
		return 0, true
	case !(rate > 0) || math.IsInf(rate, 1):
		// An infinite rate would make finite work take no time, which no
		// profile means; treat it like a missing speed.
		return 0, false
	}
	ms := math.Ceil(work / rate * 1000)
	if !(ms <= float64(Horizon)) {
		return 0, false
	}
	return Time(ms), true
}
