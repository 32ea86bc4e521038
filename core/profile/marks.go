package profile

import "errors"

// Progress marks (docs/PROFILES.md, "Online profiles"): a shell learns
// throughputs from the progress reports of the jobs it runs. Two reports
// of one execution of a job (same attempt, generation, GPU count and GPU
// type) at least MarkMinGap apart give a Sample; the shell keeps each
// job's latest Mark, and Rebuilds paces the merged matrices it installs.
// Times are Unix nanoseconds, given by the shell.
const (
	// MarkMinGap is the shortest interval between the two reports of a
	// sample, in nanoseconds: shorter ones are dominated by step
	// granularity.
	MarkMinGap int64 = 10e9
	// RebuildEvery bounds how often changed estimates rebuild the merged
	// matrix, in nanoseconds; a new (model, GPU type, GPU count) rebuilds
	// it at once.
	RebuildEvery int64 = 30e9
)

// Mark is a progress report of one execution of a job.
type Mark struct {
	Attempt, Generation, GPUs int
	GPUType                   string
	Steps                     int64
	// At is when it was reported (Unix nanoseconds).
	At int64
	// Rate is the latest steps/s measured in this execution (0: none yet).
	Rate float64
}

// same reports whether m and o are reports of one execution.
func (m Mark) same(o Mark) bool {
	return m.Attempt == o.Attempt && m.Generation == o.Generation && m.GPUs == o.GPUs && m.GPUType == o.GPUType
}

// Advance learns from report cur of a job of type model whose latest mark
// is old (the zero Mark: none) and returns the job's mark from then on: cur
// starts over for a new execution (or a report not after old); old stays
// while cur is under MarkMinGap after it; otherwise the two make a sample
// and cur carries its rate. An ignored sample (ErrSample) keeps old's rate,
// a failed one none; either error is returned for the shell to log. cur's
// GPUType must not be empty.
func (o *Online) Advance(model string, old, cur Mark) (Mark, error) {
	cur.Rate = 0
	if !cur.same(old) || cur.At <= old.At {
		return cur, nil
	}
	d := cur.At - old.At
	if d < MarkMinGap {
		return old, nil
	}
	smp := Sample{Model: model, GPUType: cur.GPUType, GPUs: cur.GPUs, Steps: float64(cur.Steps - old.Steps), Seconds: seconds(d)}
	err := o.Observe(smp)
	switch {
	case err == nil:
		cur.Rate = smp.Steps / smp.Seconds
	case errors.Is(err, ErrSample):
		cur.Rate = old.Rate
	}
	return cur, err
}

// seconds is d nanoseconds in seconds, computed as time.Duration.Seconds
// does.
func seconds(d int64) float64 {
	const second = 1e9
	return float64(d/second) + float64(d%second)/1e9
}

// Rebuilds paces the rebuilds of a shell's merged matrix: at once for a
// new estimate, at most every RebuildEvery for changed ones.
type Rebuilds struct {
	// built is the online version of the shell's matrix, builtLen its
	// number of estimates and builtAt when it was made.
	built    uint64
	builtLen int
	builtAt  int64
}

// Built records that the shell's matrix holds o's estimates as of now.
func (r *Rebuilds) Built(o *Online, now int64) {
	r.built, r.builtLen, r.builtAt = o.Version(), o.Len(), now
}

// Due reports whether o changed enough since the shell's matrix was built
// that it should be merged again at now; when it should, it records the
// rebuild (Built).
func (r *Rebuilds) Due(o *Online, now int64) bool {
	if o.Version() == r.built || o.Len() == r.builtLen && now-r.builtAt < RebuildEvery {
		return false
	}
	r.Built(o, now)
	return true
}
