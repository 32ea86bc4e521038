package forecast

import (
	"fmt"
	"math"
	"time"
)

// Kind says where a job's length comes from (docs/ETA.md).
type Kind string

// Length kinds, best first.
const (
	KindSteps       Kind = "steps"
	KindTimeLimit   Kind = "time-limit"
	KindUserHistory Kind = "user-history"
	KindHistory     Kind = "history"
	KindDefault     Kind = "default"
)

// Kinds lists every kind, best first.
func Kinds() []Kind {
	return []Kind{KindSteps, KindTimeLimit, KindUserHistory, KindHistory, KindDefault}
}

// Speed says where the speed of a KindSteps length comes from.
type Speed string

// Speed sources.
const (
	// SpeedMeasured is the job's own steps/s in its current attempt.
	SpeedMeasured Speed = "measured"
	// SpeedMatrix is its model's steps/s in the throughput matrix (online
	// profiles laid over the pre-run matrix).
	SpeedMatrix Speed = "matrix"
)

// Class groups lengths whose errors are alike: the kind, and for steps
// the source of the speed. The forecast learns a spread per class.
type Class string

// Length classes.
const (
	ClassMeasured    Class = "steps/measured"
	ClassMatrix      Class = "steps/matrix"
	ClassTimeLimit   Class = Class(KindTimeLimit)
	ClassUserHistory Class = Class(KindUserHistory)
	ClassHistory     Class = Class(KindHistory)
	ClassDefault     Class = Class(KindDefault)
)

// Classes lists every class.
func Classes() []Class {
	return []Class{ClassMeasured, ClassMatrix, ClassTimeLimit, ClassUserHistory, ClassHistory, ClassDefault}
}

// DefaultLength is a job's length when nothing is known about it.
const DefaultLength = time.Hour

// minRemaining is the least time left to a running job: one whose
// estimate has run out is taken to end soon, not in the past.
const minRemaining = time.Second

// Facts are what the service knows about one active job.
type Facts struct {
	// Running: the job runs now, for Elapsed in its current attempt.
	Running bool
	Elapsed time.Duration
	// TotalSteps is its declared total (0: unknown) and DoneSteps the
	// steps behind it: its latest progress when running, the checkpoint
	// it resumes from when waiting.
	TotalSteps, DoneSteps int64
	// MeasuredRate is its own steps/s in this attempt (0: none), from
	// MeasuredReports progress reports.
	MeasuredRate    float64
	MeasuredReports int
	// MatrixRate is its model's steps/s in the throughput matrix on its
	// current GPUs when running (0: unknown); for a waiting job
	// MatrixKnown says whether the matrix has its model at all (the
	// simulator then derives its speed on any GPUs).
	MatrixRate  float64
	MatrixKnown bool
	// TimeLimit is its time limit (0: none).
	TimeLimit time.Duration
	// UserMedian and AllMedian are the median run times of its user's and
	// of all recent successful jobs (0: no history), over UserRuns and
	// AllRuns jobs.
	UserMedian, AllMedian time.Duration
	UserRuns, AllRuns     int
}

// Length is a job's length as the forecast takes it.
type Length struct {
	Kind  Kind
	Speed Speed // for KindSteps
	// Remaining is the time left on the job's current GPUs for a running
	// job (at the speed it has there), the job's whole length for a
	// waiting job whose length is a time (not KindSteps with a matrix
	// speed).
	Remaining time.Duration
	// Steps are the steps left for a waiting job that the simulator runs
	// at its matrix speed (KindSteps, SpeedMatrix); 0 otherwise.
	Steps float64
	// Detail says it in words, for the forecast's basis.
	Detail string
}

// Class returns the length's class.
func (l Length) Class() Class {
	if l.Kind == KindSteps {
		return Class(string(KindSteps) + "/" + string(l.Speed))
	}
	return Class(l.Kind)
}

// Estimate returns the best length the facts give (the order of Kinds).
func Estimate(f Facts) Length {
	if l, ok := stepsLength(f); ok {
		return capToLimit(l, f)
	}
	switch {
	case f.TimeLimit > 0:
		rem := f.TimeLimit - f.Elapsed
		return Length{Kind: KindTimeLimit, Remaining: max(rem, minRemaining),
			Detail: fmt.Sprintf("its time limit of %s", f.TimeLimit)}
	case f.UserMedian > 0:
		return historyLength(KindUserHistory, f.UserMedian, f, fmt.Sprintf("the median run time of its user's last %d successful jobs", f.UserRuns))
	case f.AllMedian > 0:
		return historyLength(KindHistory, f.AllMedian, f, fmt.Sprintf("the median run time of the last %d successful jobs", f.AllRuns))
	}
	return historyLength(KindDefault, DefaultLength, f, "nothing is known of its length: "+DefaultLength.String()+" assumed")
}

// stepsLength is the length from the job's steps and a speed, if both are
// known.
func stepsLength(f Facts) (Length, bool) {
	if f.TotalSteps <= 0 {
		return Length{}, false
	}
	left := float64(max(f.TotalSteps-f.DoneSteps, 0))
	switch {
	case f.Running && f.MeasuredRate > 0:
		return Length{Kind: KindSteps, Speed: SpeedMeasured, Remaining: seconds(left / f.MeasuredRate),
			Detail: fmt.Sprintf("%.0f steps left at %.3g steps/s measured from %d progress reports", left, f.MeasuredRate, f.MeasuredReports)}, true
	case f.Running && f.MatrixRate > 0:
		return Length{Kind: KindSteps, Speed: SpeedMatrix, Remaining: seconds(left / f.MatrixRate),
			Detail: fmt.Sprintf("%.0f steps left at %.3g steps/s from the throughput matrix", left, f.MatrixRate)}, true
	case !f.Running && f.MatrixKnown:
		return Length{Kind: KindSteps, Speed: SpeedMatrix, Steps: left,
			Detail: fmt.Sprintf("%.0f steps left at its model's speed in the throughput matrix", left)}, true
	}
	return Length{}, false
}

// capToLimit keeps a running job's steps length within its time limit.
// (A waiting job's steps length depends on the GPUs it will get; the
// simulator does not cap it.)
func capToLimit(l Length, f Facts) Length {
	if f.TimeLimit <= 0 || !f.Running {
		return l
	}
	if rem := f.TimeLimit - f.Elapsed; l.Remaining > rem {
		l.Remaining = max(rem, minRemaining)
		l.Detail += fmt.Sprintf(", cut to its time limit of %s", f.TimeLimit)
	}
	return l
}

// historyLength is a length of typical run time d: a running job has
// d − Elapsed left, at least a tenth of d (it has outlived the typical
// job; it is expected to end, not to have ended).
func historyLength(k Kind, d time.Duration, f Facts, detail string) Length {
	rem := d
	if f.Running {
		rem = max(d-f.Elapsed, d/10, minRemaining)
	}
	if f.TimeLimit > 0 {
		rem = min(rem, max(f.TimeLimit-f.Elapsed, minRemaining))
	}
	return Length{Kind: k, Remaining: rem, Detail: detail}
}

// seconds turns a finite non-negative number of seconds into a duration,
// saturating at about 290 years.
func seconds(s float64) time.Duration {
	if !(s >= 0) {
		return 0
	}
	if s >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}
